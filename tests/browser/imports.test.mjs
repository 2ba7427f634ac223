// Other tools' result files opened as they are (tests/imports: each tool run against the
// simulator): every format renders the sections it has data for, says why the others are
// empty, names the tool; one compares with an infermeter report of the same simulator and
// load; and each format cut short or of an unknown version gets the error panel.
// Run: node --test tests/browser/imports.test.mjs
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';

import { assertClean, browser, reportUrl, server, useBrowser } from './harness.mjs';
import { chartsDrawn, newPage } from './support.mjs';

useBrowser();

const FIX = 'fixtures/imports';
const here = (path) => new URL(`../imports/${path}`, import.meta.url).pathname;

/// The page for `main` with `more` compared (or joined, for one sweep's files).
function url(main, more = [], extra = '') {
  return reportUrl(`${FIX}/${main}`, more.map((m) => `&compare=${encodeURIComponent(`${FIX}/${m}`)}`).join('') + extra);
}

/// Opens `address`, waits for the charts, and checks what every imported page shows: the tool
/// in the header, the notes on what the files lack, and no error.
async function openImported(address, tool) {
  const { page, problems } = await newPage(browser);
  await page.goto(address);
  await page.getByTestId('section-header').waitFor();
  await chartsDrawn(page);
  assert.equal(await page.getByTestId('error-panel').count(), 0);
  assert.match(await page.getByTestId('report-title').innerText(), new RegExp(`measured by ${tool}`, 'i'));
  assert.match(await page.getByTestId('import-notes').innerText(), new RegExp(tool));
  return { page, problems };
}

/// The texts of the absent notes and the goodput section's note.
async function notes(page) {
  return {
    absent: await page.getByTestId('absent-note').allInnerTexts(),
    goodput: await page.getByTestId('goodput-absent').allInnerTexts(),
    power: await page.getByTestId('power-missing-note').allInnerTexts(),
  };
}

const FORMATS = [
  {
    tool: 'AIPerf',
    main: 'aiperf/c1/profile_export_aiperf.json',
    more: ['aiperf/c4/profile_export_aiperf.json'],
    // The records beside each summary are fetched with it: goodput is there.
    goodput: true,
  },
  { tool: 'guidellm', main: 'guidellm/benchmarks.json', more: [], goodput: true },
  {
    tool: 'inference-perf',
    main: 'inference-perf/stage_0_lifecycle_metrics.json',
    more: ['inference-perf/stage_1_lifecycle_metrics.json'],
    goodput: false,
  },
  { tool: 'vLLM bench serve', main: 'vllm/c1.json', more: ['vllm/c4.json'], goodput: true },
];

describe('imported result files', () => {
  for (const format of FORMATS) {
    test(`${format.tool}: renders what it holds and says what it lacks`, { skip: !existsSync(here(format.main)) && 'no fixture' }, async () => {
      const { page, problems } = await openImported(url(format.main, format.more), format.tool);
      // One report of the sweep's two loads, not a comparison of two.
      assert.equal(await page.getByText('Compared with:').count(), 0);
      assert.match(await page.getByTestId('section-header').innerText(), /Measured by/);
      // The latency charts of the levels measured are drawn.
      assert.ok(await page.locator('[data-testid="section-fastest"] [data-chart-id]').count() > 0);
      const n = await notes(page);
      assert.ok(n.absent.some((t) => /power/i.test(t)), `power's absence explained: ${n.absent}`);
      assert.ok(n.power.every((t) => t.includes('cannot be shown')) && n.power.length === 1, `${n.power}`);
      if (format.goodput) {
        assert.deepEqual(n.goodput, [], 'goodput computed from the requests');
        await page.getByTestId('goodput-controls').waitFor();
      } else {
        assert.equal(n.goodput.length, 1);
        assert.match(n.goodput[0], /per-request/);
      }
      // The methodology names the tool's definitions.
      assert.match(await page.getByTestId('pooling-table').innerText(), new RegExp(format.tool.split(' ')[0]));
      assertClean(problems);
    });
  }

  test('dropping an AIPerf summary with its records opens one report with goodput', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    const files = ['aiperf/c4/profile_export_aiperf.json', 'aiperf/c4/profile_export.jsonl']
      .map((f) => ({ name: f.split('/').pop(), text: readFileSync(here(f), 'utf8') }));
    const transfer = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
      return dt;
    }, files);
    await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByTestId('section-header').waitFor();
    await chartsDrawn(page);
    assert.match(await page.getByTestId('report-title').innerText(), /measured by AIPerf/);
    await page.getByTestId('goodput-controls').waitFor();
    assertClean(problems);
  });

  // The same simulator (H100 profile) and loads measured by infermeter and by AIPerf. Known
  // differences of definition: AIPerf's prompts are 64 tokens of its tokenizer, not of the
  // simulator's, so TTFT differs by the prefill of a few tokens; both time E2E from the send to
  // the last token. The medians at each load agree within 20% (E2E) and 30% (TTFT), the run to
  // run spread of two clients on two shared cores.
  test('an AIPerf sweep compared with an infermeter report of the same simulator and loads', async () => {
    const { page, problems } = await openImported(
      url('aiperf/c1/profile_export_aiperf.json', ['aiperf/c4/profile_export_aiperf.json', 'infermeter-sim.json'], '&stat=p50'),
      'AIPerf',
    );
    assert.equal(await page.getByText('Compared with:').count(), 1);
    await page.getByTestId('measurements-fold').locator('summary').click();
    // Both reports' tables, once drawn: the compared report's arrives after the first.
    await page.getByTestId('measurements-table').nth(1).waitFor();
    const tables = await page.getByTestId('measurements-table').evaluateAll((all) => all.map((t) => {
      const head = [...t.querySelectorAll('thead th')].map((th) => th.innerText);
      return [...t.querySelectorAll('tbody tr')].map((tr) => {
        const cells = [...tr.children].map((c) => c.innerText);
        return Object.fromEntries(head.map((h, i) => [h, cells[i]]));
      });
    }));
    assert.equal(tables.length, 2);
    const [aiperf, ours] = tables;
    for (const load of ['single user', '4 concurrent']) {
      const a = aiperf.find((r) => r.Load.startsWith(load));
      const o = ours.find((r) => r.Load.startsWith(load));
      assert.ok(a && o, `both measured ${load}`);
      const close = (column, within) => {
        const [x, y] = [parseFloat(a[column]), parseFloat(o[column])];
        assert.ok(Math.abs(x - y) <= within * Math.max(x, y), `${load} ${column}: AIPerf ${x}, infermeter ${y}`);
      };
      close('End-to-end latency (s)', 0.2);
      close('TTFT (s)', 0.3);
    }
    assertClean(problems);
  });
});

describe('malformed result files', () => {
  for (const [file, format, what] of [
    ['aiperf-truncated.json', 'AIPerf summary', /cut short/],
    ['aiperf-unknown-schema.json', 'AIPerf', /export schema 2\.0/],
    ['guidellm-truncated.json', 'guidellm benchmarks.json', /cut short/],
    ['guidellm-unknown-version.json', 'guidellm', /report format 3/],
    ['inference-perf-truncated.json', 'inference-perf lifecycle metrics report', /cut short/],
    ['inference-perf-summary.json', 'inference-perf lifecycle metrics report', /stage_N_lifecycle_metrics/],
    ['vllm-truncated.json', 'vLLM bench serve result', /cut short/],
    ['vllm-old.json', 'vLLM bench serve result', /has no `failed`/],
  ]) {
    test(`${file}: the panel names the file, the format and what is wrong`, async () => {
      const { page, problems } = await newPage(browser);
      await page.goto(reportUrl(`fixtures/malformed/${file}`));
      await page.getByTestId('error-panel').waitFor({ timeout: 10000 });
      const text = await page.getByTestId('error-panel').innerText();
      assert.ok(text.includes(`fixtures/malformed/${file}`), text);
      const detail = await page.getByTestId('error-detail').innerText();
      assert.ok(detail.includes(format), detail);
      assert.match(detail, what);
      assert.equal(await page.locator('[data-testid^="section-"]').count(), 0);
      assertClean(problems);
    });
  }
});

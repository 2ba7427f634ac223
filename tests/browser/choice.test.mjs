// Browser tests of the "Which configuration?" section: the bundled comparison (four simulated
// Llama-3.1-8B deployments) renders with its frontier, tooltips and ranking; the address
// carries the section's state; the ranking re-ranks live as the SLO moves and agrees cell for
// cell with `infermeter summary`; a report of one level gets a note; markup stays text; the
// main report is drawn before the compared ones are read.
// Run: node --test tests/browser/ (after scripts/build-viewer.sh and a debug build of the
// collector, as scripts/test.sh runs them)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { assertClean, browser, changedFrom, server, useBrowser } from './harness.mjs';
import { chartSettled, chartsDrawn, newPage, pointPosition, urlMatches } from './support.mjs';

const root = new URL('../../', import.meta.url).pathname;
const INDEX = JSON.parse(readFileSync(join(root, 'data/index.json'), 'utf8'));
const COMPARISON = INDEX.comparisons[0];
const CHART = 'choice.frontier';
const XSS = '<img src=x onerror=alert(1)>';
const COLUMNS = 12;

useBrowser();

/// The address of the bundled comparison, with `extra` query.
function comparisonUrl(extra = '') {
  const [main, ...rest] = COMPARISON.paths;
  const compare = rest.map((p) => `&compare=${encodeURIComponent(`data/${p}`)}`).join('');
  return `${server.url}?report=${encodeURIComponent(`data/${main}`)}${compare}${extra}`;
}

/// The ranking table's rows, then those listed apart, each a list of its cells' texts.
function rankingRows(page) {
  return page.locator('[data-testid="choice-ranking"] tbody tr, [data-testid="choice-apart"] tbody tr').evaluateAll(
    (rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
}

/// The series names of the Pareto chart as drawn.
function chartSeries(page) {
  return page.evaluate((id) => {
    const host = document.querySelector(`[data-chart-id="${id}"] .chart-canvas`);
    return window.echarts.getInstanceByDom(host).getOption().series.map((s) => s.name);
  }, CHART);
}

async function openComparison(page, extra = '') {
  await page.goto(comparisonUrl(extra));
  await chartsDrawn(page);
  await page.getByTestId('section-choice').scrollIntoViewIfNeeded();
}

/// `infermeter summary` of the comparison with `flags`: its ranking tables by scenario name,
/// each a list of rows of cells (columns two spaces or more apart, as it prints them).
function summaryTables(flags) {
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache/infermeter/target');
  const build = spawnSync('cargo', ['build', '--locked', '-q', '-p', 'infermeter'], { stdio: 'inherit' });
  assert.equal(build.status, 0, 'cargo build -p infermeter');
  const files = COMPARISON.paths.map((p) => join(root, 'data', p));
  const run = spawnSync(join(targetDir, 'debug/infermeter'), ['summary', ...files, ...flags], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const tables = new Map();
  let scenario = null;
  for (const line of run.stdout.split('\n')) {
    const heading = line.match(/^(.+) \(\w+\): cheapest meeting the SLO$/);
    if (heading) {
      scenario = heading[1];
      tables.set(scenario, []);
    } else if (scenario && line.startsWith('  ')) {
      // Rows only: not the column headings, the heading of the rows listed apart, the
      // statements or the frontier.
      const cells = line.trim().split(/ {2,}/);
      if (cells.length === COLUMNS && cells[0] !== 'Rank') tables.get(scenario).push(cells);
    } else {
      scenario = null;
    }
  }
  return tables;
}

describe('which configuration', () => {
  test('the landing page opens the bundled comparison, ranked, with its frontier', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    const link = page.getByTestId('comparison-link').first();
    assert.equal(await link.innerText(), COMPARISON.title);
    await link.click();
    await chartsDrawn(page);
    const section = page.getByTestId('section-choice');
    await section.scrollIntoViewIfNeeded();
    const names = await chartSeries(page);
    // One curve per configuration, then the frontier over them.
    for (const label of ['H100', 'H200', 'B200', '2x H100']) {
      assert.ok(names.some((n) => n.startsWith(`${label} · `)), `${label} in ${names}`);
    }
    assert.ok(names.includes('Pareto frontier'), names.join(', '));
    const rows = await rankingRows(page);
    assert.equal(rows.length, COMPARISON.paths.length);
    // Each configuration was measured to its limit (searched under the SLO the reports record):
    // every row is ranked, none is a bound listed apart.
    assert.ok(rows.every((r) => /^\d+$/.test(r[0])), rows.map((r) => r.slice(0, 3).join(' ')).join('; '));
    assert.deepEqual(rows.map((r) => r[0]).filter((r) => r !== '—'),
      rows.map((_, i) => String(i + 1)).slice(0, rows.filter((r) => r[0] !== '—').length));
    assert.match(await page.getByTestId('choice-assumptions').innerText(), /H100: \$[\d.]+ per GPU-hour \(default: .*read \d{4}-\d{2}-\d{2}; GPU rental only\)/);
    assertClean(problems);
  });

  test('a comparison draws the main report first, says the others are being read, then shows them all', async () => {
    const { page, problems } = await newPage(browser);
    // What the page showed while the compared reports were read, recorded as it happened.
    await page.addInitScript(() => {
      globalThis.__pending = [];
      new MutationObserver(() => {
        const note = document.querySelector('[data-testid="compared-pending"]');
        if (note && !globalThis.__pending.length) {
          globalThis.__pending.push({
            note: note.textContent,
            role: note.getAttribute('role'),
            busy: document.querySelector('[data-testid="report"]').getAttribute('aria-busy'),
            compared: document.body.innerText.includes('Compared with:'),
          });
        }
      }).observe(document, { subtree: true, childList: true });
    });
    await page.goto(comparisonUrl());
    await chartsDrawn(page);
    const [seen] = await page.evaluate(() => globalThis.__pending);
    assert.deepEqual(seen, {
      note: `Reading the ${COMPARISON.paths.length - 1} compared reports…`,
      role: 'status',
      busy: 'true',
      compared: false,
    });
    assert.equal(await page.getByTestId('compared-pending').count(), 0);
    const [drawn, read] = await page.evaluate(() => ['first-chart-drawn', 'compared-read']
      .map((m) => performance.getEntriesByName(`infermeter:${m}`)[0].startTime));
    assert.ok(drawn < read, `the main report's first chart (${drawn} ms) before the compared reports were read (${read} ms)`);
    const names = await chartSeries(page);
    for (const label of ['H100', 'H200', 'B200', '2x H100']) {
      assert.ok(names.some((n) => n.startsWith(`${label} · `)), `${label} in ${names}`);
    }
    assert.equal((await rankingRows(page)).length, COMPARISON.paths.length);
    assertClean(problems);
  });

  test('hovering a point names its configuration, scenario, load and figures', async () => {
    const { page, problems } = await newPage(browser);
    await openComparison(page);
    // The section is taller than the window (the ranking, the rows listed apart, what the data
    // supports): bring the chart itself into view before pointing at it.
    await page.locator(`[data-chart-id="${CHART}"]`).scrollIntoViewIfNeeded();
    await chartSettled(page, CHART);
    const p = await pointPosition(page, CHART, 0, 1);
    await page.mouse.move(p.x - 8, p.y - 8);
    await page.mouse.move(p.x, p.y, { steps: 4 });
    const tip = page.locator(`[data-chart-id="${CHART}"] .chart-canvas > div:not(:first-child)`);
    await tip.waitFor({ state: 'visible' });
    const text = await tip.innerText();
    const [series] = await chartSeries(page);
    assert.ok(text.includes(series), `"${text}" names ${series}`);
    assert.match(text, /\d+ concurrent users/);
    assert.match(text, /Interactivity: [\d.]+ tok\/s per user/);
    assert.match(text, /Throughput: [\d.]+ tok\/s per GPU/);
    assert.match(text, /Cost: \$[\d.]+ per M output tokens/);
    assertClean(problems);
  });

  test('an address with the section\'s state reproduces it, and the controls write it', async () => {
    const { page, problems } = await newPage(browser);
    await openComparison(page, '&choice.scenario=rag_qa&choice.y=cost&choice.at=40&choice.users=500&price.H100=2&slo.ttft=2');
    assert.equal(await page.getByTestId('choice-scenario').inputValue(), 'rag_qa');
    assert.equal(await page.getByTestId('choice-y').inputValue(), 'cost');
    assert.equal(await page.getByTestId('choice-interactivity').inputValue(), '40');
    assert.equal(await page.getByTestId('choice-users').inputValue(), '500');
    assert.equal(await page.getByTestId('choice-price-H100').inputValue(), '2');
    assert.equal(await page.getByTestId('choice-slider-ttft').getAttribute('aria-valuetext'), '2 s');
    assert.match(await page.getByTestId('choice-assumptions').innerText(), /H100: \$2 per GPU-hour \(yours; GPU rental only\)/);
    const option = await page.evaluate((id) => {
      const host = document.querySelector(`[data-chart-id="${id}"] .chart-canvas`);
      return window.echarts.getInstanceByDom(host).getOption();
    }, CHART);
    assert.match(option.yAxis[0].name, /Cost per million output tokens/);
    assert.ok(option.series[0].name.endsWith('· RAG / QA'), option.series[0].name);
    // The replicas column serves the 500 users.
    const rows = await rankingRows(page);
    assert.ok(rows.some((r) => /^[≤≈]? ?\d+$/.test(r[6])), rows.map((r) => r[6]).join(', '));
    // The second view, by keyboard; the address follows.
    await page.getByTestId('choice-x').focus();
    await page.getByTestId('choice-x').selectOption('e2e');
    await urlMatches(page, /choice\.x=e2e/);
    // Back at a default, a control leaves the address.
    await page.getByTestId('choice-users').fill('100');
    await page.waitForFunction(() => !location.search.includes('choice.users'));
    assertClean(problems);
  });

  test('the ranking re-ranks as the SLO slider moves', async () => {
    const { page, problems } = await newPage(browser);
    // Two configurations: the sample on an H100 ($2.69 by default) and the same on an H200
    // ($3.59) whose every request starts in a third of the time. Without a TTFT bound both
    // hold every tested level: bounds, so nothing is ranked; with a tight one the H100 reaches
    // its limit and is ranked, and the H200's bound already serves the users for less.
    const sample = JSON.parse(readFileSync(join(root, 'data/reports/sample-synthetic.json'), 'utf8'));
    const faster = structuredClone(sample);
    faster.metadata.hardware.gpu_model = 'NVIDIA H200';
    for (const level of faster.series.flatMap((s) => s.levels)) {
      const c = level.per_request;
      c.e2e = c.e2e.map((e, i) => e - Math.round((c.ttft[i] * 2) / 3));
      c.ttft = c.ttft.map((t) => Math.round(t / 3));
    }
    await page.goto(server.url);
    await page.getByTestId('file-input').first().setInputFiles([
      { name: 'h100.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(sample)) },
      { name: 'h200.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(faster)) },
    ]);
    await chartsDrawn(page);
    const slider = page.getByTestId('choice-slider-ttft');
    await slider.scrollIntoViewIfNeeded();
    await slider.focus();
    await page.keyboard.press('End'); // no TTFT bound
    const ranks = async () => (await rankingRows(page)).map((r) => `${r[0]} ${r[1]}`).join(', ');
    const verdict = () => page.getByTestId('choice-verdict').innerText();
    await changedFrom('', ranks, 'the ranking');
    assert.equal(await ranks(), '— H100, — H200');
    assert.match(await verdict(), /No ranking is possible yet/);
    await page.keyboard.press('Home'); // TTFT within 0.1 s
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight'); // 0.3 s
    // The slider passes 0.1 and 0.2 s on its way: wait for 0.3 s's ranking.
    for (let tries = 0; (await ranks()) !== '1 H100, — H200'; tries++) {
      assert.ok(tries < 100, `the ranking at 0.3 s: ${await ranks()}`);
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.match(await verdict(), /H200 serves at least 32 concurrent users per replica, .*already no more than H100's measured/);
    // The Goodput section reads the same SLO.
    assert.equal(await page.getByTestId('goodput-slider-ttft').getAttribute('aria-valuetext'), '0.3 s');
    assertClean(problems);
  });

  test('infermeter summary and the page agree on every ranked figure', async () => {
    const flags = ['--usd-per-gpu-hour', 'H100=2.5,B200=5', '--users', '500', '--interactivity', '40',
      '--slo', 'ttft=2s,tpot=40ms'];
    const cli = summaryTables(flags);
    assert.ok(cli.size >= 4, `scenarios: ${[...cli.keys()]}`);
    const { page, problems } = await newPage(browser);
    await openComparison(page, '&price.H100=2.5&price.B200=5&choice.users=500&choice.at=40&slo.ttft=2&slo.tpot=0.04');
    const scenarios = await page.getByTestId('choice-scenario').locator('option').evaluateAll(
      (options) => options.map((o) => [o.value, o.textContent]));
    assert.equal(scenarios.length, cli.size);
    for (const [id, name] of scenarios) {
      const before = await rankingRows(page);
      await page.getByTestId('choice-scenario').selectOption(id);
      const rows = id === scenarios[0][0] ? before : await changedFrom(before, () => rankingRows(page), `${name}'s ranking`);
      assert.deepEqual(rows, cli.get(name), `${name}: page against infermeter summary`);
    }
    assertClean(problems);
  });

  test('a report of one level gets a note, not an error', async () => {
    const { page, problems } = await newPage(browser);
    const report = JSON.parse(readFileSync(join(root, 'tests/browser/fixtures/valid-small.json'), 'utf8'));
    for (const s of report.series) s.levels = s.levels.slice(0, 1);
    await page.goto(server.url);
    await page.getByTestId('file-input').first().setInputFiles(
      { name: 'one-level.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(report)) });
    await chartsDrawn(page);
    assert.match(await page.getByTestId('choice-note').innerText(), /needs a series measured at two loads or more/);
    assert.equal(await page.getByTestId('choice-ranking').count(), 0);
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    assertClean(problems);
  });

  test('markup in report names shows as text in the section', async () => {
    const { page, problems } = await newPage(browser);
    const hostile = JSON.parse(readFileSync(join(root, 'tests/browser/fixtures/hostile-names.json'), 'utf8'));
    const other = structuredClone(hostile);
    other.metadata.engine.name = `${XSS} engine`;
    await page.goto(server.url);
    await page.getByTestId('file-input').first().setInputFiles([
      { name: 'a.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(hostile)) },
      { name: 'b.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(other)) },
    ]);
    await chartsDrawn(page);
    const section = page.getByTestId('section-choice');
    await section.scrollIntoViewIfNeeded();
    const labels = (await rankingRows(page)).map((r) => r[1]);
    assert.ok(labels.some((l) => l.includes(`${XSS} engine`)), labels.join('\n'));
    assert.ok((await section.innerText()).includes(`${XSS} GPU`), 'the GPU kind, literally');
    const p = await pointPosition(page, CHART, 0, 0);
    await page.mouse.move(p.x - 6, p.y - 6);
    await page.mouse.move(p.x, p.y, { steps: 4 });
    await page.waitForTimeout(300);
    assert.ok(await page.locator(`[data-chart-id="${CHART}"] .chart-canvas div`).filter({ hasText: 'onerror' }).count() > 0,
      'a hostile name reached the tooltip (so the check below means something)');
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assertClean(problems);
  });

  test('comparing the measured and the simulated H100 reports, the legends tell them apart', async () => {
    const { page, problems } = await newPage(browser);
    const [measured, simulated] = ['h100-transformers-llama-3.1-8b-shape.json', 'sim-llama-3.1-8b-h100-sxm-gpu-suite.json'];
    await page.goto(`${server.url}?report=${encodeURIComponent(`data/reports/${measured}`)}&compare=${encodeURIComponent(`data/reports/${simulated}`)}`);
    await chartsDrawn(page);
    const legend = await page.locator('[data-chart-id="fastest.decode"] [data-testid="legend-item"]').allInnerTexts();
    assert.ok(legend.some((l) => l.startsWith('H100 · transformers · ')), legend.join('\n'));
    assert.ok(legend.some((l) => l.startsWith('H100 · infermeter-sim · ')), legend.join('\n'));
    assertClean(problems);
  });
});

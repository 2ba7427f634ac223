// Browser tests of requests of varied lengths (#36): each request's latency against its own
// length, the length histograms and the realised lengths in the measurements table, on a report
// the collector measured on the simulator (tests/browser/fixtures/make-lengths.sh); a report of
// fixed lengths shows none of it. Run: node --test tests/browser/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertClean, browser, reportUrl, useBrowser } from './harness.mjs';
import {
  chartSettled, chartsDrawn, drawnSeries, newPage, pointPosition,
} from './support.mjs';

const LENGTHS = 'fixtures/browser/fixtures/lengths.json';
const SAMPLE = 'data/reports/sample-synthetic.json';
const CHARTS = ['lengths.ttft', 'lengths.e2e', 'lengths.histogram'];
const REPORT = JSON.parse(readFileSync(new URL('./fixtures/lengths.json', import.meta.url), 'utf8'));

useBrowser();

describe('varied request lengths', () => {
  test('latency by request length and the histograms render; hovering a request names its lengths', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(LENGTHS));
    await chartsDrawn(page);
    const section = page.getByTestId('section-deep-dive');
    for (const id of CHARTS) {
      await section.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
      assert.equal(await section.locator(`[data-chart-id="${id}"] canvas`).count() > 0, true, `${id} drawn`);
    }
    // One set of points per level of each scenario: every successful request a point.
    const ttft = await drawnSeries(page, 'lengths.ttft');
    const levels = REPORT.series.flatMap((s) => s.levels);
    assert.equal(ttft.length, levels.length, JSON.stringify(ttft.map((s) => s.name)));
    const ok = levels.map((l) => l.per_request.status.filter((s) => s === 0).length);
    assert.deepEqual(ttft.map((s) => s.data.length), ok);
    const inputs = new Set(ttft.flatMap((s) => s.data.map((p) => p[0])));
    assert.ok(inputs.size > 20, `varied input lengths: ${[...inputs]}`);
    const histogram = await drawnSeries(page, 'lengths.histogram');
    assert.deepEqual(histogram.map((s) => s.name),
      ['Book excerpts, input', 'Book excerpts, output', 'ShareGPT, input', 'ShareGPT, output']);
    const counted = histogram[0].data.reduce((n, p) => n + p[1], 0);
    assert.equal(counted, ok[0] + ok[1], 'every request of the scenario counted once');

    // Hover the first request of the first level: the tooltip names its input and output length.
    const id = 'lengths.ttft';
    await page.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
    await chartSettled(page, id);
    const point = await pointPosition(page, id, 0, 0);
    await page.mouse.move(point.x - 8, point.y - 8);
    await page.mouse.move(point.x, point.y, { steps: 4 });
    const tip = page.locator(`[data-chart-id="${id}"] .chart-canvas > div:not(:first-child)`);
    await tip.waitFor({ state: 'visible' });
    const text = await tip.innerText();
    const columns = REPORT.series[0].levels[0].per_request;
    const at = columns.input_tokens.indexOf(point.value[0]);
    assert.ok(at >= 0, `the hovered point ${point.value} is a request of the level`);
    const expected = `a request of ${columns.input_tokens[at].toLocaleString('en-US')} input and ${columns.output_tokens[at]} output tokens`;
    assert.ok(text.includes(expected), `tooltip "${text}" lacks "${expected}"`);
    assert.match(text, /Input tokens of the request: /);

    // The measurements table ends with the realised lengths.
    await page.getByTestId('measurements-fold').locator('summary').click();
    const table = page.getByTestId('measurements-table');
    assert.equal(await table.locator('thead th').last().innerText(), 'Lengths realised (tokens)');
    assert.match(await table.locator('tbody tr').first().locator('td').last().innerText(),
      /^input mean \d+ \(p5–p95 \d+–\d+\), output mean \d+ \(p5–p95 \d+–\d+\)$/);
    assertClean(problems);
  });

  test('a report of fixed lengths looks as before: no length charts, no lengths column', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    for (const id of CHARTS) {
      assert.equal(await page.locator(`[data-testid="block-${id}"]`).count(), 0, id);
    }
    await page.getByTestId('measurements-fold').locator('summary').click();
    const headings = await page.getByTestId('measurements-table').first().locator('thead th').allInnerTexts();
    assert.ok(!headings.includes('Lengths realised (tokens)'), headings.join(', '));
    assertClean(problems);
  });
});

// Browser tests of the goodput section: its sliders recompute goodput and the max-load cards
// from each request's figures, the address carries the SLO, and a report without per-request
// figures gets the section's note instead of an error. And sample sufficiency: a percentile on
// too few samples is marked wherever it is shown.
// Run: node --test tests/browser/ (after scripts/build-viewer.sh)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { assertClean, browser, changedFrom, reportUrl, useBrowser } from './harness.mjs';
import { chartsDrawn, newPage, urlMatches } from './support.mjs';

const SAMPLE = 'data/reports/sample-synthetic.json';
// Written before per-request figures existed (format 1.0.0).
const WITHOUT_COLUMNS = 'data/reports/llama-cpu-tiny-llama.json';

useBrowser();

/// The first line's y values of chart `id`, as drawn.
async function firstLine(page, id) {
  return page.evaluate((chartId) => {
    const host = document.querySelector(`[data-chart-id="${chartId}"] .chart-canvas`);
    const option = window.echarts.getInstanceByDom(host).getOption();
    return option.series[0].data.map((point) => point[1]);
  }, id);
}

async function cardValue(page, scenario) {
  return page.getByTestId(`goodput-card-${scenario}`).locator('.highlight-value').innerText();
}

/// The sample with its TTFT bound at the slider's lowest (0.1 s), read back.
async function sampleWithTightTtft(page) {
  await page.goto(reportUrl(SAMPLE));
  await chartsDrawn(page);
  const slider = page.getByTestId('goodput-slider-ttft');
  await slider.scrollIntoViewIfNeeded();
  const before = { card: await cardValue(page, 'chatbot'), line: await firstLine(page, 'goodput.attainment') };
  await slider.focus(); // keyboard reachable
  await page.keyboard.press('Home');
  const card = await changedFrom(before.card, () => cardValue(page, 'chatbot'), 'the chatbot card');
  const line = await changedFrom(before.line, () => firstLine(page, 'goodput.attainment'), 'the attainment line');
  return { before, after: { card, line } };
}

describe('goodput', () => {
  test('moving the TTFT slider recomputes goodput and the max-users card', async () => {
    const { page, problems } = await newPage(browser);
    const { before, after } = await sampleWithTightTtft(page);
    // The sample's chatbot meets the default SLO at every level; with TTFT within 0.1 s no
    // request does (its fastest first token takes ~0.13 s).
    assert.equal(before.card, '≥ 32');
    assert.equal(after.card, '< 1');
    assert.ok(before.line.every((v) => v === 100), `before: ${before.line}`);
    assert.ok(after.line.every((v) => v === 0), `after: ${after.line}`);
    assert.match(await page.getByTestId('goodput-slo').innerText(), /^Judged by: TTFT ≤ 0\.1 s, TPOT ≤ 50 ms; 95% of requests\.$/);
    assert.equal(await page.getByTestId('goodput-slider-ttft').getAttribute('aria-valuetext'), '0.1 s');
    // The goodput chart follows: no request per second met it.
    assert.ok((await firstLine(page, 'goodput.rate')).every((v) => v === 0));
    // The target is a choice of shares; a looser one moves the target line.
    await page.getByTestId('goodput-target').selectOption({ label: '90% of requests' });
    await urlMatches(page, /slo\.target=0\.9/);
    assertClean(problems);
  });

  test('a URL with SLO state reproduces the section', async () => {
    const { page, problems } = await newPage(browser);
    const { after } = await sampleWithTightTtft(page);
    await urlMatches(page, /slo\.ttft=0\.1/);
    const url = page.url();
    assert.doesNotMatch(url, /slo\.tpot|slo\.e2e|slo\.target/, 'only what the reader changed');

    const second = await newPage(browser);
    await second.page.goto(url);
    await chartsDrawn(second.page);
    assert.equal(await cardValue(second.page, 'chatbot'), after.card);
    assert.deepEqual(await firstLine(second.page, 'goodput.attainment'), after.line);
    assert.equal(await second.page.getByTestId('goodput-slider-ttft').inputValue(), '0.1');
    // The embed of a goodput chart keeps the SLO too.
    const embed = await newPage(browser);
    await embed.page.goto(`${url}&chart=goodput.attainment`);
    await embed.page.getByTestId('embed').waitFor();
    await chartsDrawn(embed.page);
    assert.deepEqual(await firstLine(embed.page, 'goodput.attainment'), after.line);
    assertClean(problems);
    assertClean(second.problems);
    assertClean(embed.problems);
  });

  test('a report without per-request figures shows the section\'s note, not an error', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(WITHOUT_COLUMNS));
    await chartsDrawn(page);
    const note = page.getByTestId('goodput-absent');
    await note.waitFor();
    assert.match(await note.innerText(), /since format 1\.2\.0; this one is format 1\.0\.0\. Measure again/);
    const section = page.getByTestId('section-goodput');
    assert.equal(await section.getByTestId('goodput-controls').count(), 0);
    assert.equal(await section.getByTestId('chart').count(), 0);
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    assertClean(problems);
  });

  test('compare mode overlays the reports that have figures and names the one that has none', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE, `&compare=${encodeURIComponent(WITHOUT_COLUMNS)}`));
    await chartsDrawn(page);
    const note = page.getByTestId('goodput-absent');
    await note.waitFor();
    // Named by its label (the CPU report's GPU field), then why.
    assert.match(await note.innerText(), /: Goodput needs each request's figures/);
    assert.ok(await page.getByTestId('goodput-card-chatbot').isVisible());
    assertClean(problems);
  });

  test('a percentile on too few samples is marked on the cards, in the tables and on the charts', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE, '&stat=p99'));
    await chartsDrawn(page);
    // The best TTFT is the single-user chatbot level's: a few dozen requests.
    const note = page.getByTestId('highlight-best-ttft').getByTestId('indicative-note');
    assert.match(await note.innerText(), /^indicative: p99 of \d+ samples$/);
    // A burst level of one request: its point on the TTFT chart is drawn hollow.
    const point = await page.evaluate(() => {
      const host = document.querySelector('[data-chart-id="scale_up.ttft"] .chart-canvas');
      return window.echarts.getInstanceByDom(host).getOption().series[0].data[0];
    });
    assert.equal(point.itemStyle?.borderWidth, 2, JSON.stringify(point));
    await page.getByTestId('measurements-fold').locator('summary').click();
    const marked = page.getByTestId('measurements-table').first().locator('td.indicative');
    // The fold renders its tables after the click: wait for them before counting.
    await marked.first().waitFor();
    assert.ok(await marked.count() > 0);
    assert.match(await marked.first().getAttribute('title'), /^indicative: p99 of \d+ samples?$/);
    // At the mean nothing is.
    await page.getByTestId('stat-select').selectOption('mean');
    await page.waitForFunction(() => !document.querySelector('[data-testid="indicative-note"]'));
    assert.equal(await page.locator('td.indicative').count(), 0);
    assertClean(problems);
  });
});

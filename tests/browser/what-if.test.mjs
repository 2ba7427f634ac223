// Browser tests of the What-if section: its inputs change the fitted simulator's predictions,
// a measured level is shown as measured (never as a prediction), the address reproduces the
// question, and a report without a fit gets the section's note.
// Run: node --test tests/browser/ (after scripts/build-viewer.sh)
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { assertClean, browser, changedFrom, reportUrl, useBrowser } from './harness.mjs';
import { chartsDrawn, newPage, urlMatches } from './support.mjs';

const FITTED = 'data/reports/h100-transformers-llama-3.1-8b-shape.json';
const WITHOUT_FIT = 'data/reports/sample-synthetic.json';

useBrowser();

async function card(page, key) {
  const c = page.getByTestId(`what-if-card-${key}`);
  return {
    value: await c.locator('.highlight-value').innerText(),
    label: await c.locator('.highlight-label').innerText(),
    context: await c.locator('.highlight-context').innerText(),
  };
}

/// The names and dash of chart `id`'s series, and their points, as drawn.
async function seriesOf(page, id) {
  return page.evaluate((chartId) => {
    const host = document.querySelector(`[data-chart-id="${chartId}"] .chart-canvas`);
    const option = window.echarts.getInstanceByDom(host).getOption();
    return option.series
      .filter((s) => s.data?.length)
      .map((s) => ({ name: s.name, dash: s.lineStyle?.type ?? 'solid', data: s.data.map((p) => [p[0], p[1]]) }));
  }, id);
}

async function openFitted(page, query = '') {
  await page.goto(reportUrl(FITTED, query));
  await chartsDrawn(page);
  await page.getByTestId('what-if-cards').scrollIntoViewIfNeeded();
}

describe('what if', () => {
  test('a measured level is shown as measured, and the inputs change the predictions', async () => {
    const { page, problems } = await newPage(browser);
    await openFitted(page);
    // The default question is the highest measured level of the fit's first scenario: 1K
    // context at 8 users, measured, with the prediction and its held-out error beside it.
    const measured = await card(page, 'ttft');
    assert.match(measured.label, /^TTFT at 8 users, measured$/);
    assert.match(measured.context, /^predicted: fitted simulator, held-out error [\d.]+% /);
    const lines = await seriesOf(page, 'what_if.ttft');
    const [solid, dashed] = [lines.find((l) => /\(measured\)$/.test(l.name)), lines.find((l) => /predicted/.test(l.name))];
    assert.equal(solid.dash, 'solid');
    assert.deepEqual(solid.data.map((p) => p[0]), [1, 2, 4, 8], 'the measured loads, as measured');
    assert.equal(dashed.dash, 'dashed');
    assert.equal(dashed.data.at(-1)[0], 32, 'predicted up to four times the highest measured');

    // Twice the users: a prediction, labelled as one.
    const slider = page.getByTestId('what-if-load');
    await slider.focus();
    await page.keyboard.press('End');
    const predicted = await changedFrom(measured, () => card(page, 'ttft'), 'the TTFT card');
    assert.match(predicted.label, /^TTFT at 32 users$/);
    assert.match(predicted.context, /^predicted: fitted simulator, held-out error/);
    assert.notEqual(predicted.value, measured.value);

    // An H200 streams faster than the measured H100; the measured points leave the chart.
    const itl = await card(page, 'itl');
    await page.getByTestId('what-if-gpu').selectOption('h200');
    const faster = await changedFrom(itl, () => card(page, 'itl'), 'the ITL card');
    assert.ok(parseFloat(faster.value) < parseFloat(itl.value), `${faster.value} < ${itl.value}`);
    await changedFrom(lines.length, async () => (await seriesOf(page, 'what_if.ttft')).length, 'the TTFT chart');
    assert.ok((await seriesOf(page, 'what_if.ttft')).every((l) => /predicted/.test(l.name)));
    // Longer prompts wait longer for their first token.
    const ttft = await card(page, 'ttft');
    await page.getByTestId('what-if-input').fill('8192');
    const longer = await changedFrom(ttft, () => card(page, 'ttft'), 'the TTFT card');
    assert.ok(parseFloat(longer.value) > parseFloat(ttft.value), `${longer.value} > ${ttft.value}`);
    assertClean(problems);
  });

  test('the address reproduces the question', async () => {
    const { page, problems } = await newPage(browser);
    await openFitted(page);
    await page.getByTestId('what-if-mode').selectOption('burst');
    await page.getByTestId('what-if-gpus').selectOption('2');
    await page.getByTestId('what-if-output').fill('256');
    await urlMatches(page, /wi\.out=256/);
    const url = page.url();
    assert.match(url, /wi\.mode=burst/);
    assert.match(url, /wi\.gpus=2/);
    const cards = await Promise.all(['ttft', 'itl', 'decode', 'throughput', 'slo'].map((k) => card(page, k)));

    const second = await newPage(browser);
    await second.page.goto(url);
    await chartsDrawn(second.page);
    await second.page.getByTestId('what-if-cards').scrollIntoViewIfNeeded();
    const again = await Promise.all(['ttft', 'itl', 'decode', 'throughput', 'slo'].map((k) => card(second.page, k)));
    assert.deepEqual(again, cards);
    assert.match(cards[0].label, /queue depth/);
    assertClean(problems);
    assertClean(second.problems);
  });

  test('a report without a fit shows the note instead', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(WITHOUT_FIT));
    await chartsDrawn(page);
    const note = page.getByTestId('what-if-off');
    await note.scrollIntoViewIfNeeded();
    assert.match(await note.innerText(), /holds no fit: run infermeter fit/);
    assert.equal(await page.getByTestId('what-if-controls').count(), 0);
    assertClean(problems);
  });
});

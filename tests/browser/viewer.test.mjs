// Browser tests of the built viewer (dist/, from scripts/build-viewer.sh) in headless chromium.
// Run: node --test tests/browser/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  assertClean, browser, changedFrom, reportUrl, server, useBrowser,
} from './harness.mjs';
import {
  chartSettled, chartsDrawn, launchBrowser, newPage, npmToolFile, pointPosition, urlMatches,
} from './support.mjs';

const SAMPLE = 'data/reports/sample-synthetic.json';
const SECTIONS = ['header', 'highlights', 'choice', 'scenarios', 'glossary', 'fastest', 'scale-up',
  'throughput', 'capacity', 'goodput', 'what-if', 'deep-dive', 'measurements', 'power', 'methodology',
  'experience'];
const malformedDir = new URL('../malformed/', import.meta.url).pathname;
const MALFORMED = readdirSync(malformedDir).filter((f) => f.endsWith('.json')).sort();
const XSS = '<img src=x onerror=alert(1)>';
const INDEX = JSON.parse(readFileSync(new URL('../../data/index.json', import.meta.url), 'utf8'));
// The load modes of agentic jobs (concurrent jobs, a job arrival rate): their reports are judged
// per job in the Agents section, not by the per-request charts.
const AGENT_MODES = ['agents', 'job_rate'];

useBrowser();

/// The ECharts tooltip of chart `id` (its HTML lives inside the chart's host element).
function tooltip(page, id) {
  return page.locator(`[data-chart-id="${id}"] .chart-canvas > div:not(:first-child)`);
}

/// Scrolls chart `id` into view, hovers its first data point and waits for the tooltip; returns
/// the point (`pointPosition`).
async function hoverFirstPoint(page, id) {
  await page.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
  await chartSettled(page, id);
  const point = await pointPosition(page, id, 0, 0);
  // Approach the point the way a pointer does (ECharts throttles a single jump).
  await page.mouse.move(point.x - 8, point.y - 8);
  await page.mouse.move(point.x, point.y, { steps: 4 });
  await tooltip(page, id).waitFor({ state: 'visible' });
  return point;
}

/// Waits until the element with `id` starts in the upper half of the viewport.
async function sectionInView(page, id) {
  await page.waitForFunction((target) => {
    const top = document.getElementById(target).getBoundingClientRect().top;
    return top >= 0 && top < window.innerHeight / 2;
  }, id);
}

async function firstSlider(page, kind) {
  const slider = page.locator(`[data-testid^="slider-${kind}-"]`).first();
  const testid = await slider.getAttribute('data-testid');
  return { slider, useCase: testid.slice(`slider-${kind}-`.length) };
}

/// Opens the sample report and moves its first TTFT slider to its lowest value, by keyboard;
/// returns once the capacity figure and the chart's threshold line show the new limit.
async function sampleWithTtftAtMinimum(page) {
  await page.goto(reportUrl(SAMPLE));
  await chartsDrawn(page);
  const { slider, useCase } = await firstSlider(page, 'ttft');
  const figure = () => page.getByTestId(`capacity-figure-${useCase}`).innerText();
  const limits = () => drawnLimits(page.locator(`[data-chart-id="capacity.${useCase}"]`));
  const [figureBefore, limitsBefore] = [await figure(), await limits()];
  await slider.focus();
  await page.keyboard.press('Home');
  await changedFrom(figureBefore, figure, 'the capacity figure');
  await changedFrom(limitsBefore, limits, 'the threshold line');
  return { slider, useCase };
}

/// The values of the threshold lines the chart in `block` draws.
function drawnLimits(block) {
  return block.evaluate((el) => {
    const chart = window.echarts.getInstanceByDom(el.querySelector('.chart-canvas'));
    return chart.getOption().series.flatMap((s) => s.markLine?.data ?? []).map((d) => d.yAxis);
  });
}

describe('landing page', () => {
  test('lists the bundled reports and opens one', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    const first = INDEX.reports[0].path;
    const links = page.getByTestId('report-list').getByRole('link');
    // The list comes in whole, once data/index.json is read (after the page's load event).
    await links.first().waitFor();
    assert.equal(await links.count(), INDEX.reports.length, 'one link per index entry');
    await links.first().click();
    await page.getByTestId('section-header').waitFor();
    assert.ok(page.url().includes(`report=${encodeURIComponent(`data/${first}`)}`), page.url());
    assertClean(problems);
  });
});

describe('landing page: comparing', () => {
  test('ticking two listed reports and pressing Compare overlays them', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    const picks = page.getByTestId('compare-pick');
    await picks.first().waitFor();
    const [main, other] = [INDEX.reports[0], INDEX.reports[2]];
    await picks.nth(2).check();
    await picks.nth(0).focus(); // keyboard reachable
    await page.keyboard.press('Space');
    await page.getByTestId('compare-selected').click();
    await page.getByTestId('section-header').waitFor();
    // The first ticked in list order is the main report; the app writes the canonical address.
    await urlMatches(page, new RegExp(`report=${encodeURIComponent(`data/${main.path}`).replace(/\./g, '\\.')}`));
    assert.ok(page.url().includes(`compare=${encodeURIComponent(`data/${other.path}`)}`), page.url());
    assert.match(await page.getByTestId('section-header').innerText(), /Compared with: /);
    assertClean(problems);
  });
});

describe('every bundled report', () => {
  // The collector's own output (simulator and real llama.cpp runs) must render like the sample.
  for (const entry of INDEX.reports) {
    test(`${entry.path} renders every section without an error`, async () => {
      const { page, problems } = await newPage(browser);
      await page.goto(reportUrl(`data/${entry.path}`));
      for (const name of SECTIONS) {
        await page.getByTestId(`section-${name}`).waitFor({ timeout: 15000 });
      }
      await chartsDrawn(page);
      const report = JSON.parse(readFileSync(new URL(`../../data/${entry.path}`, import.meta.url), 'utf8'));
      // A report of agentic jobs alone draws the Agents section's charts, little else.
      const agentsOnly = report.series.every((s) => AGENT_MODES.includes(s.mode));
      assert.ok((await page.getByTestId('chart').count()) >= (agentsOnly ? 2 : 10));
      assert.equal(await page.getByTestId('error-panel').count(), 0);
      // A report measured on the simulator keeps each request's figures: goodput judges it (an
      // agentic report's jobs are judged in the Agents section instead).
      if (agentsOnly) {
        assert.ok(await page.getByTestId('agents-meets').count() > 0, 'job verdicts');
      } else if (report.metadata.engine.name === 'infermeter-sim') {
        const goodput = page.getByTestId('section-goodput');
        assert.equal(await goodput.getByTestId('goodput-absent').count(), 0, 'no "not available" note');
        assert.ok(await goodput.locator('[data-testid^="goodput-card-"]').count() > 0, 'goodput cards');
      }
      assertClean(problems);
    });
  }
});

describe('bundled report', () => {
  test('the table of contents links to every section and jumps to it', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    const toc = page.getByTestId('toc');
    await chartsDrawn(page); // the sections below the first charts are built after a paint
    const targets = await toc.getByRole('link').evaluateAll((links) => links.map((a) => a.hash.slice(1)));
    const linked = await page.evaluate((ids) => ids.map((id) => document.getElementById(id)?.dataset.testid), targets);
    assert.deepEqual(linked, SECTIONS.filter((s) => !['header', 'highlights'].includes(s)).map((s) => `section-${s}`));
    await toc.getByRole('link', { name: 'Methodology' }).click();
    await sectionInView(page, 'methodology');
    assertClean(problems);
  });

  test('every section renders and every chart draws', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    for (const name of SECTIONS) {
      await page.getByTestId(`section-${name}`).waitFor({ timeout: 15000 });
    }
    await chartsDrawn(page);
    const charts = await page.getByTestId('chart').count();
    assert.ok(charts >= 10, `only ${charts} charts`);
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    assert.equal(await page.getByTestId('boot').count(), 0, 'the loading line is gone');
    // The throughput section's closing sentence, as in the reports.
    assert.match(await page.getByTestId('throughput-summary').innerText(),
      /^At peak throughput \(\d+ concurrent, .+\), this configuration produces approximately [\d.]+ million tokens per hour/);
    // The key findings (reference 003), one row per scenario at its top level, one capacity
    // card per use case (reference 002).
    assert.deepEqual(await page.getByTestId('key-findings').locator('tbody tr').allInnerTexts(), [
      'TTFT, single request\t0.189 s (1K context) → 1.85 s (32K context)',
      'Generation speed, single request\t172.5 tok/s (1K context) → 165 tok/s (32K context)',
      'Throughput scaling\t13.1× from 1 to 32 concurrent requests (Chatbot)',
    ]);
    const scenarios = await page.getByTestId('throughput-by-scenario').locator('tbody tr').count();
    assert.equal(scenarios, 4);
    const useCases = await page.locator('[data-testid^="use-case-"]').count();
    const cards = page.locator('[data-testid^="capacity-card-"]');
    assert.equal(await cards.count(), useCases);
    assert.match(await cards.first().innerText(), /^((≈ )?\d+ requests?|Not recommended)\n.+ Capacity\n\S+ in \/ \S+ out$/);
    assertClean(problems);
  });

  test('when the app cannot start, the page says why instead of staying blank', async () => {
    const { page } = await newPage(browser);
    await page.route('**/*_bg.wasm', (route) => route.abort());
    await page.goto(reportUrl(SAMPLE));
    const failed = page.getByTestId('boot').filter({ hasText: 'could not start' });
    await failed.waitFor();
    assert.equal(await failed.getAttribute('role'), 'alert');
    assert.match(await failed.innerText(), /_bg\.wasm|fetch/i);
    assert.match(await failed.innerText(), /Reload the page/);
  });

  test('a link to a section opens the report at that section', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(`${reportUrl(SAMPLE)}#capacity`);
    await chartsDrawn(page);
    // The section is built after the first paint; the page then scrolls to it.
    await sectionInView(page, 'capacity');
    assertClean(problems);
  });

  test('without the chart library the report still shows, and each chart says why', async () => {
    const { page, problems } = await newPage(browser);
    await page.route('**/vendor/echarts.min.js', (route) => route.abort());
    await page.goto(reportUrl(SAMPLE));
    for (const name of SECTIONS) {
      await page.getByTestId(`section-${name}`).waitFor({ timeout: 15000 });
    }
    const failures = page.locator('[data-testid="chart"] .chart-failure');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="chart"]').length > 10
      && [...document.querySelectorAll('[data-testid="chart"]')].every((c) => c.querySelector('.chart-failure')));
    assert.match(await failures.first().innerText(), /chart library did not load: .*echarts\.min\.js/);
    assert.equal(await page.locator('[data-testid="chart"] canvas').count(), 0);
    assertClean(problems);
  });

  test('hovering a data point shows its exact value; clicking pins the tooltip', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const id = 'fastest.decode';
    const point = await hoverFirstPoint(page, id);
    const tip = tooltip(page, id);
    // The value as measured in the report file (mean decode speed of the first scenario at
    // its lowest concurrency), as the page writes it (one decimal from 100 up, the report
    // crate's format_number): 172.49999999999994 reads 172.5.
    const report = JSON.parse(readFileSync(new URL(`../../${SAMPLE}`, import.meta.url), 'utf8'));
    const series = report.series.find((s) => s.scenario === report.scenarios[0].id && s.mode === 'peak');
    const level = [...series.levels].sort((a, b) => a.concurrency - b.concurrency)[0];
    const measured = level.metrics.decode_tok_s.mean;
    assert.ok(Math.abs(point.value[1] - measured) < 1e-9, 'the hovered point is that measurement');
    assert.ok(measured >= 100, 'a figure written with one decimal');
    const shown = `${Number(measured.toFixed(1))} tok/s`;
    const text = await tip.innerText();
    assert.ok(text.includes(shown), `tooltip "${text}" lacks ${shown}`);
    assert.ok(text.includes(report.scenarios[0].name), `tooltip "${text}" names the scenario`);

    await page.mouse.click(point.x, point.y);
    await page.locator(`[data-chart-id="${id}"][data-pinned="true"]`).waitFor();
    await page.mouse.move(5, 5);
    await page.waitForTimeout(300);
    assert.ok(await tip.isVisible(), 'a pinned tooltip stays when the mouse leaves');
    await page.locator(`[data-chart-id="${id}"]`).getByTestId('chart-unpin').click();
    await page.locator(`[data-chart-id="${id}"][data-pinned="false"]`).waitFor();
    assertClean(problems);
  });

  test('a redraw releases a pinned tooltip: it hides again when the mouse leaves', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const { slider, useCase } = await firstSlider(page, 'ttft');
    const id = `capacity.${useCase}`;
    await page.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
    await chartSettled(page, id);
    const point = await pointPosition(page, id, 0, 2);
    await page.mouse.move(point.x - 8, point.y - 8);
    await page.mouse.move(point.x, point.y, { steps: 4 });
    await page.mouse.click(point.x, point.y);
    await page.locator(`[data-chart-id="${id}"][data-pinned="true"]`).waitFor();
    await slider.focus();
    await page.keyboard.press('ArrowLeft');
    await page.locator(`[data-chart-id="${id}"][data-pinned="false"]`).waitFor();
    await page.mouse.move(5, 5);
    await tooltip(page, id).waitFor({ state: 'hidden' });
    assertClean(problems);
  });

  test('a range band is drawn between its edges, at the measured values', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    // How far, in pixels, each point of a band's upper edge is drawn from where its real value
    // (kept third in its data) belongs.
    const upperEdgeOffsets = (id) => page.evaluate((cid) => {
      const chart = window.echarts.getInstanceByDom(document.querySelector(`[data-chart-id="${cid}"] .chart-canvas`));
      const series = chart.getOption().series;
      const upper = series.findIndex((s) => s.stack && s.areaStyle);
      // The line's drawn points, in pixels: x0, y0, x1, y1…
      const drawn = chart.getModel().getSeriesByIndex(upper).getData().getLayout('points');
      const xAt = series[upper].encode?.x ?? 0;
      return series[upper].data.map((point, i) => {
        const [x, y] = chart.convertToPixel({ seriesIndex: upper }, [point[xAt], point[2]]);
        return Math.hypot(x - drawn[2 * i], y - drawn[2 * i + 1]);
      });
    }, id);
    const assertOnValues = (offsets, what) => assert.ok(offsets.length > 0 && offsets.every((d) => d < 1),
      `${what}: upper edge off by ${offsets.map((d) => d.toFixed(1)).join(', ')} px`);
    for (const id of ['fastest.decode_range', 'fastest.ttft_range']) {
      assertOnValues(await upperEdgeOffsets(id), id);
    }
    // With the lower edge switched off in the legend, the upper one stays where it was.
    const lower = page.locator('[data-chart-id="fastest.decode_range"]').getByTestId('legend-item').first();
    await lower.click();
    assert.equal(await lower.getAttribute('aria-pressed'), 'false');
    await page.waitForTimeout(200);
    assertOnValues(await upperEdgeOffsets('fastest.decode_range'), 'lower edge hidden');
    assertClean(problems);
  });

  test('the run\'s warnings show under their count, a long list folded until opened', async () => {
    const { page, problems } = await newPage(browser);
    // A fixture of its own (make-many-warnings.sh): a bundled report's warnings change whenever it
    // is measured again.
    const path = 'fixtures/browser/fixtures/many-warnings.json';
    const { warnings } = JSON.parse(readFileSync(new URL('./fixtures/many-warnings.json', import.meta.url), 'utf8'));
    assert.ok(warnings.length > 3, `${path} has a long list of warnings`);
    await page.goto(reportUrl(path));
    const list = page.getByTestId('report-warnings');
    await list.waitFor();
    assert.equal(await list.locator('summary').innerText(), `${warnings.length} warnings from the run`);
    assert.equal(await list.getAttribute('open'), null, 'folded');
    assert.equal(await list.locator('li').first().isVisible(), false);
    await list.locator('summary').focus(); // keyboard reachable
    await page.keyboard.press('Enter');
    await list.locator('li').first().waitFor();
    assert.deepEqual(await list.locator('li').allInnerTexts(), warnings);
    // One warning is listed as it is (this one is markup, shown as text).
    await page.goto(reportUrl('fixtures/browser/fixtures/hostile-names.json'));
    await page.getByTestId('report-warnings').waitFor();
    assert.equal(await page.getByTestId('report-warnings').locator('summary').innerText(), '1 warning from the run');
    assert.deepEqual(await page.getByTestId('report-warnings').locator('li').allInnerTexts(), [XSS]);
    assertClean(problems);
  });

  test('no threshold label is drawn over a data line, in any bundled report', async () => {
    const { page, problems } = await newPage(browser);
    for (const { path } of INDEX.reports) {
      // A report of agentic jobs alone draws no chart with threshold labels.
      const report = JSON.parse(readFileSync(new URL(`../../data/${path}`, import.meta.url), 'utf8'));
      if (report.series.every((s) => AGENT_MODES.includes(s.mode))) continue;
      await page.goto(reportUrl(`data/${path}`));
      await chartsDrawn(page);
      // Per chart: how many threshold labels it draws, and each label box a data line crosses
      // (every pixel along each segment between measured points).
      const charts = await page.evaluate(() => [...document.querySelectorAll('[data-chart-id]')].map((block) => {
        const chart = window.echarts.getInstanceByDom(block.querySelector('.chart-canvas'));
        const series = chart.getOption().series;
        const texts = new Set(series.flatMap((s) => (s.markLine?.data ?? []).map((d) => d.label?.formatter)));
        const boxes = chart.getZr().storage.getDisplayList(true)
          .filter((el) => texts.has(el.style?.text))
          .map((el) => {
            const box = el.getBoundingRect().clone();
            box.applyTransform(el.getComputedTransform());
            return { text: el.style.text, box };
          });
        const crossings = [];
        series.forEach((s, index) => {
          const points = (s.data ?? []).map((value) => {
            const raw = value.value ?? value;
            return chart.convertToPixel({ seriesIndex: index }, s.encode ? [raw[s.encode.x], raw[s.encode.y]] : raw);
          });
          points.slice(1).forEach((b, i) => {
            const a = points[i];
            const steps = Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1]));
            for (const { text, box } of boxes) {
              for (let k = 0; k <= steps; k++) {
                if (box.contain(a[0] + ((b[0] - a[0]) * k) / steps, a[1] + ((b[1] - a[1]) * k) / steps)) {
                  crossings.push(`"${text}" under ${s.name} between points ${i} and ${i + 1}`);
                  break;
                }
              }
            }
          });
        });
        return { id: block.dataset.chartId, labels: boxes.length, crossings };
      }));
      const labelled = charts.filter((c) => c.labels > 0);
      assert.ok(labelled.length > 0, `${path}: no threshold label found (the check would pass vacuously)`);
      for (const { id, crossings } of labelled) assert.deepEqual(crossings, [], `${path}, ${id}`);
    }
    assertClean(problems);
  });

  test('moving a TTFT slider changes the capacity figure', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const { slider, useCase } = await firstSlider(page, 'ttft');
    const figure = page.getByTestId(`capacity-figure-${useCase}`);
    const before = await figure.innerText();
    const card = page.getByTestId(`capacity-card-${useCase}`).locator('.highlight-value');
    const cardBefore = await card.innerText();
    // Screen readers announce the new figure: it sits in a polite live region, which must be
    // the same element after the change (a replaced region is not announced).
    const region = await figure.evaluateHandle((el) => el.closest('[aria-live="polite"]'));
    assert.ok(await region.evaluate((el) => el !== null), 'the capacity figure is in a live region');
    await slider.focus(); // keyboard reachable
    await page.keyboard.press('Home');
    await page.waitForFunction(([sel, old]) => document.querySelector(sel)?.innerText !== old,
      [`[data-testid="capacity-figure-${useCase}"]`, before]);
    assert.notEqual(await figure.innerText(), before);
    // The use case's summary card follows the same limit.
    assert.notEqual(await card.innerText(), cardBefore);
    assert.ok(await region.evaluate((el, sel) => el.isConnected && el.contains(document.querySelector(sel)),
      `[data-testid="capacity-figure-${useCase}"]`), 'the live region was updated in place');
    await urlMatches(page, new RegExp(`uc\\.${useCase}\\.ttft=`));
    assertClean(problems);
  });

  test('the electricity price and the queue TTFT limit recompute what depends on them', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    for (const [input, value, shown, query] of [
      ['kwh-input', '0.3', 'power-cost-table', /kwh=0\.3/],
      ['queue-ttft-input', '10', 'safe-queue-cards', /queue_ttft=10/],
    ]) {
      const before = await page.getByTestId(shown).innerText();
      await page.getByTestId(input).fill(value);
      await page.waitForFunction(([id, old]) => document.querySelector(`[data-testid="${id}"]`).innerText !== old,
        [shown, before]);
      await urlMatches(page, query);
    }
    // A value the setting cannot take is not applied (the later valid change shows the URL has
    // been written since).
    const table = await page.getByTestId('power-cost-table').innerText();
    await page.getByTestId('kwh-input').fill('-1');
    await page.getByTestId('queue-ttft-input').fill('12');
    await urlMatches(page, /queue_ttft=12/);
    assert.match(page.url(), /kwh=0\.3/);
    assert.equal(await page.getByTestId('power-cost-table').innerText(), table);
    assertClean(problems);
  });

  test('without requestIdleCallback (Safari) the update path is still warmed up', async () => {
    const { page, problems } = await newPage(browser);
    await page.addInitScript(() => { delete window.requestIdleCallback; });
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    assert.equal(await page.evaluate(() => typeof window.requestIdleCallback), 'undefined');
    await page.waitForFunction(() => performance.getEntriesByName('infermeter:update-warmed').length,
      null, { timeout: 5000 });
    assertClean(problems);
  });

  test('the idle-time redraw that warms up updates keeps what the reader set', async () => {
    const { page, problems } = await newPage(browser);
    // Idle callbacks wait until the slider has moved, so the warm-up redraw comes after an update.
    await page.addInitScript(() => {
      const held = [];
      window.requestIdleCallback = (callback) => held.push(callback);
      window.runHeldIdleCallbacks = () => held.splice(0).forEach((callback) => callback());
    });
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const { slider, useCase } = await firstSlider(page, 'ttft');
    const lines = () => page.evaluate((id) => {
      const chart = window.echarts.getInstanceByDom(document.querySelector(`[data-chart-id="${id}"] .chart-canvas`));
      return JSON.stringify(chart.getOption().series.map((s) => s.markLine?.data ?? null));
    }, `capacity.${useCase}`);
    const initial = await lines();
    await slider.focus();
    await page.keyboard.press('Home');
    const moved = await changedFrom(initial, lines, 'the threshold line');
    await page.evaluate(() => window.runHeldIdleCallbacks());
    await page.waitForFunction(() => performance.getEntriesByName('infermeter:update-warmed').length);
    assert.equal(await lines(), moved);
    assertClean(problems);
  });

  test('a slider dragged for seconds still leaves its last value in the address', async () => {
    // Browsers ignore history updates beyond a rate (Chromium: 200 per 10 s; Safari refuses
    // over 100 per 30 s). Playwright turns Chromium's cap off; a reader's browser has it.
    const capped = await launchBrowser({ ignoreDefaultArgs: ['--disable-ipc-flooding-protection'] });
    try {
      const { page, problems } = await newPage(capped);
      await page.goto(reportUrl(SAMPLE));
      await chartsDrawn(page);
      const { useCase } = await firstSlider(page, 'ttft');
      // ~300 moves, each drawn before the next (a drag at 60 moves a second for five seconds).
      const last = await page.evaluate(async (uc) => {
        const input = document.querySelector(`[data-testid="slider-ttft-${uc}"]`);
        const [min, max] = [Number(input.min), Number(input.max)];
        const steps = Math.round((max - min) / Number(input.step || 1));
        for (let i = 0; i < 300; i++) {
          input.value = String(min + ((max - min) * (i % steps)) / steps);
          input.dispatchEvent(new Event('input', { bubbles: true }));
          await new Promise((ok) => setTimeout(ok, 5));
        }
        input.value = String(min + (max - min) / 2);
        input.dispatchEvent(new Event('input', { bubbles: true }));
        return input.value;
      }, useCase);
      await urlMatches(page, new RegExp(`uc\\.${useCase}\\.ttft=${last.replace('.', '\\.')}(&|$)`));
      assertClean(problems);
    } finally {
      await capped.close();
    }
  });

  test('a URL with state reproduces the view', async () => {
    const { page, problems } = await newPage(browser);
    const { slider, useCase } = await sampleWithTtftAtMinimum(page);
    await page.getByTestId('stat-select').selectOption('p99');
    await page.getByTestId('theme-toggle').press('Enter');
    await urlMatches(page, /stat=p99/);
    await urlMatches(page, /theme=dark/);
    const figure = await page.getByTestId(`capacity-figure-${useCase}`).innerText();
    const sliderValue = await slider.inputValue();
    const url = page.url();

    const second = await newPage(browser);
    await second.page.goto(url);
    await chartsDrawn(second.page);
    assert.equal(await second.page.getByTestId(`capacity-figure-${useCase}`).innerText(), figure);
    assert.equal(await second.page.locator(`[data-testid="slider-ttft-${useCase}"]`).inputValue(), sliderValue);
    assert.equal(await second.page.getByTestId('stat-select').inputValue(), 'p99');
    assert.equal(await second.page.locator('html').getAttribute('data-theme'), 'dark');
    assertClean(problems);
    assertClean(second.problems);
  });

  test('after the reader changes the view, every chart draws what a fresh page at its address draws', async () => {
    // Charts are updated in place (merged or replaced, public/infermeter-echarts.js): nothing
    // an earlier state drew may linger.
    const drawnCharts = (page) => page.evaluate(() => [...document.querySelectorAll('[data-chart-id]')]
      .map((block) => {
        // ECharts adds empty `label: {}` objects to marker data it has merged: they draw nothing.
        const drop = (v) => (Array.isArray(v) ? v.map(drop) : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, drop(x)])
            .filter(([, x]) => !(x && typeof x === 'object' && !Array.isArray(x) && !Object.keys(x).length)))
          : v);
        const chart = window.echarts.getInstanceByDom(block.querySelector('.chart-canvas'));
        const option = chart.getOption();
        return [block.dataset.chartId, option.backgroundColor, drop(option.series.map((s) => [
          s.name, s.data, s.stack, s.lineStyle, s.itemStyle, s.areaStyle, s.symbol,
          s.markLine?.data ?? [], s.markPoint?.data ?? []]))];
      }));
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    await page.getByRole('button', { name: 'Dark theme' }).click();
    await page.getByLabel('Statistic').selectOption('p90');
    const { slider } = await firstSlider(page, 'ttft');
    await slider.focus();
    await page.keyboard.press('Home');
    // States that add to a chart and are then undone: the cursor's markers, a hidden band edge.
    const cursor = page.getByTestId('cursor');
    await cursor.focus();
    await page.keyboard.press('ArrowRight');
    await page.getByTestId('cursor-table').waitFor();
    await page.getByTestId('cursor-clear').click();
    await page.getByTestId('cursor-table').waitFor({ state: 'detached' });
    const bandEdge = page.locator('[data-chart-id="fastest.decode_range"]').getByTestId('legend-item').first();
    await bandEdge.click();
    await page.waitForFunction((el) => el.getAttribute('aria-pressed') === 'false', await bandEdge.elementHandle());
    await bandEdge.click();
    await urlMatches(page, /stat=p90/);
    // Charts redraw in a task after the controls change: read them once two reads agree.
    const settled = async (p) => {
      for (let last = null; ;) {
        const now = JSON.stringify(await drawnCharts(p));
        if (now === last) return JSON.parse(now);
        last = now;
        await p.waitForTimeout(100);
      }
    };
    const changed = await settled(page);

    const fresh = (await newPage(browser)).page;
    await fresh.goto(page.url());
    await chartsDrawn(fresh);
    assert.equal(await fresh.locator('html').getAttribute('data-theme'), 'dark');
    const expected = await settled(fresh);
    assert.equal(changed.length, expected.length);
    for (const [i, [id]] of expected.entries()) assert.deepEqual(changed[i], expected[i], `chart ${id}`);
    assertClean(problems);
  });

  test('PNG and CSV export download the chart', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const chart = page.locator('[data-chart-id="fastest.decode"]');
    const [png] = await Promise.all([page.waitForEvent('download'), chart.getByTestId('export-png').click()]);
    assert.equal(png.suggestedFilename(), 'fastest-decode.png');
    const pngBytes = readFileSync(await png.path());
    assert.equal(pngBytes.subarray(1, 4).toString(), 'PNG');
    // IHDR height: the 360 px canvas at pixel ratio 2, plus the legend drawn under it.
    assert.ok(pngBytes.readUInt32BE(20) > 720, `PNG height ${pngBytes.readUInt32BE(20)} includes the legend`);
    const [csv] = await Promise.all([page.waitForEvent('download'), chart.getByTestId('export-csv').click()]);
    assert.equal(csv.suggestedFilename(), 'fastest-decode.csv');
    const rows = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    assert.ok(rows.length > 4, 'CSV has data rows');
    assert.match(rows[0], /^series,/);
    assertClean(problems);
  });

  test('all measurements: one row per level at the chosen statistic, and the CSV', async () => {
    const report = JSON.parse(readFileSync(new URL(`../../${SAMPLE}`, import.meta.url), 'utf8'));
    const levels = report.series.flatMap((s) => s.levels);
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const section = page.getByTestId('section-measurements');
    await section.waitFor();
    assert.equal(await section.getByTestId('measurements-table').count(), 0, 'folded: not built on load');
    await section.locator('summary').click();
    const table = section.getByTestId('measurements-table');
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), levels.length);
    const headings = await table.locator('thead th').allInnerTexts();
    const ttft = headings.indexOf('TTFT (s)');
    assert.ok(ttft > 0, headings.join('|'));
    // The first level's p99 TTFT as the file has it, rounded as every figure on the page.
    await page.getByLabel('Statistic').selectOption('p99');
    const cell = table.locator('tbody tr').first().locator('th, td').nth(ttft);
    const p99 = levels[0].metrics.ttft_s.p99;
    await page.waitForFunction(([el, want]) => el.textContent === want,
      [await cell.elementHandle(), String(Number(p99.toPrecision(3)))]);
    const [csv] = await Promise.all([page.waitForEvent('download'), section.getByTestId('measurements-csv').click()]);
    const rows = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    assert.equal(rows.length, levels.length + 1);
    assert.match(rows[0], /TTFT \(s\) p99/);
    assert.ok(rows[1].split(',').includes(String(p99)), rows[1]);
    assertClean(problems);
  });

  test('the legend is buttons: Enter hides a series and shows it again', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const id = 'fastest.decode';
    const item = page.locator(`[data-chart-id="${id}"]`).getByTestId('legend-item').first();
    const name = (await item.innerText()).trim();
    const count = ([cid, n]) => {
      const host = document.querySelector(`[data-chart-id="${cid}"] .chart-canvas`);
      const series = window.echarts.getInstanceByDom(host).getOption().series.find((s) => s.name === n);
      return series.data.length;
    };
    const points = () => page.evaluate(count, [id, name]);
    // A chart takes a new option at once on screen, or in a task of its own off screen (where
    // it was, before the focus scrolled to it): waited for either way.
    const drawn = (shown) => page.waitForFunction(
      `(${count})(${JSON.stringify([id, name])}) ${shown ? '> 0' : '=== 0'}`, null, { timeout: 5000 });
    assert.ok(await points() > 0, `${name} has points`);
    assert.equal(await item.getAttribute('aria-pressed'), 'true');
    await item.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(([cid]) => document.querySelector(
      `[data-chart-id="${cid}"] [data-testid="legend-item"]`).getAttribute('aria-pressed') === 'false', [id]);
    await drawn(false); // the hidden series draws nothing
    await page.keyboard.press('Enter');
    await page.waitForFunction(([cid]) => document.querySelector(
      `[data-chart-id="${cid}"] [data-testid="legend-item"]`).getAttribute('aria-pressed') === 'true', [id]);
    await drawn(true); // shown again
    assertClean(problems);
  });

  test('a redraw shows exactly the new option, whether its series are merged or replaced', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const drawn = await page.evaluate(async () => {
      // The app's own update function (public/infermeter-echarts.js) on a chart of its own.
      const glue = performance.getEntriesByType('resource').find((r) => r.name.includes('infermeter-echarts.js'));
      const { updateChart } = await import(glue.name);
      const host = document.createElement('div');
      Object.assign(host.style, { width: '400px', height: '300px' });
      document.body.append(host);
      const chart = window.echarts.init(host);
      const line = (extra) => ({ type: 'line', name: 'a', data: [[1, 1], [2, 2]], ...extra });
      const axes = { xAxis: { type: 'value' }, yAxis: { type: 'value' } };
      const steps = [
        [line({ markPoint: { data: [{ coord: [1, 1] }] }, lineStyle: { width: 2, opacity: 0 } })],
        // Drops the marker and the line's opacity: a merge would keep both.
        [line({ lineStyle: { width: 2 } })],
        // Same keys, new values: merged.
        [line({ data: [[1, 3], [2, 4]], lineStyle: { width: 3 } })],
        // A series more.
        [line({}), line({ name: 'b' })],
      ].map((series) => ({ ...axes, series }));
      chart.setOption(steps[0]);
      const seen = [];
      for (let i = 1; i < steps.length; i++) {
        updateChart(chart, steps[i], steps[i - 1]);
        seen.push(chart.getOption().series.map((s) => ({
          name: s.name, data: s.data, marks: s.markPoint?.data?.length ?? 0, opacity: s.lineStyle?.opacity,
          width: s.lineStyle?.width,
        })));
      }
      chart.dispose();
      host.remove();
      return seen;
    });
    assert.deepEqual(drawn, [
      [{ name: 'a', data: [[1, 1], [2, 2]], marks: 0, opacity: undefined, width: 2 }],
      [{ name: 'a', data: [[1, 3], [2, 4]], marks: 0, opacity: undefined, width: 3 }],
      // ECharts' default width (2), not the width 3 a merge would have kept.
      [{ name: 'a', data: [[1, 1], [2, 2]], marks: 0, opacity: undefined, width: 2 },
        { name: 'b', data: [[1, 1], [2, 2]], marks: 0, opacity: undefined, width: 2 }],
    ]);
    assertClean(problems);
  });

  test('the embed view shows exactly one chart', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE, '&chart=fastest.decode'));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('chart').count(), 1);
    assert.equal(await page.getByTestId('chart').getAttribute('data-chart-id'), 'fastest.decode');
    assert.equal(await page.locator('[data-testid^="section-"]').count(), 0);
    assertClean(problems);
  });

  test('a chart\'s Embed button opens it alone, with the limits the reader set', async () => {
    const { page, problems } = await newPage(browser);
    const { useCase } = await sampleWithTtftAtMinimum(page);
    const id = `capacity.${useCase}`;
    const limit = await drawnLimits(page.locator(`[data-chart-id="${id}"]`));
    await urlMatches(page, new RegExp(`uc\\.${useCase}\\.ttft=`));
    await page.locator(`[data-chart-id="${id}"]`).getByTestId('embed-button').click();
    await urlMatches(page, new RegExp(`chart=${id.replace(/\./g, '\\.')}`));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('chart').count(), 1);
    assert.equal(await page.getByTestId('chart').getAttribute('data-chart-id'), id);
    assert.deepEqual(await drawnLimits(page.getByTestId('chart')), limit, 'the embedded chart draws the limits set on the report page');
    assertClean(problems);
  });

  test('an unknown embed chart id is an error, not a blank page', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE, '&chart=no.such.chart'));
    await page.getByTestId('error-panel').waitFor();
    assert.match(await page.getByTestId('error-panel').innerText(), /no\.such\.chart/);
    assertClean(problems);
  });

  test('every registered chart is headed by its title, on the page and alone in its embed', async () => {
    const { page, problems } = await newPage(browser);
    // The registry (src/charts/registry.rs), as the app lists it to a reader who names a chart
    // the report does not have.
    await page.goto(reportUrl(SAMPLE, '&chart=no.such.chart'));
    const detail = await page.getByTestId('error-detail').innerText();
    const ids = detail.split('name one of its charts: ')[1]?.split(', ') ?? [];
    assert.ok(ids.length >= 20, detail);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const headings = await page.locator('[data-testid^="block-"]').evaluateAll((blocks) => Object.fromEntries(
      blocks.map((b) => [b.dataset.testid.slice('block-'.length), b.querySelector('h3').innerText])));
    assert.deepEqual(Object.keys(headings).sort(), [...ids].sort(), 'one block per registered chart');
    for (const id of ids) {
      await page.goto(reportUrl(SAMPLE, `&chart=${encodeURIComponent(id)}`));
      assert.equal(await page.locator('.embed-title').innerText(), headings[id], `${id}: embed title vs page heading`);
    }
    assertClean(problems);
  });
});

describe('one value per figure', () => {
  test('on the llama.cpp report, the cards and the fastest section state the same peak speed and best TTFT', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('data/reports/llama-cpu-tiny-llama.json'));
    await chartsDrawn(page);
    const card = (id) => page.getByTestId(`highlight-${id}`).locator('.highlight-value').innerText();
    const finding = (id) => page.getByTestId(`block-${id}`).getByTestId('finding').innerText();
    const band = await finding('fastest.decode_range');
    const speed = band.match(/^Peak per-user decode speed is ([\d.]+ tok\/s) \(/)?.[1];
    assert.equal(await card('peak-decode'), speed, band);
    const ttft = await finding('fastest.ttft_range');
    assert.equal(await card('best-ttft'), ttft.match(/^Best TTFT is ([\d.]+ s) \(/)?.[1], ttft);
    // Its highest throughput came in burst mode: the card and the throughput sentence say so,
    // with one figure.
    const throughput = await card('max-throughput');
    assert.match(await page.getByTestId('highlight-max-throughput').innerText(), /\(burst\)/);
    assert.match(await page.getByTestId('throughput-summary').innerText(),
      new RegExp(`Under burst load, .* throughput reaches ${throughput.replace(/[.]/g, '\\.')} \\(`));
    assertClean(problems);
  });
});

/// The charts (ids) whose canvas is not as wide as its host: run in the page.
const chartMisfits = () => [...document.querySelectorAll('.chart-canvas')]
  .filter((host) => Math.abs(host.querySelector('canvas').getBoundingClientRect().width - host.clientWidth) > 1)
  .map((host) => host.closest('[data-chart-id]').dataset.chartId);

describe('small screens', () => {
  test('on a phone-sized screen the report and the landing page never scroll sideways', async () => {
    const { page, problems } = await newPage(browser, { width: 390, height: 844 });
    for (const [url, shown] of [[reportUrl(SAMPLE), chartsDrawn],
      [server.url, (p) => p.getByTestId('report-list').locator('li').first().waitFor()]]) {
      await page.goto(url);
      await shown(page);
      const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(width[0] <= width[1], `${url}: page ${width[0]} px wide on a ${width[1]} px screen`);
    }
    assertClean(problems);
  });

  test('with a desktop browser\'s scrollbars, no width scrolls sideways and every chart fits its host', async () => {
    // Playwright hides scrollbars; most desktop browsers give them ~15 px of the width.
    const shown = await launchBrowser({ ignoreDefaultArgs: ['--hide-scrollbars'] });
    try {
      for (const [url, width] of [[reportUrl(SAMPLE), 800], [reportUrl(SAMPLE), 1000],
        [`${reportUrl(SAMPLE)}&chart=fastest.decode`, 390]]) {
        const { page, problems } = await newPage(shown, { width, height: 600 });
        await page.goto(url);
        await chartsDrawn(page);
        // Wide tables scroll inside their own box; a chart drawn before the page grew a
        // scrollbar is redrawn at its host's new width (waited for, then checked).
        await page.waitForFunction(`(${chartMisfits})().length === 0`, null, { timeout: 5000 })
          .catch(() => {});
        const found = await page.evaluate(() => ({
          page: document.documentElement.scrollWidth,
          screen: document.documentElement.clientWidth,
        }));
        assert.ok(found.page <= found.screen, `${url} at ${width} px: page ${found.page} px wide on ${found.screen}`);
        assert.deepEqual(await page.evaluate(chartMisfits), [], `${url} at ${width} px: charts not as wide as their hosts`);
        assertClean(problems);
        await page.close();
      }
    } finally {
      await shown.close();
    }
  });
});

describe('bad input', () => {
  test('a valid small report loads (control for the corpus)', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('fixtures/browser/fixtures/valid-small.json'));
    await page.getByTestId('section-header').waitFor();
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    assertClean(problems);
  });

  for (const file of MALFORMED) {
    test(`malformed input ${file} shows the error panel`, async () => {
      const { page, problems } = await newPage(browser);
      await page.goto(reportUrl(`fixtures/malformed/${file}`));
      const panel = page.getByTestId('error-panel');
      await panel.waitFor({ timeout: 10000 });
      const text = await panel.innerText();
      assert.ok(text.includes(`fixtures/malformed/${file}`), `the panel names the input: ${text}`);
      const detail = await page.getByTestId('error-detail').innerText();
      assert.ok(detail.trim().length > 10, `the panel says what is wrong: ${detail}`);
      assert.equal(await page.locator('[data-testid^="section-"]').count(), 0);
      assertClean(problems);
    });
  }

  test('the error says where: line and column, or the JSON path', async () => {
    const { page } = await newPage(browser);
    await page.goto(reportUrl('fixtures/malformed/truncated.json'));
    assert.match(await page.getByTestId('error-detail').innerText(), /line \d+, column \d+/);
    await page.goto(reportUrl('fixtures/malformed/percentiles-out-of-order.json'));
    assert.match(await page.getByTestId('error-detail').innerText(), /series\[0\]\.levels\[0\]\.metrics\.ttft_s/);
    await page.goto(reportUrl('fixtures/malformed/wrong-major-version.json'));
    assert.match(await page.getByTestId('error-detail').innerText(), /2\.0\.0/);
  });

  test('a missing report URL shows the HTTP error', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('fixtures/nope.json'));
    assert.match(await page.getByTestId('error-detail').innerText(), /404/);
    assertClean(problems);
  });

  test('the file picker opens reports and rejects malformed ones', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    await page.getByTestId('landing').waitFor();
    await page.getByTestId('file-input').first().setInputFiles(join(malformedDir, 'unknown-scenario.json'));
    await page.getByTestId('error-panel').waitFor();
    assert.match(await page.getByTestId('error-panel').innerText(), /unknown-scenario\.json.*no_such_scenario/s);
    const valid = new URL('fixtures/valid-small.json', import.meta.url).pathname;
    await page.getByTestId('file-input').first().setInputFiles(valid);
    await page.getByTestId('section-header').waitFor();
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    assertClean(problems);
  });

  test('dropping a file on the page opens it', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(server.url);
    await page.getByTestId('landing').waitFor();
    const text = readFileSync(join(malformedDir, 'truncated.json'), 'utf8');
    const transfer = await page.evaluateHandle((t) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], 'dropped.json', { type: 'application/json' }));
      return dt;
    }, text);
    await page.getByTestId('drop-zone').dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByTestId('error-panel').waitFor();
    assert.match(await page.getByTestId('error-panel').innerText(), /dropped\.json.*line \d+, column \d+/s);
    assertClean(problems);
  });

  test('an absurd but finite figure reads as a power of ten, in text and tooltips alike', async () => {
    const report = JSON.parse(readFileSync(new URL('./fixtures/valid-small.json', import.meta.url), 'utf8'));
    const decode = report.series[0].levels[0].metrics.decode_tok_s;
    for (const key of ['mean', 'min', 'max', 'p50', 'p90', 'p95', 'p99', 'p999']) decode[key] = 1e300;
    decode.stddev = 0;
    const { page, problems } = await newPage(browser);
    await page.route('**/absurd.json', (route) => route.fulfill({ json: report }));
    await page.goto(reportUrl('absurd.json'));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('error-panel').count(), 0);
    // Not 301 digits: the finding, the highlight card and the tooltip all say 1e300.
    assert.match(await page.getByTestId('block-fastest.decode').getByTestId('finding').innerText(),
      /ranges from 1e300 tok\/s \(Chatbot, single user\)/);
    assert.equal(await page.getByTestId('highlight-peak-decode').locator('.highlight-value').innerText(), '1e300 tok/s');
    await hoverFirstPoint(page, 'fastest.decode');
    assert.match(await tooltip(page, 'fastest.decode').innerText(), /Chatbot: 1e300 tok\/s/);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      'nothing scrolls sideways');
    assertClean(problems);
  });

  test('markup in report text shows as text and runs nothing, tooltips included', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('fixtures/browser/fixtures/hostile-names.json'));
    await page.getByTestId('section-header').waitFor();
    await chartsDrawn(page);
    assert.ok((await page.locator('body').innerText()).includes(XSS), 'shown literally');
    const ids = await page.getByTestId('chart').evaluateAll((els) => els.map((e) => e.dataset.chartId));
    for (const id of ids) {
      const chart = page.locator(`[data-chart-id="${id}"]`);
      await chart.scrollIntoViewIfNeeded();
      const hasPoint = await page.evaluate((cid) => {
        const host = document.querySelector(`[data-chart-id="${cid}"] .chart-canvas`);
        const s = window.echarts.getInstanceByDom(host).getOption().series;
        return s.length > 0 && (s[0].data ?? []).length > 0;
      }, id);
      if (!hasPoint) continue;
      const p = await pointPosition(page, id, 0, 0);
      await page.mouse.move(p.x, p.y);
      await page.mouse.click(p.x, p.y);
    }
    // The folded measurements table names every scenario too.
    const measurements = page.getByTestId('section-measurements');
    await measurements.locator('summary').click();
    assert.equal(await measurements.getByTestId('measurements-table').locator('tbody th').first().innerText(),
      `${XSS} scenario`);
    await page.waitForTimeout(300);
    assert.ok(await page.locator('.chart-canvas div').filter({ hasText: 'onerror' }).count() > 0,
      'the hostile name reached a tooltip (so the check below means something)');
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.equal(await page.locator('script:not([src])').filter({ hasText: 'alert' }).count(), 0);
    assertClean(problems);
  });
});

describe('controls', () => {
  test('the theme toggle and statistic are labelled and keyboard reachable', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    const toggle = page.getByRole('button', { name: 'Dark theme' });
    await toggle.focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    await page.getByLabel('Statistic').selectOption('p90');
    await urlMatches(page, /stat=p90/);
    const unlabelled = await page.locator('input, select, button').evaluateAll((els) => els.filter((e) => {
      const label = e.getAttribute('aria-label') || e.labels?.[0]?.innerText || e.innerText || e.title;
      return !label || !label.trim();
    }).map((e) => e.outerHTML.slice(0, 80)));
    assert.deepEqual(unlabelled, [], 'every control has a label');
    assertClean(problems);
  });
});

describe('accessibility', () => {
  // axe-core's WCAG 2.1 A and AA rules and its best practices: names that match what a control
  // shows, text contrast in both themes, headings and landmarks. Charts are canvases, which axe
  // does not read; their tooltips are HTML and are checked while one is shown.
  const AXE = readFileSync(npmToolFile('axe-core/axe.min.js'), 'utf8');
  const RULES = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
  // (page, its address, what to wait for before the check, the viewport if not the default)
  const listed = (page) => page.getByTestId('report-list').waitFor();
  const hovered = async (page) => {
    await chartsDrawn(page);
    // The folded measurements table, opened so its markup is checked too (not in an embed).
    const measurements = page.getByTestId('section-measurements');
    if (await measurements.count()) {
      await measurements.locator('summary').click();
      await measurements.getByTestId('measurements-table').first().waitFor();
    }
    await hoverFirstPoint(page, 'fastest.decode');
  };
  const refused = (page) => page.getByTestId('error-panel').waitFor();
  const PAGES = [
    ['the landing page', '', listed],
    ['a report', `?report=${encodeURIComponent(SAMPLE)}`, hovered],
    ['a report in the dark theme', `?report=${encodeURIComponent(SAMPLE)}&theme=dark`, hovered],
    // Tables scroll sideways on a phone; axe checks each such box can take keyboard focus.
    ['a report on a phone', `?report=${encodeURIComponent(SAMPLE)}`, hovered, { width: 390, height: 844 }],
    ['two reports compared', `?report=${encodeURIComponent(SAMPLE)}&compare=${encodeURIComponent(`data/${INDEX.reports[0].path}`)}`, hovered],
    ['an embedded chart', `?report=${encodeURIComponent(SAMPLE)}&chart=fastest.decode`, hovered],
    // The What If section's controls and cards: only a report with a fit has them.
    ['a report with a fit', `?report=${encodeURIComponent('data/reports/h100-transformers-llama-3.1-8b-shape.json')}`, hovered],
    ['a malformed report', '?report=fixtures/malformed/truncated.json', refused],
  ];
  for (const [name, query, ready, viewport] of PAGES) {
    test(`${name} passes axe's WCAG 2.1 AA checks`, async () => {
      const { page, problems } = await newPage(browser, viewport);
      await page.goto(server.url + query);
      await ready(page);
      if (query.includes('theme=dark')) assert.equal(await page.locator('html').getAttribute('data-theme'), 'dark');
      await page.addScriptTag({ content: AXE });
      const violations = await page.evaluate(async (tags) => {
        const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags } });
        return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
      }, RULES);
      assert.deepEqual(violations, []);
      assertClean(problems);
    });
  }
});

// Browser tests of what a first look at a report trips on (issue #44): a contents link must land
// its section's heading below the bars that stay at the top, and a comparison's deep dive must
// draw one report at a time, the others a click away.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertClean, browser, reportUrl, server, useBrowser, changedFrom } from './harness.mjs';
import { chartsDrawn, drawnSeries, newPage, urlMatches } from './support.mjs';

const SAMPLE = 'data/reports/sample-synthetic.json';
const INDEX = JSON.parse(readFileSync(new URL('../../data/index.json', import.meta.url), 'utf8'));
const COMPARISON = INDEX.comparisons[0].paths.map((p) => `data/${p}`);
const CHART = 'deep_dive.throughput';

useBrowser();

/// Where section `id` and its heading are, where the bars that stay at the top end (the lowest
/// bottom edge of a sticky or fixed element stuck at its offset from the top), and how many rows
/// the contents take.
function headingAndBars(page, id) {
  return page.evaluate((target) => {
    const section = document.getElementById(target);
    const heading = section.querySelector('h2').getBoundingClientRect();
    const stuck = [...document.querySelectorAll('body *')].filter((e) => {
      const style = getComputedStyle(e);
      return ['sticky', 'fixed'].includes(style.position)
        && Math.abs(e.getBoundingClientRect().top - parseFloat(style.top)) < 1;
    });
    return {
      sectionTop: section.getBoundingClientRect().top,
      top: heading.top,
      bottom: heading.bottom,
      barsBottom: Math.max(0, ...stuck.map((e) => e.getBoundingClientRect().bottom)),
      viewport: innerHeight,
      tocRows: new Set([...document.querySelectorAll('.toc li')].map((li) => li.getBoundingClientRect().top)).size,
    };
  }, id);
}

describe('table of contents', () => {
  for (const width of [1300, 1100, 800]) {
    test(`at ${width} px wide, each contents link lands its section's heading fully below the bars`, async () => {
      const { page, problems } = await newPage(browser, { width, height: 800 });
      await page.goto(reportUrl(SAMPLE));
      await chartsDrawn(page);
      const links = page.getByTestId('toc').getByRole('link');
      const ids = await links.evaluateAll((all) => all.map((a) => a.hash.slice(1)));
      assert.ok(ids.length >= 14, `${ids.length} links`);
      for (const [i, id] of ids.entries()) {
        // From the bottom of the page, so each link scrolls up to its section.
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await links.nth(i).click();
        await urlMatches(page, new RegExp(`#${id}$`));
        const at = await headingAndBars(page, id);
        if (width >= 1100) assert.ok(at.tocRows >= 2, `the bar wraps at ${width} px (${at.tocRows} rows)`);
        // The section's box, and so its heading, starts below the bars: nothing of it under them.
        assert.ok(at.sectionTop >= at.barsBottom, `#${id}: section top ${at.sectionTop} under the bars ending at ${at.barsBottom}`);
        assert.ok(at.top >= at.barsBottom, `#${id}: heading top ${at.top} under the bars ending at ${at.barsBottom}`);
        assert.ok(at.bottom <= at.viewport, `#${id}: heading bottom ${at.bottom} below the viewport`);
        // Landed on it, not merely somewhere below the bars (the page's end stops the last ones).
        const last = await page.evaluate(() => innerHeight + scrollY >= document.documentElement.scrollHeight - 2);
        if (!last) assert.ok(at.sectionTop - at.barsBottom < 40, `#${id}: section ${at.sectionTop - at.barsBottom} px below the bars`);
      }
      assertClean(problems);
    });
  }

  test('an address naming a section opens the page with its heading below the bars', async () => {
    const { page, problems } = await newPage(browser, { width: 1300, height: 800 });
    await page.goto(`${reportUrl(SAMPLE)}#deep-dive`);
    await chartsDrawn(page);
    await page.waitForFunction(() => scrollY > 0);
    const at = await headingAndBars(page, 'deep-dive');
    assert.ok(at.sectionTop >= at.barsBottom && at.bottom <= at.viewport, JSON.stringify(at));
    assertClean(problems);
  });
});

/// The address of the bundled comparison, with `extra` query.
function comparisonUrl(extra = '') {
  const [main, ...rest] = COMPARISON;
  return `${server.url}?report=${encodeURIComponent(main)}${rest.map((r) => `&compare=${encodeURIComponent(r)}`).join('')}${extra}`;
}

/// The report labels the deep dive's throughput chart draws lines of ("LABEL · 8 concurrent").
async function drawnReports(page) {
  const series = await drawnSeries(page, CHART);
  return [...new Set(series.map((s) => s.name.split(' · ')[0]))];
}

describe('comparison deep dive', () => {
  test('draws one report at a time, the others a click away, and all together on request', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(comparisonUrl());
    await chartsDrawn(page);
    const buttons = page.getByTestId('deep-dive-pick').getByTestId('deep-dive-report');
    const labels = await buttons.allInnerTexts();
    assert.equal(labels.length, COMPARISON.length + 1, labels.join(', '));
    assert.equal(labels.at(-1), 'All together');
    const pressed = () => buttons.evaluateAll((all) => all.map((b) => b.getAttribute('aria-pressed')));
    assert.deepEqual(await pressed(), ['true', ...COMPARISON.map(() => 'false')]);
    // The main report's lines alone, a handful, not every report's (its sweep's levels, which
    // every context measured; a search's probes of one scenario draw no line by context).
    assert.deepEqual(await drawnReports(page), [labels[0]]);
    const mainLines = (await drawnSeries(page, CHART)).length;
    assert.ok(mainLines >= 2 && mainLines <= 8, `${mainLines} lines`);
    let drawn = [labels[0]];
    for (const i of [2, 1]) {
      await buttons.nth(i).click();
      drawn = await changedFrom(drawn, () => drawnReports(page), 'the drawn report');
      assert.deepEqual(drawn, [labels[i]]);
      await urlMatches(page, new RegExp(`[?&]deep=${i}(&|$)`));
      assert.equal((await pressed())[i], 'true');
      // The sentence under the chart speaks of the report drawn.
      const finding = await page.getByTestId(`block-${CHART}`).getByTestId('finding').innerText();
      assert.ok(finding.startsWith(`${labels[i]}:`) && !finding.includes(`${labels[0]}:`), finding);
    }
    await buttons.last().click();
    const all = await changedFrom(drawn, () => drawnReports(page), 'the drawn reports');
    assert.deepEqual(all.sort(), labels.slice(0, -1).sort());
    // The pick is in the address: a fresh page there draws the same.
    await urlMatches(page, /[?&]deep=all(&|$)/);
    const again = (await newPage(browser)).page;
    await again.goto(page.url());
    await chartsDrawn(again);
    assert.deepEqual((await drawnReports(again)).sort(), all);
    assertClean(problems);
  });

  test('a single report has no pick and draws its own lines', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('deep-dive-pick').count(), 0);
    assert.ok((await drawnSeries(page, CHART)).length >= 2);
    assertClean(problems);
  });
});

describe('the sections below the first screen', () => {
  test('when their module cannot be fetched, the page says so and to reload, never ends blank', async () => {
    const { page, problems } = await newPage(browser);
    // The module of the sections below the first screen (scripts/build-viewer.sh splits it off).
    let blocked = 0;
    await page.route(/\/split-[0-9a-f]+\.wasm(\?|$)/, (route) => { blocked += 1; return route.abort(); });
    await page.goto(reportUrl(SAMPLE));
    const panel = page.getByTestId('sections-error');
    await panel.waitFor({ timeout: 15000 });
    assert.ok(blocked >= 1, 'the module was requested');
    assert.match(await panel.innerText(), /could not be loaded[\s\S]*Reload the page/);
    assert.equal(await panel.getAttribute('role'), 'alert');
    // The first screen stays, its chart drawn, and the page is no longer busy.
    await chartsDrawn(page);
    assert.ok(await page.getByTestId('section-choice').isVisible());
    assert.equal(await page.getByTestId('section-scenarios').count(), 0);
    // The app goes on: the first screen's controls still work (no panic stopped the wasm).
    const stat = page.getByTestId('stat-select');
    await stat.selectOption('p50');
    await urlMatches(page, /[?&]stat=p50(&|$)/);
    assertClean(problems);
  });
});

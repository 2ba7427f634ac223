// Browser tests of the Agents section (#46): job completion time by concurrent jobs, where the
// jobs' time went, jobs served under the page's SLO, and one job's swim lanes, on an agentic
// report the collector measured on the simulator (tests/browser/fixtures/make-agents.sh); a
// report without agents shows no such section. Run: node --test tests/browser/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { assertClean, browser, changedFrom, reportUrl, useBrowser } from './harness.mjs';
import {
  chartSettled, chartsDrawn, drawnSeries, newPage, pointPosition, urlMatches,
} from './support.mjs';

const AGENTS = 'fixtures/browser/fixtures/agents.json';
const SAMPLE = 'data/reports/sample-synthetic.json';
const REPORT = JSON.parse(readFileSync(new URL('./fixtures/agents.json', import.meta.url), 'utf8'));

useBrowser();

/// The level the swim lanes draw (the most concurrent jobs) and its sample job, from the file.
function sampleJob() {
  const levels = REPORT.series.filter((s) => s.mode === 'agents').flatMap((s) => s.levels);
  const level = levels.reduce((a, b) => (b.concurrency > a.concurrency ? b : a));
  return level.agents.sample_job;
}

describe('agents section', () => {
  test('the section shows completion times, where the time went and one job as swim lanes', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(AGENTS));
    await chartsDrawn(page);
    const section = page.getByTestId('section-agents');
    await section.scrollIntoViewIfNeeded();
    assert.equal(await page.getByTestId('toc').getByRole('link', { name: 'Agentic Jobs' }).count(), 1);
    // Completion time at each level tested.
    const completion = await drawnSeries(page, 'agents.completion');
    assert.deepEqual(completion[0].data.map((p) => p[0]), [1, 4, 8]);
    // Each level's split of the jobs' time: three parts summing to the whole.
    const splits = section.getByTestId('time-split');
    assert.equal(await splits.count(), 3);
    const widths = await splits.first().locator('.part').evaluateAll(
      (parts) => parts.map((p) => parseFloat(p.style.width)));
    assert.ok(Math.abs(widths.reduce((a, b) => a + b, 0) - 100) < 0.5, JSON.stringify(widths));
    assert.match(await section.getByTestId('agents-capacity').innerText(),
      /concurrent jobs? within the SLO|no level tested meets the SLO/);
    // Swim lanes: one bar per call of the sample job, on its agent's lane, send to last token.
    const job = sampleJob();
    const lanes = await drawnSeries(page, 'agents.lanes');
    const bars = lanes.filter((s) => s.name === 'Root' || s.name.startsWith('Agent '));
    assert.equal(bars.length, job.calls.length);
    for (const [i, call] of job.calls.entries()) {
      const [[sent, lane], [end]] = bars[i].data;
      assert.equal(lane, call.place.agent);
      assert.ok(Math.abs(sent - call.sent_s) < 1e-9 && Math.abs(end - call.end_s) < 1e-9, JSON.stringify(bars[i]));
    }
    const agents = new Set(job.calls.map((c) => c.place.agent)).size;
    assert.ok(agents > 1, 'the job has subagents');
    assert.equal(lanes.filter((s) => s.name === 'Spawn').length, agents - 1, 'every subagent spawned');
    assert.ok(lanes.some((s) => s.name === 'Join'), 'a join drawn');

    // Hovering a subagent's call names its agent, depth and tokens.
    const id = 'agents.lanes';
    const index = job.calls.findIndex((c) => c.place.depth > 0);
    const call = job.calls[index];
    await page.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
    await chartSettled(page, id);
    const point = await pointPosition(page, id, index, 1);
    await page.mouse.move(point.x - 8, point.y - 8);
    await page.mouse.move(point.x, point.y, { steps: 4 });
    const tip = page.locator(`[data-chart-id="${id}"] .chart-canvas > div:not(:first-child)`);
    await tip.waitFor({ state: 'visible' });
    const text = await tip.innerText();
    assert.ok(text.includes(`Agent ${call.place.agent}, depth ${call.place.depth}, call ${call.place.call + 1}`), text);
    assert.ok(text.includes(`${call.input_tokens.toLocaleString('en-US')} prompt tokens`), text);
    assert.ok(text.includes(`${call.output_tokens.toLocaleString('en-US')} output tokens`), text);
    assertClean(problems);
  });

  test('the SLO sliders move the jobs served', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(AGENTS));
    await chartsDrawn(page);
    const capacity = page.getByTestId('agents-capacity').first();
    assert.match(await capacity.innerText(), /serves 8 concurrent jobs within the SLO/);
    const verdicts = () => page.getByTestId('agents-meets').allInnerTexts();
    const before = await verdicts();
    assert.ok(before.every((v) => v.startsWith('yes')), JSON.stringify(before));
    // The section's TTFT slider is the page's SLO: at 0.1 s the busier levels fail.
    const slider = page.getByTestId('jobs-slider-ttft');
    await slider.focus();
    await page.keyboard.press('Home');
    await urlMatches(page, /ttft=0\.1/);
    const after = await changedFrom(before, verdicts, 'the verdicts under the moved TTFT bound');
    assert.ok(after.at(-1).startsWith('no'), JSON.stringify(after));
    const text = await capacity.innerText();
    assert.match(text, /calls' first token within 0\.1 s/);
    const served = Number(text.match(/serves (\d+) concurrent jobs?/)?.[1] ?? 0);
    assert.ok(served < 8, text);
    // The goodput section reads the same SLO.
    assert.equal(await page.getByTestId('goodput-slider-ttft').getAttribute('aria-valuetext'), '0.1 s');
    assertClean(problems);
  });

  test('the job bound slider moves the jobs served', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(AGENTS));
    await chartsDrawn(page);
    const capacity = page.getByTestId('agents-capacity').first();
    const verdicts = () => page.getByTestId('agents-meets').allInnerTexts();
    const before = await verdicts();
    const slider = page.getByTestId('jobs-slider-job');
    assert.match(await slider.getAttribute('aria-valuetext'), /^600 s$/);
    // From half a second, four steps of half a second: a 2.5 s bound on job completion.
    await slider.focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < 4; i += 1) await page.keyboard.press('ArrowRight');
    await urlMatches(page, /slo\.job=2\.5/);
    const after = await changedFrom(before, verdicts, 'the verdicts under the moved job bound');
    // Recomputed from the file: the most concurrent jobs whose level, and each below it, has
    // 95% of its jobs done within 2.5 s (every call's TTFT meets the default bound here).
    const levels = REPORT.series.filter((s) => s.mode === 'agents').flatMap((s) => s.levels);
    let served = 0;
    for (const level of levels) {
      const jobs = level.agents.jobs;
      if (jobs.filter((j) => j.ok && j.wall_s <= 2.5).length / jobs.length < 0.95) break;
      served = level.concurrency;
    }
    assert.ok(served > 0 && served < 8, `${served}`);
    assert.deepEqual(after.map((v) => v.startsWith('yes')),
      levels.map((l) => l.concurrency <= served), JSON.stringify(after));
    const text = await capacity.innerText();
    assert.ok(text.includes(`serves ${served} concurrent jobs within the SLO (jobs within 2.5 s`), text);
    assertClean(problems);
  });

  test('the bundled agentic report shows its jobs as swim lanes', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('data/reports/sim-agents.json'));
    await chartsDrawn(page);
    await page.getByTestId('section-agents').scrollIntoViewIfNeeded();
    const completion = await drawnSeries(page, 'agents.completion');
    assert.deepEqual(completion[0].data.map((p) => p[0]), [1, 2, 4, 8]);
    const lanes = await drawnSeries(page, 'agents.lanes');
    assert.ok(lanes.some((s) => s.name.includes('depth 1')), 'a subagent drawn');
    // Four levels of concurrent jobs, then two job rates, each with jobs per hour per user.
    assert.equal(await page.getByTestId('time-split').count(), 6);
    const loads = await page.getByTestId('agents-levels').locator('tbody th').allInnerTexts();
    assert.deepEqual(loads, ['1 job', '2 jobs', '4 jobs', '8 jobs', '0.2 jobs/s', '0.4 jobs/s']);
    const perUser = await page.getByTestId('agents-per-user').allInnerTexts();
    assert.ok(perUser.every((t) => Number(t.replace(/,/g, '')) > 0), JSON.stringify(perUser));
    assert.match(await page.getByTestId('agents-capacity').innerText(), /new jobs\/s within the SLO|no job rate tested meets/);
    assertClean(problems);
  });

  test('a report without agents shows no agents section and no contents entry', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('section-agents').count(), 0);
    assert.equal(await page.getByTestId('toc').getByRole('link', { name: 'Agentic Jobs' }).count(), 0);
    assertClean(problems);
  });
});

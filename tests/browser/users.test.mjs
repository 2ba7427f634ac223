// Browser tests of the Users section (sessions, prefix caching, timelines) and the header's
// workloads, on a session report the collector measured on the simulator
// (tests/browser/fixtures/make-sessions.sh). Run: node --test tests/browser/
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { assertClean, browser, changedFrom, reportUrl, useBrowser } from './harness.mjs';
import { chartsDrawn, drawnSeries, newPage, pointPosition, urlMatches } from './support.mjs';

const SESSIONS = 'fixtures/browser/fixtures/sessions.json';
const HOSTILE = 'fixtures/browser/fixtures/sessions-hostile.json';
const SAMPLE = 'data/reports/sample-synthetic.json';
const XSS = '<img src=x onerror=alert(1)>';
const USERS_CHARTS = ['users.ttft_by_turn', 'users.ttft_by_users', 'users.cache_hits', 'users.timeline'];

useBrowser();

describe('users section', () => {
  test('a session report shows users served, TTFT by turn cached vs uncached, cache hits and a timeline', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SESSIONS));
    await chartsDrawn(page);
    const section = page.getByTestId('section-users');
    await section.scrollIntoViewIfNeeded();
    assert.equal(await page.getByTestId('toc').getByRole('link', { name: 'Users, Sessions and Caching' }).count(), 1);
    // The header says which workloads ran.
    assert.equal(await page.getByTestId('workloads').innerText(),
      'request sweeps (peak, burst), Chat sessions (users 1–16, caching allowed and defeated), trace replay (sample-mooncake, 4×)');
    // Users were measured: no rule of thumb of users per request slot.
    assert.doesNotMatch(await page.getByTestId('slots-note').innerText(), /4–5/);
    // Users served: both cache uses, in users.
    const served = section.getByTestId('users-served');
    assert.deepEqual(await served.locator('thead th').allInnerTexts(),
      ['Scenario', 'Limits', 'Caching allowed', 'Caching defeated']);
    const firstCell = await served.locator('tbody tr').first().locator('td').nth(1).innerText();
    assert.match(firstCell, /users?\b/);
    for (const id of USERS_CHARTS) {
      assert.equal(await section.locator(`[data-chart-id="${id}"]`).count(), 1, `${id} drawn`);
    }
    // TTFT by turn: turns 1 to 4, caching allowed and defeated side by side; later turns come
    // sooner with the cache.
    const turns = await drawnSeries(page, 'users.ttft_by_turn');
    assert.deepEqual(turns.map((s) => s.name), ['Chat · caching allowed', 'Chat · caching defeated']);
    assert.deepEqual(turns[0].data.map((p) => p[0]), [1, 2, 3, 4]);
    assert.ok(turns[0].data[3][1] < turns[1].data[3][1], JSON.stringify(turns));
    const hits = await drawnSeries(page, 'users.cache_hits');
    assert.ok(hits[1].data.every((p) => p[1] === 0), 'nothing cached with caching defeated');
    assert.ok(hits[0].data.at(-1)[1] > 50, 'most of the conversation cached with caching allowed');
    const sentences = await section.getByTestId('finding').allInnerTexts();
    assert.ok(sentences.some((s) => /^At 16 users, turn 4 of Chat: .* with caching, .* without/.test(s)), sentences.join('\n'));
    assert.match(await section.getByTestId('timeline-finding').innerText(), /^Over .* in 2 s slices: /);
    assertClean(problems);
  });

  test('the level picker changes the timeline and the address; the address brings it back', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SESSIONS));
    await chartsDrawn(page);
    const picker = page.getByTestId('timeline-level');
    await picker.scrollIntoViewIfNeeded();
    const options = await picker.locator('option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
    assert.equal(await picker.inputValue(), 'chat.users.allowed.16', 'the heaviest users level first');
    assert.ok(options.some(([, label]) => label === 'Trace sample-mooncake · 4× speed'), JSON.stringify(options));
    const drawn = () => drawnSeries(page, 'users.timeline');
    const before = await drawn();
    await picker.selectOption('chat.users.defeated.4');
    await urlMatches(page, /timeline=chat\.users\.defeated\.4/);
    const after = await changedFrom(before, drawn, 'the timeline');
    assert.ok(after[0].data.length > 0);
    await page.getByTestId('timeline-metric').selectOption('cache_hit_ratio');
    await urlMatches(page, /timeline_metric=cache_hit_ratio/);
    const cached = await changedFrom(after, drawn, 'the plotted metric');
    assert.ok(cached[0].data.every((p) => p[1] === 0), 'caching defeated: no slice hits the cache');
    // A reload of the address shows the same level and metric.
    await page.reload();
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('timeline-level').inputValue(), 'chat.users.defeated.4');
    assert.equal(await page.getByTestId('timeline-metric').inputValue(), 'cache_hit_ratio');
    assert.deepEqual(await drawn(), cached);
    // The timeline is a chart of its own: embeddable with the same view.
    await page.goto(`${page.url()}&chart=users.timeline`);
    await page.getByTestId('embed').waitFor();
    assertClean(problems);
  });

  test('a session scenario\'s capacity is in users; its slider changes users served', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SESSIONS));
    await chartsDrawn(page);
    assert.match(await page.getByTestId('capacity-card-chat').innerText(), /\d+ users?\b/);
    assert.match(await page.getByTestId('capacity-figure-chat').innerText(), /^(≈ )?\d+ users?$/);
    // The request sweep (1K in, 128 out: the code-completion use case) stays in requests.
    const requests = await page.getByTestId('capacity-figure-code_completion').innerText();
    assert.match(requests, /request|Not recommended/);
    assert.doesNotMatch(requests, /user/);
    const served = page.getByTestId('users-served');
    const row = served.locator('tbody tr').filter({ hasText: 'Chat (default limits)' });
    const cells = () => row.locator('td').allInnerTexts();
    const before = await cells();
    const slider = page.getByTestId('slider-ttft-chat');
    await slider.focus();
    await page.keyboard.press('Home');
    await urlMatches(page, /uc\.chat\.ttft=/);
    const after = await changedFrom(before, cells, 'users served under the moved limit');
    assert.match(after[0], /TTFT < 0\.5 s/);
    assertClean(problems);
  });

  test('the bundled chat sessions reach their limit with caching defeated; the page says what caching adds', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl('data/reports/sim-chat-sessions.json'));
    await chartsDrawn(page);
    const section = page.getByTestId('section-users');
    await section.scrollIntoViewIfNeeded();
    // Under some use case's limits the users with caching defeated stop meeting them: how
    // many users caching adds is stated (report crate: sessions::caching_gains).
    const gains = await section.getByTestId('caching-gain').allInnerTexts();
    assert.ok(gains.length > 0, 'a caching gain is stated');
    for (const gain of gains) {
      assert.match(gain, /^Within the limits of .+, prefix caching adds (at least )?\d+ users? to Chat session: (≥ )?\d+ with it( \(every level tested passes\))?, \d+ without\.$/);
    }
    assert.ok(gains.some((g) => !/adds (at least )?0 users/.test(g)), gains.join('\n'));
    assertClean(problems);
  });

  test('a report without sessions has no Users section and no contents entry', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(SAMPLE));
    await chartsDrawn(page);
    assert.equal(await page.getByTestId('section-users').count(), 0);
    assert.equal(await page.locator('#users').count(), 0);
    const toc = await page.getByTestId('toc').locator('a').allInnerTexts();
    assert.ok(toc.length > 5 && !toc.includes('Users, Sessions and Caching'), toc.join(', '));
    assert.equal(await page.getByTestId('workloads').innerText(), 'request sweeps (peak, burst)');
    assert.doesNotMatch(await page.getByTestId('slots-note').innerText(), /4–5/);
    assert.match(await page.getByTestId('slots-note').innerText(), /measured by a users run/);
    assertClean(problems);
  });

  test('compared with a report without sessions, the session report\'s lines carry its label', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(`${reportUrl(SESSIONS)}&compare=${encodeURIComponent(SAMPLE)}`);
    await chartsDrawn(page);
    const turns = await drawnSeries(page, 'users.ttft_by_turn');
    assert.equal(turns.length, 2);
    assert.ok(turns.every((s) => s.name.endsWith('· Chat · caching allowed') || s.name.endsWith('· Chat · caching defeated')),
      JSON.stringify(turns.map((s) => s.name)));
    assertClean(problems);
  });

  test('markup in a session report\'s names shows as text, tooltips and pickers included', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(reportUrl(HOSTILE));
    await chartsDrawn(page);
    const section = page.getByTestId('section-users');
    await section.scrollIntoViewIfNeeded();
    assert.ok((await section.innerText()).includes(`${XSS} Chat`), 'shown literally in the section');
    assert.ok((await page.getByTestId('workloads').innerText()).includes(`${XSS} Chat sessions`));
    const labels = await page.getByTestId('timeline-level').locator('option').allInnerTexts();
    assert.ok(labels.some((l) => l.startsWith(`Trace ${XSS}`) || l.startsWith(`${XSS} Trace`)), labels.join('\n'));
    for (const id of USERS_CHARTS) {
      await section.locator(`[data-chart-id="${id}"]`).scrollIntoViewIfNeeded();
      const p = await pointPosition(page, id, 0, 0);
      await page.mouse.move(p.x - 6, p.y - 6);
      await page.mouse.move(p.x, p.y, { steps: 4 });
    }
    await page.waitForTimeout(300);
    assert.ok(await page.locator('.chart-canvas div').filter({ hasText: 'onerror' }).count() > 0,
      'a hostile name reached a tooltip (so the check below means something)');
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assertClean(problems);
  });
});

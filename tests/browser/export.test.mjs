// The file `infermeter export` writes, opened from disk (file://) in headless chromium: the
// whole viewer works from that one file, and it asks for nothing else.
// Run: node --test tests/browser/ (after scripts/build-viewer.sh; builds the collector if needed)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { chartsDrawn, distDir, launchBrowser } from './support.mjs';

const root = resolve(new URL('../..', import.meta.url).pathname);
const SAMPLE = join(root, 'data/reports/sample-synthetic.json');
const HOSTILE = join(root, 'tests/browser/fixtures/hostile-names.json');
const XSS = '<img src=x onerror=alert(1)>';

let browser;
let dir;
let exported;
let printed;
before(async () => {
  // The collector as the tests built it (a no-op then); the viewer from dist/, as just built.
  const build = spawnSync('cargo', ['build', '--locked', '-q', '-p', 'infermeter'], { stdio: 'inherit' });
  assert.equal(build.status, 0, 'cargo build -p infermeter');
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache/infermeter/target');
  dir = mkdtempSync(join(tmpdir(), 'infermeter-export-'));
  exported = join(dir, 'two reports.html');
  const run = spawnSync(join(targetDir, 'debug/infermeter'),
    ['export', SAMPLE, HOSTILE, '-o', exported, '--dist', distDir], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  printed = run.stdout;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/// Opens the exported file; records every request the page makes and refuses any that is not
/// the file itself or a data:/blob: URL, and every error, dialog and download.
async function openExport(query = '') {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const pageUrl = `file://${exported.replaceAll(' ', '%20')}`;
  const seen = { requests: [], refused: [], pageErrors: [], dialogs: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(pageUrl)) return route.continue();
    seen.refused.push(url);
    return route.abort();
  });
  page.on('request', (r) => seen.requests.push(r.url()));
  page.on('pageerror', (e) => seen.pageErrors.push(String(e)));
  page.on('dialog', async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(pageUrl + query);
  return { page, seen, pageUrl };
}

function assertOffline(seen, pageUrl) {
  assert.ok(seen.requests.some((url) => url.startsWith(pageUrl)), 'requests are observed');
  const elsewhere = seen.requests.filter((url) => !url.startsWith(pageUrl)
    && !url.startsWith('data:') && !url.startsWith('blob:'));
  assert.deepEqual(elsewhere, [], 'requests other than the file itself and data:/blob: URLs');
  assert.deepEqual(seen.refused, [], 'requests to the network');
  assert.deepEqual(seen.pageErrors, [], 'uncaught page errors');
  assert.deepEqual(seen.dialogs, [], 'dialogs opened (script from a report ran)');
}

describe('an exported file opened from disk', () => {
  test('the export says what it wrote and how large it is', () => {
    assert.match(printed, /^Wrote .*two reports\.html: [\d.]+ KB \(the viewer [\d.]+ KB, 2 reports [\d.]+ KB\)/);
    const kb = Number(printed.match(/: ([\d.]+) KB/)[1]);
    assert.ok(Math.abs(kb * 1000 - statSync(exported).size) < 100, `${kb} KB printed`);
    // The hostile report's `</script>` could not end its element.
    const html = readFileSync(exported, 'utf8');
    assert.equal(html.match(/<\/script>/g).length, html.match(/<script\b/g).length);
  });

  test('draws every chart, compares both reports, and a slider changes a capacity figure', async () => {
    const { page, seen, pageUrl } = await openExport();
    await chartsDrawn(page, 30000);
    assert.ok((await page.getByTestId('chart').count()) >= 10);
    assert.match(await page.getByTestId('section-header').innerText(), /Compared with: /);
    // "Which configuration?" judges both reports from the file too: each ranked (measured to
    // its limit) or listed apart (no limit found).
    const judged = await page.locator('[data-testid="choice-ranking"] tbody tr, [data-testid="choice-apart"] tbody tr').count();
    assert.equal(judged, 2);
    // Names from the hostile report are shown as text, never run (the title too).
    assert.ok((await page.locator('body').innerText()).includes(XSS), 'shown literally');
    assert.equal(await page.locator('img[src="x"]').count(), 0);

    const slider = page.locator('[data-testid^="slider-ttft-"]').first();
    const useCase = (await slider.getAttribute('data-testid')).slice('slider-ttft-'.length);
    const figure = page.getByTestId(`capacity-figure-${useCase}`);
    const before = await figure.innerText();
    await slider.focus();
    await page.keyboard.press('Home');
    await page.waitForFunction(([sel, old]) => document.querySelector(sel)?.innerText !== old,
      [`[data-testid="capacity-figure-${useCase}"]`, before]);
    assert.notEqual(await figure.innerText(), before);
    // The view goes into the file's address, so the link reopens it as it is.
    await page.waitForFunction((uc) => location.search.includes(`uc.${uc}.ttft=`), useCase);
    assert.ok(page.url().startsWith(`${pageUrl}?report=inline%3A1&compare=inline%3A2`), page.url());
    assertOffline(seen, pageUrl);
  });

  test('the statistic switch, a CSV download and an embed link work from the file', async () => {
    const { page, seen, pageUrl } = await openExport();
    await chartsDrawn(page, 30000);
    const chart = page.locator('[data-chart-id="fastest.decode"]');
    const option = () => chart.evaluate((el) => JSON.stringify(
      window.echarts.getInstanceByDom(el.querySelector('.chart-canvas')).getOption().series.map((s) => s.data)));
    const meanData = await option();
    await page.getByTestId('stat-select').selectOption('p99');
    await page.waitForFunction(() => location.search.includes('stat=p99'));
    await page.waitForFunction(([el, old]) => JSON.stringify(window.echarts.getInstanceByDom(
      document.querySelector(el)).getOption().series.map((s) => s.data)) !== old,
    ['[data-chart-id="fastest.decode"] .chart-canvas', meanData]);

    const [csv] = await Promise.all([page.waitForEvent('download'), chart.getByTestId('export-csv').click()]);
    const rows = readFileSync(await csv.path(), 'utf8').trim().split('\n');
    assert.match(rows[0], /^series,/);
    assert.ok(rows.length > 4, 'CSV has data rows');
    assertOffline(seen, pageUrl);

    // A chart alone (the Embed link's address) opens from the same file.
    const embed = await openExport('?report=inline%3A1&chart=fastest.decode');
    await embed.page.getByTestId('embed').waitFor();
    await chartsDrawn(embed.page, 30000);
    assertOffline(embed.seen, embed.pageUrl);
  });
});

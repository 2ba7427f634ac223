// A sweep of the simulator's settings (`infermeter sweep`, #37) opened as a user opens it:
// `infermeter view DIR` serves the folder's reports compared, each chart's legend names the
// configurations by their parameters, the Which configuration? ranking names the winning one, and
// `export DIR` puts the same four in one file.
// Run: node --test tests/browser/sweep.test.mjs (after scripts/build-viewer.sh)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

import { chartsDrawn, distDir, launchBrowser, newPage } from './support.mjs';

const root = resolve(new URL('../..', import.meta.url).pathname);
const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache/infermeter/target');
const infermeter = join(targetDir, 'debug/infermeter');
const CONFIGURATIONS = ['mns=1 tp=1', 'mns=1 tp=2', 'mns=8 tp=1', 'mns=8 tp=2'];

// Two levels, so every configuration draws a curve; a second each, so the engine is scraped.
const SUITE = `
name = "sweep-browser"
warmup = 0
[[scenario]]
id = "chat"
name = "Chat"
input_tokens = 128
output_tokens = 32
[peak]
levels = [1, 4]
requests_per_slot = 2
min_seconds = 1
`;

let dir;
let browser;
let view;
let url;
before(async () => {
  const build = spawnSync('cargo', ['build', '--locked', '-q', '-p', 'infermeter'], { stdio: 'inherit' });
  assert.equal(build.status, 0, 'cargo build -p infermeter');
  dir = mkdtempSync(join(tmpdir(), 'infermeter-sweep-'));
  writeFileSync(join(dir, 'suite.toml'), SUITE);
  const profiles = join(root, 'collector/tests/data/fast-sim.toml');
  const sweep = spawnSync(infermeter, [
    'sweep', '--quiet',
    '--serve', `{infermeter} sim --quiet --listen 127.0.0.1:{port} --gpu test-fast --profiles '${profiles}' --max-num-seqs {mns} --gpus {tp}`,
    '--param', 'mns=1,8', '--param', 'tp=1,2',
    '--suite', join(dir, 'suite.toml'), '--ready', '/health',
    '--out-dir', join(dir, 'sweep'),
  ], { encoding: 'utf8', timeout: 180000 });
  assert.equal(sweep.status, 0, `${sweep.stdout}\n${sweep.stderr}`);
  view = spawn(infermeter, ['view', join(dir, 'sweep'), '--dist', distDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: view.stdout });
  url = await new Promise((ok, fail) => {
    lines.on('line', (line) => { if (line.startsWith('Viewer: ')) ok(line.slice(8)); });
    view.on('exit', (code) => fail(new Error(`infermeter view exited (${code})`)));
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  view?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a sweep opened with infermeter view DIR', () => {
  test('opens its four configurations compared, each legend naming them by their parameters', async () => {
    const index = JSON.parse(readFileSync(join(dir, 'sweep/index.json'), 'utf8'));
    assert.deepEqual(index.reports.map((r) => r.description), CONFIGURATIONS);
    const { page, problems } = await newPage(browser);
    await page.goto(url);
    await chartsDrawn(page, 30000);
    // The first report opened, the other three compared with it.
    assert.equal(new URL(page.url()).searchParams.getAll('compare').length, 3, page.url());
    // Every series of a compared chart carries its configuration: "mns=8 tp=2 · Chat".
    const names = await page.evaluate(() => {
      const host = document.querySelector('[data-testid="chart"] .chart-canvas');
      return window.echarts.getInstanceByDom(host).getOption().series
        .map((s) => s.name).filter((n) => n && n.includes(' · '));
    });
    for (const configuration of CONFIGURATIONS) {
      assert.ok(names.includes(`${configuration} · Chat`), `${configuration} in ${JSON.stringify(names)}`);
    }
    // The legend under the chart shows the same names.
    const legend = await page.locator('[data-testid="chart"]').first()
      .getByTestId('legend-item').allTextContents();
    for (const configuration of CONFIGURATIONS) {
      assert.ok(legend.some((t) => t.includes(configuration)), `${configuration} in ${JSON.stringify(legend)}`);
    }
    assert.deepEqual(problems, { pageErrors: [], panics: [], dialogs: [], external: [] });
  });

  test('the Which configuration? ranking names the configurations, as infermeter summary DIR does', async () => {
    const { page, problems } = await newPage(browser);
    await page.goto(url);
    await chartsDrawn(page, 30000);
    await page.getByTestId('section-choice').scrollIntoViewIfNeeded();
    const rowsOf = async (testid) => {
      const table = page.getByTestId(testid);
      if ((await table.count()) === 0) return [];
      return table.locator('tbody tr').evaluateAll(
        (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
    };
    // Every configuration is either ranked (measured to its limit) or listed apart (#43: a
    // bound is never ranked against a limit).
    const ranked = await rowsOf('choice-ranking');
    const apart = await rowsOf('choice-apart');
    assert.deepEqual([...ranked, ...apart].map((r) => r[1]).sort(), [...CONFIGURATIONS].sort(),
      JSON.stringify({ ranked, apart }));
    ranked.forEach((r, i) => assert.equal(r[0], String(i + 1), 'ranked rows are numbered in order'));
    apart.forEach((r) => assert.ok(!/^\d+$/.test(r[0]), `${r[1]} listed apart has no rank`));
    // The terminal's ranking of the folder: the same configurations ranked, in the same order,
    // in its first scenario (the one the page shows first).
    const summary = spawnSync(infermeter, ['summary', join(dir, 'sweep')], { encoding: 'utf8' });
    assert.equal(summary.status, 0, summary.stderr);
    const scenarios = summary.stdout.split(/\n(?=[^\n]*: cheapest meeting the SLO\n)/).slice(1);
    const block = scenarios[0].split('\n');
    const end = block.findIndex((l, i) => i > 0 && !l.startsWith('  '));
    const firstScenario = block.slice(1, end < 0 ? undefined : end);
    const apartAt = firstScenario.findIndex((l) => l.trim().endsWith(':') && !l.includes('cheapest'));
    const rankedLines = firstScenario.slice(0, apartAt < 0 ? undefined : apartAt)
      .filter((l) => /^ {2}\d+ {2,}/.test(l));
    assert.deepEqual(rankedLines.map((l) => l.trim().split(/ {2,}/)[1]), ranked.map((r) => r[1]),
      summary.stdout);
    assert.deepEqual(problems, { pageErrors: [], panics: [], dialogs: [], external: [] });
  });

  test('export DIR writes the four configurations into one file', () => {
    const file = join(dir, 'sweep.html');
    const run = spawnSync(infermeter, ['export', join(dir, 'sweep'), '-o', file, '--dist', distDir], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /4 reports/);
    const html = readFileSync(file, 'utf8');
    assert.ok(html.includes('id="infermeter-report-4"') && !html.includes('id="infermeter-report-5"'));
  });
});

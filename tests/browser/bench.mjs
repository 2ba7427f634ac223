// Viewer benchmark (prints figures; not a test): shipped gzip weight, page load to first chart
// drawn with where that time goes (a first visit, and a reader coming back in the same browser
// profile), slider move to redrawn chart, and the same for the bundled comparison of four
// reports with its "Which configuration?" section (first chart; target and SLO sliders to
// redrawn chart and ranking table). Run after scripts/build-viewer.sh:
//   node tests/browser/bench.mjs
// To see how a slower machine would fare, BENCH_CPU_SLOWDOWN=2 slows each page's main thread
// twofold (Chromium's CPU throttling, as in DevTools), the viewer's and ECharts alone's alike.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

import { chartsDrawn, distDir, launchBrowser, launchProfile, newPage, percentile } from './support.mjs';

const SAMPLE = 'data/reports/sample-synthetic.json';
const INDEX = JSON.parse(readFileSync(new URL('../../data/index.json', import.meta.url), 'utf8'));
const COMPARISON = INDEX.comparisons[0].paths.map((p) => `data/${p}`);
const LOADS = 15;
// Repeat visits: rounds of a fresh browser profile each, visited this many times.
const PROFILES = 5;
const VISITS = 4;
const MOVES = 40;
const SLOWDOWN = Number(process.env.BENCH_CPU_SLOWDOWN ?? 1);
if (!(SLOWDOWN >= 1)) throw new Error(`BENCH_CPU_SLOWDOWN must be a number >= 1, not ${process.env.BENCH_CPU_SLOWDOWN}`);
// Steps on the way to the first chart, in order: (label, what the page reads to time it).
const STEPS = [
  ['report fetched', 'resource:sample-synthetic.json'],
  ['wasm fetched', 'resource:_bg.wasm'],
  ['ECharts fetched', 'resource:echarts.min.js'],
  ['app started', 'mark:infermeter:app-started'],
  ['ECharts ran', 'mark:infermeter:echarts-loaded'],
  ['report read', 'mark:infermeter:reports-read'],
  ['first chart started', 'mark:infermeter:first-chart-started'],
  ['first chart drawn', 'mark:infermeter:first-chart-drawn'],
];

function shipped(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'data' ? [] : shipped(path);
    return /\.(wasm|js|css)$/.test(name) ? [path] : [];
  });
}

const fmt = (v) => `${v.toFixed(1)} ms`;

/// A first-visit page, its main thread slowed by SLOWDOWN.
async function benchPage(browser) {
  const { page } = await newPage(browser);
  if (SLOWDOWN > 1) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: SLOWDOWN });
  }
  await page.addInitScript(recordLongFrames);
  return page;
}

/// Waits for the page's first chart and returns when it was drawn (ms after navigation).
async function firstChartDrawn(page) {
  await page.waitForFunction(() => performance.getEntriesByName('infermeter:first-chart-drawn').length);
  return page.evaluate(() => performance.getEntriesByName('infermeter:first-chart-drawn')[0].startTime);
}

/// Loads `url` VISITS times in one new browser profile: the first chart's time per visit. The
/// files are revalidated each time (support.mjs), so later visits get 304s and V8's code cache
/// of the scripts, which V8 writes after a script has run (hence the pause). The wasm is not
/// cached: V8 stores a module's code only once ~1 MB of it is optimised.
async function visits(url) {
  const dir = mkdtempSync(join(tmpdir(), 'infermeter-bench-'));
  const profile = await launchProfile(dir);
  try {
    const times = [];
    for (let v = 0; v < VISITS; v++) {
      const page = await profile.newPage();
      await page.goto(url);
      times.push(await firstChartDrawn(page));
      await page.close();
      await new Promise((ok) => setTimeout(ok, 300));
    }
    return times;
  } finally {
    await profile.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// The browser's long-animation-frame entries (frames over 50 ms, recorded without tracing, which
// slows what it watches) say which script ran how long: registered before the page's own code.
const recordLongFrames = () => {
  globalThis.__longFrames = [];
  new PerformanceObserver((list) => globalThis.__longFrames.push(...list.getEntries()))
    .observe({ type: 'long-animation-frame', buffered: true });
};

/// Main-thread time before the first chart, from long animation frames: ECharts' evaluation,
/// the app's scripts, and the style and layout those scripts forced.
async function longFrameSplit(page) {
  return page.evaluate(() => {
    const end = performance.getEntriesByName('infermeter:first-chart-drawn')[0].startTime;
    const split = { echarts: 0, app: 0, layout: 0 };
    for (const frame of globalThis.__longFrames.filter((f) => f.startTime < end)) {
      for (const script of frame.scripts) {
        const kind = script.sourceURL.includes('vendor/echarts') ? 'echarts' : 'app';
        split[kind] += script.duration;
        split.layout += script.forcedStyleAndLayoutDuration;
      }
    }
    return split;
  });
}

// The gzip copies build-viewer.sh writes (zopfli) are what `infermeter view` serves; zlib -9
// when missing.
const gzipSize = (file) => existsSync(`${file}.gz`)
  ? statSync(`${file}.gz`).size : gzipSync(readFileSync(file), { level: 9 }).length;

let total = 0;
// What the page loads before its first chart: all but the wasm modules split off the main one,
// fetched when the sections below the first screen are built (src/sections/mod.rs).
let first = 0;
console.log('shipped files (gzip, as served):');
for (const file of shipped(distDir)) {
  const gz = gzipSize(file);
  total += gz;
  if (!/(^|\/)split-[^/]*\.wasm$/.test(file)) first += gz;
  console.log(`  ${file.slice(distDir.length + 1).padEnd(48)} ${(gz / 1024).toFixed(1).padStart(7)} KB`);
}
console.log(`total gzip weight: ${(total / 1024).toFixed(1)} KB; before the first chart ` +
  `${(first / 1024).toFixed(1)} KB (target <= 700 KB), the rest loads on demand`);

// The server runs in a process of its own (tests/browser/serve.mjs), as a real one would.
const serverProcess = spawn(process.execPath, [new URL('./serve.mjs', import.meta.url).pathname],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const [firstLine] = await once(serverProcess.stdout, 'data');
const server = { url: String(firstLine).trim() };
const browser = await launchBrowser();
try {
  const loads = [];
  const floor = [];
  const frames = [];
  const floorFrames = [];
  for (let i = 0; i < LOADS; i++) {
    const page = await benchPage(browser);
    await page.goto(`${server.url}?report=${encodeURIComponent(SAMPLE)}`);
    await chartsDrawn(page);
    frames.push(await longFrameSplit(page));
    loads.push(await page.evaluate((steps) => Object.fromEntries(steps.map(([label, key]) => {
      const [kind, name] = key.split(/:(.*)/);
      const entry = kind === 'mark'
        ? performance.getEntriesByName(name)[0]
        : performance.getEntriesByType('resource').find((r) => r.name.includes(name));
      return [label, entry ? (kind === 'mark' ? entry.startTime : entry.responseEnd) : NaN];
    })), STEPS));
    await page.close();
    // Alternating with the viewer, so both see the machine alike.
    const alone = await benchPage(browser);
    await alone.goto(`${server.url}fixtures/browser/echarts-only.html`);
    floor.push(await firstChartDrawn(alone));
    floorFrames.push(await longFrameSplit(alone));
    await alone.close();
  }
  // Every load is a new browser context (nothing cached); the first also pays the browser's
  // own warm-up, so it is reported apart.
  const warm = loads.slice(1).map((l) => l['first chart drawn']);
  if (SLOWDOWN > 1) console.log(`CPU slowed ${SLOWDOWN}x (BENCH_CPU_SLOWDOWN) for the first visits below`);
  console.log(`page load -> first chart drawn: median ${fmt(percentile(warm, 50))}, ` +
    `max ${fmt(Math.max(...warm))} over ${warm.length} warm loads; ` +
    `first load ${fmt(loads[0]['first chart drawn'])} (target <= 500 ms)`);
  console.log('  where the time goes (median ms after navigation start, warm loads):');
  for (const [label] of STEPS) {
    console.log(`    ${label.padEnd(20)} ${percentile(loads.slice(1).map((l) => l[label]), 50).toFixed(0).padStart(5)}`);
  }
  console.log(`  floor: ECharts alone drawing the same chart (tests/browser/echarts-only.html): ` +
    `median ${fmt(percentile(floor.slice(1), 50))}`);
  const split = (list) => ['echarts', 'app', 'layout']
    .map((k) => percentile(list.slice(1).map((f) => f[k]), 50).toFixed(0));
  const [echarts, app, layout] = split(frames);
  const [echartsAlone, drawAlone] = split(floorFrames);
  console.log(`  main thread in long frames before the first chart (median ms): ECharts ran ${echarts}, ` +
    `the app's scripts ${app} (of which forced style and layout ${layout}); ECharts alone: ran ` +
    `${echartsAlone}, drew ${drawAlone}`);
  // Each viewer load runs next to one of ECharts alone, so their ratio says how much the app
  // adds in a way the machine's fast and slow minutes move less than either time.
  const ratios = warm.map((t, i) => t / floor[i + 1]);
  console.log(`  viewer / ECharts alone, per pair of loads: median ${percentile(ratios, 50).toFixed(2)}x`);

  // A reader coming back: the same browser profile, the files revalidated (304 when unchanged).
  const repeat = { viewer: [], alone: [] };
  for (let i = 0; i < PROFILES; i++) {
    repeat.viewer.push(await visits(`${server.url}?report=${encodeURIComponent(SAMPLE)}`));
    repeat.alone.push(await visits(`${server.url}fixtures/browser/echarts-only.html`));
  }
  const byVisit = (rounds) => [...Array(VISITS).keys()]
    .map((v) => `visit ${v + 1}: ${fmt(percentile(rounds.map((times) => times[v]), 50))}`).join(', ');
  console.log(`repeat visits, median over ${PROFILES} browser profiles (first chart drawn): ` +
    `${byVisit(repeat.viewer)} (target <= 500 ms)`);
  console.log(`  ECharts alone: ${byVisit(repeat.alone)}`);
  // The same through `infermeter view`, which keeps trunk's content-hashed files without
  // revalidating them (collector/src/view.rs); built first, as scripts/demo.sh does.
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache/infermeter/target');
  const built = spawnSync('cargo', ['build', '--release', '--locked', '-q', '-p', 'infermeter'],
    { stdio: 'inherit' }).status === 0;
  if (built) {
    const collector = join(targetDir, 'release/infermeter');
    const view = spawn(collector, ['view', resolve(distDir, SAMPLE), '--dist', distDir],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let printed = '';
      while (!/Viewer: \S+/.test(printed)) printed += String((await once(view.stdout, 'data'))[0]);
      const url = printed.match(/Viewer: (\S+)/)[1];
      const rounds = [];
      for (let i = 0; i < PROFILES; i++) rounds.push(await visits(url));
      console.log(`  through \`infermeter view\` (${collector}): ${byVisit(rounds)}`);
    } finally {
      view.kill();
    }
  } else {
    console.log('  through `infermeter view`: skipped, `cargo build --release -p infermeter` failed');
  }

  const { page } = await newPage(browser);
  await page.goto(`${server.url}?report=${encodeURIComponent(SAMPLE)}`);
  await chartsDrawn(page);
  // A reader moves a slider once the page is idle, when the app has run ECharts' update path
  // once (src/components/chart.rs, `warm_update_once`).
  await page.waitForFunction(() => performance.getEntriesByName('infermeter:update-warmed').length);
  const slider = page.locator('[data-testid^="slider-ttft-"]').first();
  const useCase = (await slider.getAttribute('data-testid')).slice('slider-ttft-'.length);
  await onScreen(page, await slider.getAttribute('data-testid'));
  const timings = await page.evaluate(async ([uc, moves]) => {
    const input = document.querySelector(`[data-testid="slider-ttft-${uc}"]`);
    const host = document.querySelector(`[data-chart-id="capacity.${uc}"] .chart-canvas`);
    const chart = window.echarts.getInstanceByDom(host);
    const values = [...Array(moves).keys()].map((i) =>
      Number(input.min) + ((Number(input.max) - Number(input.min)) * ((i * 7) % moves)) / moves);
    const rendered = [];
    const finished = [];
    for (const v of values) {
      const drawn = new Promise((ok) => chart.on('rendered', function once() { chart.off('rendered', once); ok(performance.now()); }));
      const done = new Promise((ok) => chart.on('finished', function once() { chart.off('finished', once); ok(performance.now()); }));
      const t0 = performance.now();
      input.value = String(v);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      rendered.push((await drawn) - t0);
      finished.push((await done) - t0);
    }
    return { rendered, finished };
  }, [useCase, MOVES]);
  console.log(`slider move -> chart redrawn (first frame, 'rendered'): p50 ${fmt(percentile(timings.rendered, 50))}, ` +
    `p95 ${fmt(percentile(timings.rendered, 95))} over ${MOVES} moves (target p95 <= 16 ms)`);
  console.log(`slider move -> update animation done ('finished'): p50 ${fmt(percentile(timings.finished, 50))}, ` +
    `p95 ${fmt(percentile(timings.finished, 95))}`);
  await page.close();
  await benchComparison(server.url, browser);
} finally {
  await browser.close();
  serverProcess.kill();
}

/// The bundled comparison: page load to first chart (fresh contexts), then the "Which
/// configuration?" sliders: the target interactivity (moves the Pareto chart's target line and
/// the table's figures at it) and the SLO's TTFT bound (re-ranks the table).
async function benchComparison(url, browser) {
  const [main, ...rest] = COMPARISON;
  const address = `${url}?report=${encodeURIComponent(main)}${rest.map((r) => `&compare=${encodeURIComponent(r)}`).join('')}`;
  const loads = [];
  const compared = [];
  const whole = [];
  for (let i = 0; i < LOADS; i++) {
    const page = await benchPage(browser);
    await page.goto(address);
    loads.push(await firstChartDrawn(page));
    // The main report's page is drawn first; then the compared reports are read and the page
    // is built again with them, its charts drawn after the next paint.
    await chartsDrawn(page);
    const [read, done] = await page.evaluate(() => [
      performance.getEntriesByName('infermeter:compared-read')[0]?.startTime ?? NaN, performance.now()]);
    compared.push(read);
    whole.push(done);
    await page.close();
  }
  const warm = loads.slice(1);
  console.log(`bundled comparison (${COMPARISON.length} reports): page load -> first chart drawn (the main report's): ` +
    `median ${fmt(percentile(warm, 50))}, max ${fmt(Math.max(...warm))} over ${warm.length} warm loads; ` +
    `first load ${fmt(loads[0])} (target <= 500 ms)`);
  console.log(`  compared reports read: median ${fmt(percentile(compared.slice(1), 50))}; ` +
    `every chart of the comparison drawn: median ${fmt(percentile(whole.slice(1), 50))}`);
  const { page } = await newPage(browser);
  await page.goto(address);
  await chartsDrawn(page);
  await page.waitForFunction(() => performance.getEntriesByName('infermeter:update-warmed').length);
  for (const [testid, chart] of [['choice-interactivity', true], ['choice-slider-ttft', false]]) {
    await onScreen(page, testid);
    const times = await page.evaluate(async ([id, withChart, moves]) => {
      const input = document.querySelector(`[data-testid="${id}"]`);
      const table = document.querySelector('[data-testid="choice-ranking"]');
      const host = document.querySelector('[data-chart-id="choice.frontier"] .chart-canvas');
      const instance = window.echarts.getInstanceByDom(host);
      const [min, max] = [Number(input.min), Number(input.max)];
      const out = [];
      for (let i = 0; i < moves; i++) {
        const v = min + ((max - min) * ((i * 7) % moves)) / moves;
        const tableDone = new Promise((ok) => {
          const observer = new MutationObserver(() => { observer.disconnect(); ok(performance.now()); });
          observer.observe(table, { subtree: true, childList: true, characterData: true });
          // A move that changes no cell of the table: the chart alone counts.
          setTimeout(() => { observer.disconnect(); ok(null); }, 500);
        });
        const drawn = withChart
          ? new Promise((ok) => instance.on('rendered', function once() { instance.off('rendered', once); ok(performance.now()); }))
          : Promise.resolve(null);
        const t0 = performance.now();
        input.value = String(v);
        input.dispatchEvent(new Event('input', { bubbles: true }));
        const [a, b] = await Promise.all([tableDone, drawn]);
        const ends = [a, b].filter((t) => t !== null);
        if (ends.length) out.push(Math.max(...ends) - t0);
      }
      return out;
    }, [testid, chart, MOVES]);
    console.log(`  ${testid} move -> ${chart ? 'chart and ranking table' : 'ranking table'} redrawn: ` +
      `p50 ${fmt(percentile(times, 50))}, p95 ${fmt(percentile(times, 95))} over ${times.length} moves that changed them (target p95 <= 16 ms)`);
  }
  await page.close();
}

/// Scrolls the control `testid` to the middle of the screen, as a reader moving it sees it (and
/// the chart it redraws, just below), and waits until the page has seen that: a chart off screen
/// is updated after the next paint on purpose (src/components/echarts.rs, `update_soon`), so
/// moving a control 15,000 px below the screen timed a frame's wait that no reader has.
async function onScreen(page, testid) {
  await page.evaluate((id) => document.querySelector(`[data-testid="${id}"]`).scrollIntoView({ block: 'center' }), testid);
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
}

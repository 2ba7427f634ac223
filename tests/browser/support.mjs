// Shared by the browser tests, the benchmark and the screenshot script: a static file server for
// dist/ (under a sub-path, as a real deployment may be) and headless Debian chromium.
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, normalize, resolve } from 'node:path';
import { homedir } from 'node:os';

const root = resolve(new URL('../..', import.meta.url).pathname);
export const distDir = join(root, 'dist');
const testsDir = join(root, 'tests');
/// The app is served under this sub-path; test inputs under `<BASE>fixtures/` (= tests/).
export const BASE = '/viewer/';

const require = createRequire(import.meta.url);
const cache = process.env.INFERMETER_CACHE ?? join(homedir(), '.cache/infermeter');
const npmModules = join(cache, 'npm/node_modules');
const { chromium } = require(join(npmModules, 'playwright-core'));

/// Path of a file of an npm tool installed by scripts/setup.sh (tools/package.json).
export function npmToolFile(path) {
  return join(npmModules, path);
}

const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.png': 'image/png',
};

/// Serves dist/ at BASE and tests/ at BASE + 'fixtures/' on 127.0.0.1, a random port. Like
/// `infermeter view` (and nginx's gzip_static), a file's precompressed `.gz` copy is sent to a
/// browser that takes gzip, so the tests load what is shipped.
export async function startServer(port = 0) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (!path.startsWith(BASE)) { res.writeHead(404).end(); return; }
    const rest = path.slice(BASE.length);
    const [dir, sub] = rest.startsWith('fixtures/') ? [testsDir, rest.slice(9)] : [distDir, rest || 'index.html'];
    const file = normalize(join(dir, sub));
    if (!file.startsWith(dir)) { res.writeHead(403).end(); return; }
    let stat;
    try {
      stat = statSync(file);
      if (!stat.isFile()) throw new Error('not a file');
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    // Revalidated on each load, as any static host does at least: a repeat visit in the same
    // browser profile then gets a 304 and V8's code cache (bench.mjs measures both visits).
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '') && existsSync(`${file}.gz`);
    const headers = {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
      etag: `"${stat.size}-${stat.mtimeMs}${gzip ? '-gzip' : ''}"`,
    };
    if (gzip) Object.assign(headers, { 'content-encoding': 'gzip', vary: 'accept-encoding' });
    if (req.headers['if-none-match'] === headers.etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, headers);
    createReadStream(gzip ? `${file}.gz` : file).pipe(res);
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}${BASE}`;
  return { url, close: () => new Promise((ok) => server.close(ok)) };
}

const VIEWPORT = { width: 1280, height: 900 };

const chromiumOptions = {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

/// Headless Debian chromium. `options` go to Playwright's `launch` (e.g. `ignoreDefaultArgs`).
export function launchBrowser(options = {}) {
  return chromium.launch({ ...chromiumOptions, ...options });
}

/// Headless Debian chromium with a browser profile in `dir` (a browser context). Unlike
/// `launchBrowser`'s contexts, which are off the record, it keeps V8's code cache between loads,
/// as a reader's own browser does.
export function launchProfile(dir, viewport = VIEWPORT) {
  return chromium.launchPersistentContext(dir, { ...chromiumOptions, viewport });
}

/// A page that records what must never happen: uncaught errors, wasm panics, dialogs
/// (alert() from injected markup) and requests leaving 127.0.0.1.
export async function newPage(browser, viewport = VIEWPORT) {
  const page = await browser.newPage({ viewport });
  const problems = { pageErrors: [], panics: [], dialogs: [], external: [] };
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && /panicked|RuntimeError|unreachable/.test(m.text())) problems.panics.push(m.text());
  });
  page.on('dialog', async (d) => { problems.dialogs.push(d.message()); await d.dismiss(); });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['127.0.0.1', ''].includes(u.hostname) && !u.protocol.startsWith('data') && !u.protocol.startsWith('blob')) {
      problems.external.push(r.url());
    }
  });
  return { page, problems };
}

/// Waits until the report is built to its end (the app builds the sections below the first
/// charts after the first paint, `aria-busy` meanwhile) and every chart has drawn its canvas.
export async function chartsDrawn(page, timeout = 15000) {
  await page.waitForFunction(() => {
    const charts = [...document.querySelectorAll('[data-testid="chart"] .chart-canvas')];
    return !document.querySelector('[aria-busy="true"]')
      && charts.length > 0 && charts.every((c) => c.querySelector('canvas'));
  }, null, { timeout });
}

/// Screen position of data point `dataIndex` of series `seriesIndex` in the chart `chartId`.
export async function pointPosition(page, chartId, seriesIndex = 0, dataIndex = 0) {
  return page.evaluate(([id, s, d]) => {
    const host = document.querySelector(`[data-chart-id="${id}"] .chart-canvas`);
    const chart = window.echarts.getInstanceByDom(host);
    const option = chart.getOption();
    const value = option.series[s].data[d];
    const raw = value.value ?? value;
    // Band edges keep y first (`encode`, src/charts/plot.rs).
    const encode = option.series[s].encode;
    const [x, y] = chart.convertToPixel({ seriesIndex: s }, encode ? [raw[encode.x], raw[encode.y]] : raw);
    const box = host.getBoundingClientRect();
    return { x: box.left + x, y: box.top + y, value };
  }, [chartId, seriesIndex, dataIndex]);
}

/// Waits until chart `chartId` has no animation running (ECharts ignores the pointer meanwhile).
export async function chartSettled(page, chartId) {
  await page.evaluate((id) => new Promise((ok) => {
    const host = document.querySelector(`[data-chart-id="${id}"] .chart-canvas`);
    const chart = window.echarts.getInstanceByDom(host);
    // No clip in flight (the animation loop itself may keep running with nothing to animate).
    const idle = () => !chart.getZr().animation._head;
    if (idle()) { ok(); return; }
    chart.on('finished', function done() { chart.off('finished', done); ok(); });
  }), chartId);
}

/// Percentile `p` (0..100) of `values`, by linear interpolation between closest ranks (as the
/// report crate computes its own): the benchmarks' figures.
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  return sorted[lo] + (sorted[Math.ceil(rank)] - sorted[lo]) * (rank - lo);
}

/// Waits until the page's address matches `pattern` (the app writes it just after a change).
export async function urlMatches(page, pattern, timeout = 5000) {
  await page.waitForFunction((source) => new RegExp(source).test(location.href), pattern.source, { timeout });
}

/// The series of chart `id` as drawn: name and `[x, y]` points (series with data only).
export function drawnSeries(page, id) {
  return page.evaluate((cid) => {
    const host = document.querySelector(`[data-chart-id="${cid}"] .chart-canvas`);
    return window.echarts.getInstanceByDom(host).getOption().series
      .filter((s) => (s.data ?? []).length > 0)
      .map((s) => ({ name: s.name, data: s.data.map((d) => d.value ?? d) }));
  }, id);
}

// Goodput benchmark (prints figures; not a test): what the per-request columns cost in a report,
// and how fast the goodput section redraws when a slider moves on a report of 10,000 requests.
// Run after scripts/build-viewer.sh:
//   node tests/browser/bench-goodput.mjs
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

import { chartsDrawn, launchBrowser, newPage, percentile, startServer } from './support.mjs';

const SAMPLE = new URL('../../data/reports/sample-synthetic.json', import.meta.url);
const REQUESTS = 10_000;
const MOVES = 40;

const fmt = (v) => `${v.toFixed(1)} ms`;
const levels = (report) => report.series.flatMap((s) => s.levels);
const requests = (report) => levels(report).reduce((n, l) => n + (l.per_request?.status.length ?? 0), 0);
const gz = (text) => gzipSync(text, { level: 9 }).length;

/// Bytes the columns add per request: the report as written with them, less the same without.
function bytesPerRequest(text, report) {
  const without = structuredClone(report);
  for (const level of levels(without)) delete level.per_request;
  const compact = JSON.stringify(report);
  const bare = JSON.stringify(without);
  const n = requests(report);
  // The written file's own columns: each block is one line per column (report::pretty_json).
  const blocks = text.match(/"per_request": \{[^}]*\}/g) ?? [];
  const written = blocks.reduce((sum, b) => sum + b.length, 0);
  return {
    n,
    written: written / n,
    json: (compact.length - bare.length) / n,
    gzip: (gz(compact) - gz(bare)) / n,
  };
}

/// The sample with every level's columns repeated until the report holds `total` requests,
/// each level keeping its share (its window scaled alike, so goodput per second stays).
function scaled(report, total) {
  const big = structuredClone(report);
  const all = levels(big).filter((l) => l.per_request);
  const have = requests(big);
  let left = total;
  all.forEach((level, i) => {
    const columns = level.per_request;
    const n = columns.status.length;
    const want = i === all.length - 1 ? left : Math.max(1, Math.round((n * total) / have));
    left -= want;
    for (const [key, values] of Object.entries(columns)) {
      if (Array.isArray(values)) columns[key] = Array.from({ length: want }, (_, j) => values[j % n]);
    }
    level.duration_s *= want / n;
  });
  return big;
}

const text = readFileSync(SAMPLE, 'utf8');
const sample = JSON.parse(text);
const small = bytesPerRequest(text, sample);
console.log(`per-request columns in ${SAMPLE.pathname.split('/').slice(-3).join('/')} (${small.n} requests): ` +
  `${small.written.toFixed(1)} bytes per request as written, ${small.json.toFixed(1)} as compact JSON, ` +
  `${small.gzip.toFixed(1)} gzip -9`);
const big = scaled(sample, REQUESTS);
const bigText = JSON.stringify(big);
const bigCost = bytesPerRequest(bigText, big);
console.log(`report of ${requests(big)} requests: ${(bigText.length / 1024).toFixed(0)} KB ` +
  `(${(gz(bigText) / 1024).toFixed(0)} KB gzip), of which the columns ${bigCost.json.toFixed(1)} bytes ` +
  `per request (${bigCost.gzip.toFixed(1)} gzip)`);

const server = await startServer();
const browser = await launchBrowser();
try {
  const { page } = await newPage(browser);
  // Served from memory under the server's address, as a file beside the viewer would be.
  await page.route('**/bench/goodput-10k.json', (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: bigText }));
  await page.goto(`${server.url}?report=${encodeURIComponent('bench/goodput-10k.json')}`);
  await chartsDrawn(page, 60000);
  await page.waitForFunction(() => performance.getEntriesByName('infermeter:update-warmed').length);
  await page.getByTestId('goodput-slider-ttft').scrollIntoViewIfNeeded();
  const timings = await page.evaluate(async (moves) => {
    const input = document.querySelector('[data-testid="goodput-slider-ttft"]');
    const host = document.querySelector('[data-chart-id="goodput.attainment"] .chart-canvas');
    const chart = window.echarts.getInstanceByDom(host);
    const card = document.querySelector('[data-testid^="goodput-card-"] .highlight-value');
    // Positions across the TTFT range (0.1 to 3 s, where the sample's levels cross it).
    const values = [...Array(moves).keys()].map((i) => (0.1 + (2.9 * ((i * 7) % moves)) / moves).toFixed(1));
    const rendered = [];
    let cardChanges = 0;
    let unchanged = 0;
    for (const v of values) {
      const before = card.innerText;
      let listener;
      const drawn = new Promise((ok) => {
        listener = () => ok(performance.now());
        chart.on('rendered', listener);
      });
      // A move that changes no figure of the chart redraws nothing: counted apart.
      const idle = new Promise((ok) => setTimeout(() => ok(null), 500));
      const t0 = performance.now();
      input.value = v;
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const at = await Promise.race([drawn, idle]);
      chart.off('rendered', listener);
      if (at === null) unchanged += 1;
      else rendered.push(at - t0);
      if (card.innerText !== before) cardChanges += 1;
    }
    return { rendered, cardChanges, unchanged };
  }, MOVES);
  console.log(`goodput TTFT slider -> attainment chart redrawn ('rendered'), ${REQUESTS} requests: ` +
    `p50 ${fmt(percentile(timings.rendered, 50))}, p95 ${fmt(percentile(timings.rendered, 95))} ` +
    `over ${timings.rendered.length} moves that changed it (target p95 <= 16 ms; ${timings.unchanged} ` +
    `changed nothing drawn); the first card changed on ${timings.cardChanges} of ${MOVES}`);
} finally {
  await browser.close();
  await server.close();
}

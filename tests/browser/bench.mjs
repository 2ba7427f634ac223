// Viewer benchmark (prints figures; not a test): shipped gzip weight, page load to first chart
// drawn, and slider move to redrawn chart. Run after scripts/build-viewer.sh:
//   node tests/browser/bench.mjs
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

import { chartsDrawn, distDir, launchBrowser, newPage, startServer } from './support.mjs';

const SAMPLE = 'data/reports/sample-synthetic.json';
const LOADS = 7;
const MOVES = 40;

function shipped(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'data' ? [] : shipped(path);
    return /\.(wasm|js|css)$/.test(name) ? [path] : [];
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  return sorted[lo] + (sorted[Math.ceil(rank)] - sorted[lo]) * (rank - lo);
}

const fmt = (v) => `${v.toFixed(1)} ms`;

// The gzip copies build-viewer.sh writes are what `infermeter view` serves; zlib when missing.
const gzipSize = (file) => existsSync(`${file}.gz`)
  ? statSync(`${file}.gz`).size : gzipSync(readFileSync(file), { level: 9 }).length;

let total = 0;
console.log('shipped files (gzip -9):');
for (const file of shipped(distDir)) {
  const gz = gzipSize(file);
  total += gz;
  console.log(`  ${file.slice(distDir.length + 1).padEnd(48)} ${(gz / 1024).toFixed(1).padStart(7)} KB`);
}
console.log(`total gzip weight: ${(total / 1024).toFixed(1)} KB (target <= 500 KB)`);

const server = await startServer();
const browser = await launchBrowser();
try {
  const firstChart = [];
  for (let i = 0; i < LOADS; i++) {
    const { page } = await newPage(browser);
    await page.goto(`${server.url}?report=${encodeURIComponent(SAMPLE)}`);
    await chartsDrawn(page);
    firstChart.push(await page.evaluate(() =>
      performance.getEntriesByName('infermeter:first-chart-drawn')[0].startTime));
    await page.close();
  }
  // The first load warms the browser's wasm compile cache; report the rest.
  const warm = firstChart.slice(1);
  console.log(`page load -> first chart drawn: median ${fmt(percentile(warm, 50))}, ` +
    `max ${fmt(Math.max(...warm))} over ${warm.length} warm loads; cold ${fmt(firstChart[0])} (target <= 500 ms)`);

  const { page } = await newPage(browser);
  await page.goto(`${server.url}?report=${encodeURIComponent(SAMPLE)}`);
  await chartsDrawn(page);
  const slider = page.locator('[data-testid^="slider-ttft-"]').first();
  const useCase = (await slider.getAttribute('data-testid')).slice('slider-ttft-'.length);
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
} finally {
  await browser.close();
  await server.close();
}

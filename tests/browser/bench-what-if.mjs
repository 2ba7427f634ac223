// What-if benchmark (prints figures; not a test): how long the fitted simulator takes to answer
// in the browser. For each question (a load up to four times the highest measured, on the
// measured GPU and on others), the time from the input event to the section's cards showing the
// new answer: the predicted curve, the asked load and the most users meeting the SLO, all run on
// the virtual clock in wasm, and the cards re-rendered (an upper bound on the prediction); and to
// the redrawn TTFT chart.
// Run after scripts/build-viewer.sh:
//   node tests/browser/bench-what-if.mjs
import { chartsDrawn, launchBrowser, newPage, percentile, startServer } from './support.mjs';

const REPORTS = [
  'data/reports/h100-transformers-llama-3.1-8b-shape.json',
  'data/reports/llama-cpu-tiny-llama.json',
];
const fmt = (v) => `${v.toFixed(1)} ms`;

const server = await startServer();
const browser = await launchBrowser();
try {
  for (const report of REPORTS) {
    const { page } = await newPage(browser);
    await page.goto(`${server.url}?report=${encodeURIComponent(report)}`);
    await chartsDrawn(page, 60000);
    await page.getByTestId('what-if-cards').scrollIntoViewIfNeeded();
    const timings = await page.evaluate(async () => {
      const cards = document.querySelector('[data-testid="what-if-cards"]');
      const load = document.querySelector('[data-testid="what-if-load"]');
      const gpu = document.querySelector('[data-testid="what-if-gpu"]');
      const host = document.querySelector('[data-chart-id="what_if.ttft"] .chart-canvas');
      const chart = window.echarts.getInstanceByDom(host);
      const max = Number(load.max);
      const questions = [];
      for (const g of [gpu.value, 'h200', 'b200']) {
        for (const n of [max, Math.ceil(max / 2), Math.ceil(max / 3), 1, max - 1]) questions.push([g, n]);
      }
      const predict = [];
      const redraw = [];
      for (const [g, n] of questions) {
        const drawn = new Promise((ok) => chart.on('rendered', () => ok(performance.now())));
        const answered = new Promise((ok) => {
          const seen = new MutationObserver(() => { seen.disconnect(); ok(performance.now()); });
          seen.observe(cards, { subtree: true, childList: true, characterData: true });
        });
        const t0 = performance.now();
        if (gpu.value !== g) {
          gpu.value = g;
          gpu.dispatchEvent(new Event('change', { bubbles: true }));
        }
        load.value = String(n);
        load.dispatchEvent(new Event('input', { bubbles: true }));
        const timeout = new Promise((ok) => setTimeout(() => ok(null), 2000));
        const cardsAt = await Promise.race([answered, timeout]);
        const at = await Promise.race([drawn, new Promise((ok) => setTimeout(() => ok(null), 2000))]);
        chart.off('rendered');
        if (cardsAt !== null) predict.push(cardsAt - t0);
        if (at !== null) redraw.push(at - t0);
      }
      return { predict, redraw, max };
    });
    console.log(`${report}: input to the cards' new prediction (curve to ${timings.max}, the asked load, most users under the SLO), ` +
      `${timings.predict.length} questions: p50 ${fmt(percentile(timings.predict, 50))}, ` +
      `p95 ${fmt(percentile(timings.predict, 95))}, max ${fmt(Math.max(...timings.predict))} (target < 200 ms); ` +
      `input to redrawn TTFT chart p50 ${fmt(percentile(timings.redraw, 50))}, max ${fmt(Math.max(...timings.redraw))}`);
  }
} finally {
  await browser.close();
  await server.close();
}

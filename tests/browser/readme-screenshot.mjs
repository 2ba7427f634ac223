// The README's picture of the report page, docs/img/page.png. Run after scripts/build-viewer.sh:
//   node tests/browser/readme-screenshot.mjs docs/img/page.png [QUERY [TESTID]]
// (QUERY: the page's address after `?`; TESTID: the element scrolled to the top.)
// then reduce it to 256 colours (`convert page.png -colors 256 PNG8:page.png`) to keep it small.
import { chartsDrawn, launchBrowser, newPage, startServer } from './support.mjs';

const reports = ['h100-sxm', 'h200', 'b200', '2x-h100-sxm-tp'].map((gpu) =>
  encodeURIComponent(`data/reports/sim-llama-3.1-8b-${gpu}.json`),
);
// The bundled comparison, its first chart (the Pareto frontier) just below the sticky contents.
const [out, query = `report=${reports[0]}${reports.slice(1).map((r) => `&compare=${r}`).join('')}`, testid = 'chart'] =
  process.argv.slice(2);
if (!out) {
  console.error('usage: node tests/browser/readme-screenshot.mjs OUTPUT.png [QUERY [TESTID]]');
  process.exit(2);
}
const server = await startServer();
const browser = await launchBrowser();
try {
  const { page } = await newPage(browser, { width: 1280, height: 860 });
  await page.goto(`${server.url}?${query}`);
  await chartsDrawn(page);
  await page.locator(`[data-testid="${testid}"]`).first().evaluate((e) => window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 170));
  await page.waitForTimeout(1500); // let the chart entry animations finish
  await page.screenshot({ path: out });
  console.log(out);
} finally {
  await browser.close();
  await server.close();
}

// Writes PNG screenshots of the full report (light and dark), the landing page, an embed and an
// error panel into the folder given as argument. Run after scripts/build-viewer.sh:
//   node tests/browser/screenshots.mjs /tmp/shots
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { chartsDrawn, launchBrowser, newPage, startServer } from './support.mjs';

const out = process.argv[2];
if (!out) {
  console.error('usage: node tests/browser/screenshots.mjs OUTPUT_DIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const report = `?report=${encodeURIComponent('data/reports/sample-synthetic.json')}`;
const shots = [
  ['landing.png', '', { width: 1280, height: 800 }, false],
  ['report-light.png', report, { width: 1280, height: 900 }, true],
  ['report-dark.png', `${report}&theme=dark`, { width: 1280, height: 900 }, true],
  ['embed.png', `${report}&chart=fastest.decode`, { width: 800, height: 520 }, false],
  ['error.png', `?report=${encodeURIComponent('fixtures/malformed/truncated.json')}`, { width: 1000, height: 600 }, false],
];

const server = await startServer();
const browser = await launchBrowser();
try {
  for (const [name, query, viewport, fullPage] of shots) {
    const { page } = await newPage(browser, viewport);
    await page.goto(server.url + query);
    if (query.includes('report=data')) await chartsDrawn(page);
    else await page.waitForSelector('[data-testid="landing"] li, [data-testid="error-panel"]');
    await page.waitForTimeout(1200); // let the chart entry animations finish
    await page.screenshot({ path: join(out, name), fullPage });
    console.log(join(out, name));
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}

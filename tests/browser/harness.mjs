// What the browser test files share: one static server and one headless chromium per file
// (`useBrowser`, registered as the file's before/after hooks; `server` and `browser` are live
// bindings, set once the hooks ran), report addresses, and the checks every page gets.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';

import { launchBrowser, startServer } from './support.mjs';

export let server;
export let browser;

/// Starts the server and the browser before the file's tests and stops them after.
export function useBrowser() {
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
}

/// The viewer's address for `report` (a path under the served folder), with `extra` query.
export function reportUrl(report, extra = '') {
  return `${server.url}?report=${encodeURIComponent(report)}${extra}`;
}

/// What must never happen on a page (support.mjs `newPage` records it).
export function assertClean(problems) {
  assert.deepEqual(problems.pageErrors, [], 'uncaught page errors');
  assert.deepEqual(problems.panics, [], 'wasm panics');
  assert.deepEqual(problems.dialogs, [], 'dialogs opened');
  assert.deepEqual(problems.external, [], 'requests leaving the local server');
}

/// Polls `read` every 50 ms (up to 5 s) until it returns something other than `before`, and
/// returns that: the page updates a moment after the input that changes it.
export async function changedFrom(before, read, what) {
  for (let tries = 0; ; tries++) {
    const now = await read();
    if (JSON.stringify(now) !== JSON.stringify(before)) return now;
    assert.ok(tries < 100, `${what} changes`);
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

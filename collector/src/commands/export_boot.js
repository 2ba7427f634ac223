// Starts the viewer in a file written by `infermeter export` (collector/src/export.rs), with no
// request beyond the page itself: ECharts and the wasm are read from this page's elements
// (gzip, base64), the wasm-bindgen loader and its snippets from data: URLs, the reports by the
// app itself (`inline:N`, src/load.rs).

/// The gzip-compressed bytes in element `id`, decompressed, as a Response to read them from.
function inflate(id) {
  const text = document.getElementById(id).textContent;
  const bytes = Uint8Array.fromBase64?.(text) ?? Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')));
}

function fail(what) {
  const boot = document.getElementById('boot');
  if (!boot) return;
  boot.textContent = `The report viewer could not start: ${what}. This file needs a browser ` +
    'from 2023 or later (Chrome 80, Firefox 113, Safari 16.4) with JavaScript enabled.';
  boot.setAttribute('role', 'alert');
}

// The charts wait for this (public/infermeter-echarts.js), as they do for the served viewer.
globalThis.infermeterEchartsReady = inflate('infermeter-echarts').text().then((code) => {
  const script = document.createElement('script');
  script.textContent = code;
  document.head.appendChild(script);
});
// Each chart says so when it fails; this only keeps it from being an uncaught error.
globalThis.infermeterEchartsReady.catch(() => {});

// The wasm modules split off the main one (the sections below the first screen), as blob: URLs
// for the JS that loads them when first needed (collector/src/commands/export.rs rewrites it).
globalThis.infermeterSplitUrls = {};
const splits = Promise.all([...document.querySelectorAll('script[data-split]')].map(async (element) => {
  const bytes = await inflate(element.id).arrayBuffer();
  globalThis.infermeterSplitUrls[element.dataset.split] =
    URL.createObjectURL(new Blob([bytes], { type: 'application/wasm' }));
}));

try {
  const { default: init, initSync } = await import('__LOADER_URL__');
  globalThis.infermeterInitSync = initSync;
  const [wasm] = await Promise.all([inflate('infermeter-wasm').arrayBuffer(), splits]);
  await init({ module_or_path: wasm });
} catch (error) {
  fail(String(error?.message ?? error));
}

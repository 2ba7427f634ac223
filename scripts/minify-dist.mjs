// Minifies what trunk copies into dist/ as written — the wasm-bindgen loader and JS snippets
// (terser), the CSS (esbuild) and index.html's inline script — then rewrites the
// subresource-integrity hashes in dist/index.html to match. Trunk's own minifier is off: it
// fails on the wasm-bindgen loader.
// Run by scripts/build-viewer.sh after `trunk build --release`.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, relative } from 'node:path';

const require = createRequire(import.meta.url);
const { minify } = require('terser');
const esbuild = require('esbuild');

const dist = process.argv[2];
if (!dist) throw new Error('usage: node scripts/minify-dist.mjs DIST_DIR');

/// The loader and CSS in `dir` itself and every JS file under `dir/snippets`.
function assets(dir, recurse = false) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return recurse || name === 'snippets' ? assets(path, true) : [];
    return /\.(js|css)$/.test(name) ? [path] : [];
  });
}

async function minified(path) {
  const source = readFileSync(path, 'utf8');
  if (extname(path) === '.css') {
    return (await esbuild.transform(source, { loader: 'css', minify: true })).code;
  }
  return (await minify(source, { module: true, ecma: 2020, compress: { passes: 2 } })).code;
}

let html = readFileSync(join(dist, 'index.html'), 'utf8');
for (const path of assets(dist)) {
  const code = await minified(path);
  writeFileSync(path, code);
  const href = './' + relative(dist, path);
  const integrity = 'sha384-' + createHash('sha384').update(code).digest('base64');
  const tag = new RegExp(`<link[^>]*href=["']?${href.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?[^>]*>`);
  if (!tag.test(html)) throw new Error(`dist/index.html does not link ${href}`);
  html = html.replace(tag, (link) => link.replace(/integrity=["']?sha384-[A-Za-z0-9+/=]+["']?/, `integrity="${integrity}"`));
}
// The page's own inline script (index.html) and its comments: written to be read, shipped small.
// Classic script, not a module: its top-level names stay as written (terser's default).
html = html.replace(/<!--[\s\S]*?-->\s*/g, '');
const inline = /<script>([\s\S]*?)<\/script>/g;
for (const [tag, source] of [...html.matchAll(inline)]) {
  const { code } = await minify(source, { ecma: 2020, compress: { passes: 2 } });
  html = html.replace(tag, () => `<script>${code}</script>`);
}
writeFileSync(join(dist, 'index.html'), html);

// Minifies the JS trunk leaves as is in dist/ (the wasm-bindgen loader and the JS snippets:
// trunk's own minifier fails on the loader), then rewrites the subresource-integrity hashes
// in dist/index.html to match. Run by scripts/build-viewer.sh after `trunk build --release`.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const require = createRequire(import.meta.url);
const { minify } = require('terser');

const dist = process.argv[2];
if (!dist) throw new Error('usage: node scripts/minify-dist.mjs DIST_DIR');

/// The loader in `dir` itself and every JS file under `dir/snippets`.
function jsFiles(dir, recurse = false) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return recurse || name === 'snippets' ? jsFiles(path, true) : [];
    return name.endsWith('.js') ? [path] : [];
  });
}

let html = readFileSync(join(dist, 'index.html'), 'utf8');
for (const path of jsFiles(dist)) {
  const source = readFileSync(path, 'utf8');
  const { code } = await minify(source, { module: true, ecma: 2020, compress: { passes: 2 } });
  writeFileSync(path, code);
  const href = './' + relative(dist, path);
  const integrity = 'sha384-' + createHash('sha384').update(code).digest('base64');
  // Trunk writes `href=… integrity=…` (minified HTML) with the attributes in either order.
  const tag = new RegExp(`<link[^>]*href=["']?${href.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?[^>]*>`);
  html = html.replace(tag, (link) => link.replace(/integrity=["']?sha384-[A-Za-z0-9+/=]+["']?/, `integrity="${integrity}"`));
}
writeFileSync(join(dist, 'index.html'), html);

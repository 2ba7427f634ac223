// Turns cargo's wasm into the served viewer, as trunk did, without trunk (compiling trunk was
// most of a fresh set-up): reads index.html's `<link data-trunk ...>` elements and
//   rel="rust":     runs wasm-bindgen (--target web) and the pinned wasm-opt with the link's
//                   data-wasm-opt level and data-wasm-opt-params, minifies the JS loader and its
//                   snippets (terser), and puts the module script that starts the app in the
//                   link's place, with preload links (subresource integrity) in the head;
//   rel="css":      minifies the sheet (esbuild) into main-<hash>.css and links it;
//   rel="copy-dir": copies the folder into the output, under its own name;
// then minifies the page's inline script and drops its comments.
// The wasm and its loader are named <bin>-<hash>, the CSS main-<hash> (16 hex digits, of what
// makes their content): `infermeter view` lets browsers keep such files for good.
//   NODE_PATH=<npm tools>/node_modules node scripts/assemble-viewer.mjs CARGO_WASM OUT_DIR
// Run by scripts/build-viewer.sh, which puts the pinned wasm-opt first on PATH.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const nodeModules = process.env.NODE_PATH?.split(':')[0];
if (!nodeModules) throw new Error('set NODE_PATH to the npm tools\' node_modules (scripts/env.sh does)');
const require = createRequire(join(nodeModules, '.'));
const { minify } = require('terser');
const esbuild = require('esbuild');

const [cargoWasm, out] = process.argv.slice(2);
if (!cargoWasm || !out) throw new Error('usage: node scripts/assemble-viewer.mjs CARGO_WASM OUT_DIR');
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// tools/wasm-split's binary (scripts/build-viewer.sh builds it natively and names it here).
const splitTool = process.env.INFERMETER_WASM_SPLIT;
if (!splitTool) throw new Error('set INFERMETER_WASM_SPLIT to tools/wasm-split\'s binary (scripts/build-viewer.sh does)');
// The import module the main wasm loads the split modules through (wasm_split_cli_support's
// default link name), and the wasm features cargo's wasm32 target enables, which the split
// modules (no target_features section) must be optimized with.
const splitLink = './__wasm_split.js';
const wasmFeatures = ['--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue'];

const sha = (algorithm, ...parts) => {
  const hash = createHash(algorithm);
  for (const part of parts) hash.update(part);
  return hash;
};
const short = (...parts) => sha('sha256', ...parts).digest('hex').slice(0, 16);
const integrity = (bytes) => 'sha384-' + sha('sha384', bytes).digest('base64');
const run = (tool, args) => {
  try {
    return execFileSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  } catch (error) {
    throw new Error(`${tool} ${args.join(' ')} failed (${error.message.split('\n')[0]}); ` +
      'run scripts/setup-build.sh to install the pinned tools');
  }
};
const minifiedJs = async (source) =>
  (await minify(source, { module: true, ecma: 2020, compress: { passes: 2 } })).code;

/// `name="value"` and bare `name` attributes of a tag's text.
function attributes(text) {
  const attrs = {};
  for (const [, name, value] of text.matchAll(/([\w-]+)(?:\s*=\s*"([^"]*)")?/g)) attrs[name] = value ?? '';
  return attrs;
}

/// Every file under `dir`, as paths relative to it.
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path).map((f) => join(name, f)) : [name];
  });
}

/// The split-off wasm modules in `split` (tools/wasm-split's output beside its main module),
/// each through wasm-opt and named by its content into `out`, and the JS that loads them on
/// demand (`__wasm_split.js`, pointing at those names), minified and named by its content too.
/// Returns the JS file's name. `bin` is the name the splitting tool gave the main module's
/// loader, `name` the one it is written under.
async function splitModules(split, out, level, params, bin, name) {
  let link = readFileSync(join(split, '__wasm_split.js'), 'utf8');
  const quoted = [`"./${bin}.js"`, `'./${bin}.js'`].find((q) => link.includes(q));
  if (!quoted) throw new Error(`${split}/__wasm_split.js does not import ./${bin}.js`);
  link = link.replaceAll(quoted, `"./${name}.js"`);
  // The main module's export pruning does not apply: a split module exports nothing but its
  // entry points.
  const chunkParams = params.filter((p) => !p.startsWith('--remove-exports') && !p.startsWith('--pass-arg=remove-exports'));
  for (const module of readdirSync(split).filter((f) => f.endsWith('.wasm') && f !== 'main.wasm')) {
    const optimized = join(split, `opt-${module}`);
    run('wasm-opt', [`--output=${optimized}`, `-O${level}`, join(split, module), ...wasmFeatures, ...chunkParams]);
    const bytes = readFileSync(optimized);
    const file = `split-${short(bytes)}.wasm`;
    writeFileSync(join(out, file), bytes);
    if (!link.includes(`"./${module}"`)) throw new Error(`${split}/__wasm_split.js does not load ${module}`);
    link = link.replaceAll(`"./${module}"`, `"./${file}"`);
  }
  const code = await minifiedJs(link);
  const file = `split-${short(code)}.js`;
  writeFileSync(join(out, file), code);
  return file;
}

mkdirSync(out, { recursive: true });
// Comments first: a commented-out link is not built.
let html = readFileSync(join(root, 'index.html'), 'utf8').replace(/<!--[\s\S]*?-->\s*/g, '');
const preloads = [];
const links = [...html.matchAll(/<link\s+data-trunk\b([^>]*?)\/?>/g)];
if (!links.some(([, text]) => attributes(text).rel === 'rust')) {
  throw new Error('index.html has no <link data-trunk rel="rust" ...> naming the viewer\'s binary');
}
for (const [tag, text] of links) {
  const attrs = attributes(text);
  let replacement = '';
  if (attrs.rel === 'rust') {
    const bin = attrs['data-bin'];
    if (!bin) throw new Error('index.html: the rel="rust" link needs data-bin (the viewer\'s binary)');
    const level = attrs['data-wasm-opt'] ?? 'z';
    const params = (attrs['data-wasm-opt-params'] ?? '').split(/\s+/).filter(Boolean);
    const versions = run('wasm-bindgen', ['--version']) + run('wasm-opt', ['--version']);
    const bindgen = mkdtempSync(join(tmpdir(), 'infermeter-bindgen-'));
    try {
      // The wasm split at its `#[wasm_split]` functions first (tools/wasm-split): wasm-bindgen reads the
      // main module only and must keep the exports the split modules link to.
      const split = join(bindgen, 'split');
      run(splitTool, [cargoWasm, split, bin]);
      // Named as the binary, then renamed, as trunk does: wasm-bindgen writes the name into
      // every import of the wasm (a hashed one made it 2.5 KB larger).
      run('wasm-bindgen', ['--target=web', `--out-dir=${bindgen}`, `--out-name=${bin}`, '--no-typescript',
        '--keep-lld-exports', join(split, 'main.wasm')]);
      const optimized = join(bindgen, `opt-${bin}_bg.wasm`);
      run('wasm-opt', [`--output=${optimized}`, `-O${level}`, join(bindgen, `${bin}_bg.wasm`), ...params]);
      // Named by what ships, not by cargo's wasm: that one's export names carry symbol hashes
      // that differ from machine to machine (its flags remap the cargo registry's path, which is
      // the machine's), while the shipped wasm is the same bytes everywhere, as the committed
      // viewer needs (scripts/prebuilt-viewer.sh).
      const name = `${bin}-${short(readFileSync(optimized), level, params.join(' '), versions)}`;
      const wasm = `${name}_bg.wasm`;
      writeFileSync(join(out, wasm), readFileSync(optimized));
      const link = await splitModules(split, out, level, params, bin, name);
      const scripts = [[`${bin}.js`, `${name}.js`],
        ...files(bindgen).filter((f) => f.startsWith('snippets/') && f.endsWith('.js')).map((f) => [f, f])];
      for (const [from, script] of scripts) {
        let code = await minifiedJs(readFileSync(join(bindgen, from), 'utf8'));
        // Only the import: the same path names the wasm's import module, which must stay.
        if (script === `${name}.js`) code = code.replaceAll(`from"${splitLink}"`, `from"./${link}"`);
        mkdirSync(dirname(join(out, script)), { recursive: true });
        writeFileSync(join(out, script), code);
        preloads.push(`<link rel="modulepreload" href="./${script}" crossorigin="anonymous" integrity="${integrity(code)}">`);
      }
      preloads.push(`<link rel="modulepreload" href="./${link}" crossorigin="anonymous" integrity="${integrity(readFileSync(join(out, link)))}">`);
      preloads.push(`<link rel="preload" href="./${wasm}" crossorigin="anonymous" integrity="${integrity(readFileSync(join(out, wasm)))}" as="fetch" type="application/wasm">`);
      replacement = `<script type="module">import init from './${name}.js';await init({module_or_path:'./${wasm}'});</script>`;
    } finally {
      rmSync(bindgen, { recursive: true, force: true });
    }
  } else if (attrs.rel === 'css') {
    const source = readFileSync(join(root, attrs.href), 'utf8');
    const { code } = await esbuild.transform(source, { loader: 'css', minify: true });
    const file = `${basename(attrs.href, '.css')}-${short(code)}.css`;
    writeFileSync(join(out, file), code);
    replacement = `<link rel="stylesheet" href="./${file}" integrity="${integrity(code)}"/>`;
  } else if (attrs.rel === 'copy-dir') {
    cpSync(join(root, attrs.href), join(out, basename(attrs.href)), { recursive: true });
  } else {
    throw new Error(`index.html: <link data-trunk rel="${attrs.rel}"> is not built by scripts/assemble-viewer.mjs`);
  }
  html = html.replace(tag, () => replacement);
}
html = html.replace('</head>', () => `${preloads.join('')}</head>`);
// The page's own inline script: written to be read, shipped small. Classic script, not a module:
// its top-level names stay as written (terser's default).
for (const [tag, source] of [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)]) {
  const { code } = await minify(source, { ecma: 2020, compress: { passes: 2 } });
  html = html.replace(tag, () => `<script>${code}</script>`);
}
writeFileSync(join(out, 'index.html'), html.replace(/\n\s*\n/g, '\n'));
console.error(`[build-viewer] assembled ${files(out).length} files into ${relative(process.cwd(), out) || out}`);

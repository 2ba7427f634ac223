// Builds the ECharts bundle the viewer loads (public/vendor/echarts.min.js): esbuild bundles
// scripts/echarts-bundle.mjs, keeping only the ECharts modules it imports, and terser minifies
// (a few KB gzip smaller than esbuild's own minifier on this code).
//   NODE_PATH=<npm tools>/node_modules node scripts/build-echarts.mjs OUTFILE
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const nodeModules = process.env.NODE_PATH;
if (!nodeModules) throw new Error('set NODE_PATH to the npm tools\' node_modules (scripts/env.sh does)');
const require = createRequire(join(nodeModules, '.'));
const esbuild = require('esbuild');
const { minify } = require('terser');

const outfile = process.argv[2];
if (!outfile) throw new Error('usage: node scripts/build-echarts.mjs OUTFILE');

// ECharts registers these whether or not they are used, so they are replaced by empty modules:
// the viewer shows English only, passes its own theme colours, renders tooltips as HTML (not
// canvas rich text), never calls showLoading, sets no decal patterns, and writes options in
// ECharts 5's own terms (no ECharts 2-4 names for the backward-compatibility pass to rename),
// and has value and log axes only: the time and category scales (which the axis helper imports
// for those axis types alone, and tests with `instanceof`) are never made (2.8 KB gzip), nor
// is zrender's incremental displayable (only the large-data views of other series draw with it).
const UNUSED = /\/(i18n\/langZH|theme\/dark|tooltip\/TooltipRichContent|loading\/default|visual\/decal|preprocessor\/backwardCompat|scale\/Time|scale\/Ordinal|graphic\/IncrementalDisplayable)\.js$/;
const dropUnused = {
  name: 'drop-unused-echarts-modules',
  setup(build) {
    build.onLoad({ filter: UNUSED }, () => ({ contents: 'export default function unused() {}', loader: 'js' }));
  },
};

const bundled = await esbuild.build({
  entryPoints: [new URL('./echarts-bundle.mjs', import.meta.url).pathname],
  bundle: true,
  format: 'iife',
  target: 'es2019',
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  nodePaths: [nodeModules],
  plugins: [dropUnused],
  write: false,
  logLevel: 'warning',
});
const { code } = await minify(bundled.outputFiles[0].text, {
  ecma: 2019,
  compress: { passes: 2, pure_getters: true },
  mangle: true,
});
writeFileSync(outfile, code);

// The ECharts build the viewer loads: only the chart types and components the charts use, from
// `echarts/core`, and only the two functions anyone calls, exposed as the global `echarts`:
// `init` (src/components/chart.rs) and `getInstanceByDom` (browser tests, benchmark).
// Exposing the whole `echarts/core` namespace instead would keep every API it exports (maps,
// GeoJSON parsing, time and number utilities...) out of reach of tree-shaking.
// Built by scripts/build-echarts.mjs (esbuild, terser) into public/vendor/echarts.min.js.
// When a chart starts using another series type or component, add it here (the charts use
// line series with mark lines and points, and an axis tooltip only; the legend is HTML).
import { getInstanceByDom, init, use } from 'echarts/core';
import { LineChart } from 'echarts/charts';
import { GridComponent, MarkLineComponent, MarkPointComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, MarkLineComponent, MarkPointComponent, CanvasRenderer]);

globalThis.echarts = { init, getInstanceByDom };

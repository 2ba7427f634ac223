// The ECharts build the viewer loads: only the chart types and components the charts use, from
// `echarts/core`, exposed as the global `echarts` that src/components/chart.rs calls.
// Built by scripts/build-viewer.sh with esbuild into public/vendor/echarts.min.js.
// When a chart starts using another series type or component, add it here (the charts use
// line series with mark lines and points, a scrolling legend and an axis tooltip only).
import * as echarts from 'echarts/core';
import { LineChart } from 'echarts/charts';
import {
  GridComponent,
  TooltipComponent,
  LegendComponent,
  MarkLineComponent,
  MarkPointComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  LineChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  MarkLineComponent,
  MarkPointComponent,
  CanvasRenderer,
]);

globalThis.echarts = echarts;

// The ECharts build the viewer loads: only the chart types and components the charts use, from
// `echarts/core`, exposed as the global `echarts` that charming's bindings and ours call.
// Built by scripts/build-viewer.sh with esbuild into public/vendor/echarts.min.js.
// When a chart starts using another series type or component, add it here.
import * as echarts from 'echarts/core';
import { LineChart, BarChart } from 'echarts/charts';
import {
  GridComponent,
  TooltipComponent,
  LegendComponent,
  MarkLineComponent,
  MarkAreaComponent,
  MarkPointComponent,
  TitleComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  LineChart,
  BarChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  MarkLineComponent,
  MarkAreaComponent,
  MarkPointComponent,
  TitleComponent,
  CanvasRenderer,
]);

globalThis.echarts = echarts;

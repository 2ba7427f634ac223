// Turns the chart option the wasm app serialises as JSON into the object ECharts reads. JSON has
// no functions, so the charts name their formatters ("infermeter:…" strings, see
// src/charts/plot.rs) and this module puts the functions, defined here, in their place: no code
// is built from strings at run time (no 'unsafe-eval').

const PREFIX = 'infermeter:';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/// Tooltips are HTML: every string from a report goes through this.
function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/// Tooltip listing every series at the hovered x with its unit (`units` by series index). The
/// values come written: `texts[series][point]` holds each point's x and y as the page writes
/// them (the report crate's formatter, src/charts/plot.rs), so this formats no number itself.
function tooltip({ units, x, texts }) {
  return (params) => {
    const ps = Array.isArray(params) ? params : [params];
    let out = '';
    for (const q of ps) {
      const written = texts?.[q.seriesIndex]?.[q.dataIndex];
      if (!Array.isArray(written)) continue;
      const [xText, yText] = written;
      if (out === '') out = escapeHtml(x) + ': ' + escapeHtml(xText);
      const unit = escapeHtml(units[q.seriesIndex] || '');
      out += '<br/>' + q.marker + escapeHtml(q.seriesName) + ': <b>' + escapeHtml(yText) + '</b> ' + unit;
    }
    return out;
  };
}

/// Tooltip of one hovered point (an item tooltip): its series' name, then the lines the chart
/// wrote for that point (`texts[series][point]`, a list of strings), each escaped.
function point({ texts }) {
  return (params) => {
    const q = Array.isArray(params) ? params[0] : params;
    const lines = q ? texts?.[q.seriesIndex]?.[q.dataIndex] : null;
    if (!Array.isArray(lines)) return '';
    return q.marker + '<b>' + escapeHtml(q.seriesName) + '</b>'
      + lines.map((line) => '<br/>' + escapeHtml(line)).join('');
  };
}

/// Labels whole powers of two only (the padded axis ends are not).
function log2Label() {
  return (v) => {
    const l = Math.log2(v);
    return Math.abs(l - Math.round(l)) < 1e-6 ? String(Math.round(v)) : '';
  };
}

const FACTORIES = { tooltip, point, 'log2-label': log2Label };

/// The function a formatter name stands for, or the string itself when it names none.
/// A name is `infermeter:KIND` or `infermeter:KIND:ARGS` with ARGS a JSON object.
function formatterFor(value) {
  if (typeof value !== 'string' || !value.startsWith(PREFIX)) return value;
  const rest = value.slice(PREFIX.length);
  const colon = rest.indexOf(':');
  const kind = colon < 0 ? rest : rest.slice(0, colon);
  const factory = Object.prototype.hasOwnProperty.call(FACTORIES, kind) ? FACTORIES[kind] : null;
  if (!factory) return value;
  return factory(colon < 0 ? {} : JSON.parse(rest.slice(colon + 1)));
}

function revive(node) {
  if (Array.isArray(node)) {
    node.forEach(revive);
  } else if (node !== null && typeof node === 'object') {
    for (const key of Object.keys(node)) {
      if (key === 'formatter') node[key] = formatterFor(node[key]);
      else revive(node[key]);
    }
  }
  return node;
}

/// Settles once the ECharts bundle has run: index.html loads it beside the app and keeps the
/// promise in `infermeterEchartsReady`. Rejects with the reason when it did not load. (The app
/// checks for `echarts` itself first, so a chart is created at once when it is there.)
export function echartsReady() {
  return globalThis.infermeterEchartsReady
    ?? Promise.reject(new Error('index.html does not load vendor/echarts.min.js'));
}

/// The ECharts option for a chart serialised as JSON by the app, with what every chart of the
/// app shares added when the chart did not choose it: a tooltip (axis-triggered) that stays
/// inside the chart and also opens on click (pinning), unpinned (a redraw releases a pin).
/// Series named in `hidden` (switched off in the legend) are drawn empty: they keep their index,
/// which the tooltip's units are keyed by, and the values a shown series is stacked on.
export function parseOption(json, hidden) {
  const option = revive(JSON.parse(json));
  option.tooltip ??= { trigger: 'axis' };
  if (option.tooltip && typeof option.tooltip === 'object' && !Array.isArray(option.tooltip)) {
    option.tooltip.confine ??= true;
    option.tooltip.triggerOn ??= 'mousemove|click';
    option.tooltip.alwaysShowContent ??= false;
  }
  const off = new Set(hidden || []);
  const all = option.series || [];
  for (const series of all) {
    if (!off.has(series.name)) continue;
    series.markLine = { data: [] };
    series.markPoint = { data: [] };
    const carries = series.stack != null
      && all.some((s) => s !== series && s.stack === series.stack && !off.has(s.name));
    if (carries) {
      // A shown series is stacked on its values (a band's lower edge): keep them, draw nothing.
      Object.assign(series, { symbol: 'none', lineStyle: { opacity: 0 }, tooltip: { show: false }, silent: true });
    } else {
      series.data = [];
    }
  }
  return option;
}

/// Redraws `instance` at `host`'s size whenever that changes: on window resizes and also when
/// the page around the chart changes width (a scrollbar appearing as the report grows, which
/// fires no window `resize`). Also keeps whether `host` is on screen, for `onScreen`. Returns
/// the function that stops watching.
export function watchHost(instance, host) {
  let last = `${host.clientWidth}x${host.clientHeight}`;
  const observer = new ResizeObserver(() => {
    const now = `${host.clientWidth}x${host.clientHeight}`;
    // The observer also reports the size it starts with: ECharts redraws whole on any resize.
    if (now !== last) {
      last = now;
      instance.resize();
    }
  });
  observer.observe(host);
  // Within a screen's height of the viewport counts as on screen: a chart about to be scrolled
  // to is kept as current as one in view.
  const seen = new IntersectionObserver((entries) => {
    for (const entry of entries) ON_SCREEN.set(host, entry.isIntersecting);
  }, { rootMargin: '100% 0px' });
  seen.observe(host);
  return () => {
    observer.disconnect();
    seen.disconnect();
  };
}

const ON_SCREEN = new WeakMap();

/// Whether `host` was on (or near) the screen when last seen; true until first seen. Reads no
/// layout, so a chart update can ask it in the middle of the page's other updates.
export function onScreen(host) {
  return ON_SCREEN.get(host) ?? true;
}

/// Runs `f` when the browser is next idle; where there is no `requestIdleCallback` (Safari), a
/// moment after the page has drawn instead of never.
export function whenIdle(f) {
  if (typeof globalThis.requestIdleCallback === 'function') requestIdleCallback(() => f());
  else setTimeout(() => f(), 300);
}

/// Applies `next` to a drawn chart that shows `prev`. ECharts' plain merge reuses the series
/// (its update then takes ~25% less time than when they are replaced), but it keeps any key `next`
/// leaves out, so it is used only when it yields exactly `next`: the same series, by name and
/// in order, none of whose nested objects loses a key. Otherwise the series are replaced whole.
export function updateChart(instance, next, prev) {
  const [a, b] = [prev?.series || [], next.series || []];
  const merge = a.length === b.length && a.every((s, i) => s.name === b[i].name && keeps(s, b[i]));
  instance.setOption(next, merge ? {} : { replaceMerge: ['series'] });
}

/// Whether merging `next` into `prev` keeps no key of `prev` that `next` lacks. ECharts merges
/// plain objects key by key and replaces everything else (arrays, functions, values) whole.
function keeps(prev, next) {
  const plain = (v) => v !== null && Object.getPrototypeOf(v) === Object.prototype;
  if (!plain(prev) || !plain(next)) return true;
  return Object.keys(prev).every((key) => key in next && keeps(prev[key], next[key]));
}

/// The chart picture (`url`, a PNG data URL at pixel ratio 2) with the legend drawn under it:
/// the page's legend is HTML, which a canvas export would leave out. Resolves to a PNG data URL.
export async function withLegend(url, entries, text, background) {
  if (!entries.length) return url;
  const image = new Image();
  image.src = url;
  await image.decode();
  const ratio = 2, pad = 12 * ratio, swatch = 18 * ratio, gap = 16 * ratio, line = 20 * ratio;
  const font = `${12 * ratio}px system-ui, sans-serif`;
  const measure = document.createElement('canvas').getContext('2d');
  measure.font = font;
  // Lay the entries out in rows as wide as the picture.
  const rows = [[]];
  let x = pad;
  for (const entry of entries) {
    const width = swatch + 6 * ratio + measure.measureText(entry.name).width;
    if (x + width > image.width - pad && rows[rows.length - 1].length) {
      rows.push([]);
      x = pad;
    }
    rows[rows.length - 1].push({ entry, x });
    x += width + gap;
  }
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height + rows.length * line + pad;
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(image, 0, 0);
  ctx.font = font;
  ctx.textBaseline = 'middle';
  rows.forEach((row, i) => {
    const y = image.height + i * line + line / 2;
    for (const { entry, x } of row) {
      ctx.strokeStyle = entry.color;
      ctx.lineWidth = 3 * ratio;
      ctx.setLineDash({ dashed: [4 * ratio, 3 * ratio], dotted: [1 * ratio, 2 * ratio] }[entry.dash] ?? []);
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x + swatch, y);
      ctx.stroke();
      ctx.fillStyle = text;
      ctx.fillText(entry.name, x + swatch + 6 * ratio, y);
    }
  });
  return canvas.toDataURL('image/png');
}

/// Keeps `--topbar-height` and `--sticky-bottom` (CSS pixels) on the root element from the bars
/// that stay at the top of the report page: the top bar (`.topbar`) and, where the style sheet
/// makes it sticky, the table of contents `toc`, whose height depends on the window's width (its
/// links wrap to one, two or three rows). `style/main.css` places the contents under the top bar
/// and gives every section that `scroll-margin-top`, so a link to a section lands its heading
/// below the bars. Measured at once and whenever either bar changes size; returns the function
/// that stops.
export function keepStickyOffsets(toc) {
  const topbar = document.querySelector('.topbar');
  const sticky = (e) => e && getComputedStyle(e).position === 'sticky';
  const measure = () => {
    const height = topbar ? topbar.offsetHeight : 0;
    let bottom = sticky(topbar) ? height : 0;
    if (sticky(toc)) bottom = Math.max(bottom, height + toc.offsetHeight);
    const root = document.documentElement.style;
    root.setProperty('--topbar-height', `${height}px`);
    root.setProperty('--sticky-bottom', `${bottom}px`);
  };
  // The observer also reports the sizes it starts with.
  const observer = new ResizeObserver(measure);
  observer.observe(toc);
  if (topbar) observer.observe(topbar);
  return () => observer.disconnect();
}

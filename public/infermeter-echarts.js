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

/// The value as measured: four significant digits, and every integer digit from 1000 up
/// (thousands grouped), so 172.4999 reads 172.5 and 12345.6 reads 12,346.
function formatValue(v) {
  if (v == null || !isFinite(v)) return '-';
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Number(v.toPrecision(4)));
}

/// Tooltip listing every series at the hovered x with its unit (`units` by series index).
/// Band tops read the real value kept in the third dimension.
function tooltip({ units, x }) {
  return (params) => {
    const ps = Array.isArray(params) ? params : [params];
    let out = '';
    for (const q of ps) {
      const v = q.value;
      if (!Array.isArray(v)) continue;
      if (out === '') out = escapeHtml(x) + ': ' + formatValue(v[0]);
      const y = v.length > 2 ? v[2] : v[1];
      const unit = escapeHtml(units[q.seriesIndex] || '');
      out += '<br/>' + q.marker + escapeHtml(q.seriesName) + ': <b>' + formatValue(y) + '</b> ' + unit;
    }
    return out;
  };
}

/// Labels whole powers of two only (the padded axis ends are not).
function log2Label() {
  return (v) => {
    const l = Math.log2(v);
    return Math.abs(l - Math.round(l)) < 1e-6 ? String(Math.round(v)) : '';
  };
}

const FACTORIES = { tooltip, 'log2-label': log2Label };

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

/// The ECharts option for a chart serialised as JSON by the app, with what every chart of the
/// app shares added when the chart did not choose it: a tooltip (axis-triggered) that stays
/// inside the chart and also opens on click (pinning), the theme `palette` and a transparent
/// background.
export function parseOption(json, palette) {
  const option = revive(JSON.parse(json));
  option.tooltip ??= { trigger: 'axis' };
  if (option.tooltip && typeof option.tooltip === 'object' && !Array.isArray(option.tooltip)) {
    option.tooltip.confine ??= true;
    option.tooltip.triggerOn ??= 'mousemove|click';
  }
  option.color ??= palette;
  option.backgroundColor ??= 'transparent';
  return option;
}

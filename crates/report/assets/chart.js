/* storbench charts: a small SVG chart renderer for the self-contained report.
 * Written for storbench (MIT OR Apache-2.0). No dependencies, nothing fetched.
 *
 * StorbenchCharts.renderAll(data) draws every chart of data.charts into the element
 * with id "chart-" + chart.id, then writes a verification summary (charts, series
 * drawn, errors captured) as JSON into #sb-verify for the browser test.
 */
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd',
    '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
  var W = 760, H = 340, M = { l: 72, r: 24, t: 16, b: 56 };

  function el(name, attrs, parent, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }

  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1e9) { return +(v / 1e9).toPrecision(3) + 'G'; }
    if (a >= 1e6) { return +(v / 1e6).toPrecision(3) + 'M'; }
    if (a >= 1e4) { return +(v / 1e3).toPrecision(3) + 'k'; }
    if (a >= 100 || v === Math.round(v)) { return String(Math.round(v)); }
    return String(+v.toPrecision(3));
  }

  function niceStep(range, count) {
    var raw = range / Math.max(1, count);
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  /* An axis: domain, mapping to pixels and tick values. */
  function linearAxis(lo, hi, p0, p1, zero) {
    if (zero) { lo = Math.min(0, lo); }
    if (!(hi > lo)) { hi = lo + 1; }
    var step = niceStep(hi - lo, 5);
    lo = Math.floor(lo / step) * step;
    hi = Math.ceil(hi / step) * step;
    var ticks = [];
    for (var v = lo; v <= hi + step / 2; v += step) { ticks.push(+v.toPrecision(12)); }
    return {
      lo: lo, hi: hi, ticks: ticks,
      map: function (v) { return p0 + (v - lo) / (hi - lo) * (p1 - p0); }
    };
  }

  function logAxis(lo, hi, p0, p1) {
    if (!(lo > 0)) { lo = 1; }
    if (!(hi > lo)) { hi = lo * 10; }
    var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
    if (b === a) { b = a + 1; }
    var ticks = [];
    for (var k = a; k <= b; k++) { ticks.push(Math.pow(10, k)); }
    return {
      lo: Math.pow(10, a), hi: Math.pow(10, b), ticks: ticks,
      map: function (v) { return p0 + (Math.log10(v) - a) / (b - a) * (p1 - p0); }
    };
  }

  function frame(svg, xAxis, yAxis, chart, xTickLabels) {
    var g = el('g', { 'class': 'axes' }, svg);
    yAxis.ticks.forEach(function (t) {
      var y = yAxis.map(t);
      el('line', { x1: M.l, x2: W - M.r, y1: y, y2: y, stroke: '#e3e3e3' }, g);
      el('text', { x: M.l - 6, y: y + 4, 'text-anchor': 'end', 'class': 'tick' }, g, fmt(t));
    });
    if (xAxis) {
      xAxis.ticks.forEach(function (t) {
        var x = xAxis.map(t);
        el('line', { x1: x, x2: x, y1: H - M.b, y2: H - M.b + 5, stroke: '#888' }, g);
        el('text', { x: x, y: H - M.b + 18, 'text-anchor': 'middle', 'class': 'tick' }, g, fmt(t));
      });
    }
    (xTickLabels || []).forEach(function (l) {
      el('text', { x: l.x, y: H - M.b + 18, 'text-anchor': 'middle', 'class': 'tick' }, g, l.text);
    });
    el('line', { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b, stroke: '#888' }, g);
    el('line', { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b, stroke: '#888' }, g);
    if (chart.x_label) {
      el('text', { x: (M.l + W - M.r) / 2, y: H - 14, 'text-anchor': 'middle', 'class': 'label' }, g, chart.x_label);
    }
    el('text', {
      x: 16, y: (M.t + H - M.b) / 2, 'text-anchor': 'middle', 'class': 'label',
      transform: 'rotate(-90 16 ' + (M.t + H - M.b) / 2 + ')'
    }, g, chart.y_label);
  }

  function yAxisFor(chart, values, zero) {
    var lo = Infinity, hi = -Infinity;
    values.forEach(function (v) {
      if (v === null || !isFinite(v)) { return; }
      if (chart.y_scale === 'log' && v <= 0) { return; }
      lo = Math.min(lo, v); hi = Math.max(hi, v);
    });
    if (lo === Infinity) { lo = chart.y_scale === 'log' ? 1 : 0; hi = lo + 1; }
    return chart.y_scale === 'log' ? logAxis(lo, hi, H - M.b, M.t)
      : linearAxis(lo, hi, H - M.b, M.t, zero);
  }

  function drawLine(svg, chart, visible) {
    var xlo = chart.x_min, xhi = chart.x_max;
    var pts = visible.map(function (s) {
      var out = [];
      for (var i = 0; i < s.x.length; i++) {
        var x = s.x[i], y = s.y[i];
        if (xlo !== null && x < xlo) { continue; }
        if (xhi !== null && x > xhi) { continue; }
        if (y === null || !isFinite(y)) { continue; }
        out.push([x, y]);
      }
      return out;
    });
    var xs = [], ys = [];
    pts.forEach(function (p) { p.forEach(function (q) { xs.push(q[0]); ys.push(q[1]); }); });
    var lo = xlo !== null ? xlo : Math.min.apply(null, xs.length ? xs : [0]);
    var hi = xhi !== null ? xhi : Math.max.apply(null, xs.length ? xs : [1]);
    var xAxis = linearAxis(lo, hi, M.l, W - M.r, false);
    var yAxis = yAxisFor(chart, ys, true);
    frame(svg, xAxis, yAxis, chart);
    var drawn = [];
    visible.forEach(function (s, i) {
      var d = '', n = 0;
      pts[i].forEach(function (q) {
        var y = q[1];
        if (chart.y_scale === 'log' && y < yAxis.lo) { y = yAxis.lo; }
        d += (n ? 'L' : 'M') + xAxis.map(q[0]).toFixed(1) + ' ' + yAxis.map(y).toFixed(1);
        n++;
      });
      el('path', {
        d: d || 'M0 0', fill: 'none', stroke: s._color, 'stroke-width': 1.3,
        'class': 'series', 'data-name': s.name, 'data-marks': n
      }, svg);
      drawn.push(n);
    });
    return drawn;
  }

  function drawBars(svg, chart, visible) {
    var all = [];
    visible.forEach(function (s) { all = all.concat(s.y); });
    var yAxis = yAxisFor(chart, all, true);
    var nc = chart.categories.length, ns = visible.length;
    var gw = (W - M.l - M.r) / Math.max(1, nc);
    var bw = gw * 0.8 / Math.max(1, ns);
    var labels = chart.categories.map(function (c, i) {
      return { x: M.l + gw * (i + 0.5), text: c.length > 28 ? c.slice(0, 27) + '…' : c };
    });
    frame(svg, null, yAxis, chart, labels);
    var base = chart.y_scale === 'log' ? yAxis.lo : 0;
    var drawn = [];
    visible.forEach(function (s, si) {
      var g = el('g', { 'class': 'series', 'data-name': s.name }, svg);
      var n = 0;
      for (var i = 0; i < s.y.length; i++) {
        var v = s.y[i];
        if (v === null || !isFinite(v) || (chart.y_scale === 'log' && v <= 0)) { continue; }
        var c = s.x[i];
        var x = M.l + gw * c + gw * 0.1 + bw * si;
        var y0 = yAxis.map(base), y1 = yAxis.map(v);
        var r = el('rect', {
          x: x.toFixed(1), y: Math.min(y0, y1).toFixed(1), width: Math.max(1, bw - 2).toFixed(1),
          height: Math.max(1, Math.abs(y0 - y1)).toFixed(1), fill: s._color
        }, g);
        el('title', {}, r, s.name + ': ' + fmt(v) + ' ' + chart.y_label);
        if (nc * ns <= 24) {
          el('text', { x: (x + bw / 2 - 1).toFixed(1), y: (y1 - 3).toFixed(1), 'text-anchor': 'middle', 'class': 'value' }, g, fmt(v));
        }
        n++;
      }
      g.setAttribute('data-marks', n);
      drawn.push(n);
    });
    return drawn;
  }

  function drawScatter(svg, chart, visible) {
    var xs = [], ys = [];
    visible.forEach(function (s) { xs = xs.concat(s.x); ys = ys.concat(s.y); });
    var xAxis = linearAxis(0, Math.max.apply(null, xs.concat([1])), M.l, W - M.r, true);
    var yAxis = yAxisFor(chart, ys, true);
    frame(svg, xAxis, yAxis, chart);
    var drawn = [];
    visible.forEach(function (s) {
      var g = el('g', { 'class': 'series', 'data-name': s.name }, svg);
      var n = 0;
      for (var i = 0; i < s.x.length; i++) {
        if (s.y[i] === null || !isFinite(s.y[i]) || s.x[i] === null) { continue; }
        var cx = xAxis.map(s.x[i]), cy = yAxis.map(s.y[i]);
        var c = el('circle', { cx: cx.toFixed(1), cy: cy.toFixed(1), r: 6, fill: s._color, 'fill-opacity': 0.85 }, g);
        el('title', {}, c, s.name + ': mean ' + fmt(s.x[i]) + ', std dev ' + fmt(s.y[i]));
        /* Label on the side with room: right of the point unless near the right edge. */
        var right = cx < W - M.r - 160;
        el('text', {
          x: (right ? cx + 9 : cx - 9).toFixed(1), y: (cy + 4).toFixed(1),
          'text-anchor': right ? 'start' : 'end', 'class': 'value'
        }, g, s.name);
        n++;
      }
      g.setAttribute('data-marks', n);
      drawn.push(n);
    });
    return drawn;
  }

  function legend(box, chart, visible) {
    var lg = document.createElement('div');
    lg.className = 'legend';
    visible.forEach(function (s) {
      var item = document.createElement('span');
      var sw = document.createElement('i');
      sw.style.background = s._color;
      item.appendChild(sw);
      item.appendChild(document.createTextNode(s.name));
      lg.appendChild(item);
    });
    box.appendChild(lg);
  }

  function uniq(list) {
    var out = [];
    list.forEach(function (v) { if (out.indexOf(v) < 0) { out.push(v); } });
    return out;
  }

  /* Draws `chart` into `box` with the current filter; returns marks per drawn series. */
  function draw(box, chart, state) {
    var old = box.querySelector('.plot');
    if (old) { box.removeChild(old); }
    var plot = document.createElement('div');
    plot.className = 'plot';
    box.appendChild(plot);
    var visible = chart.series.filter(function (s) {
      return (state.drive === null || s.drive === state.drive) &&
        (state.setting === null || s.setting === state.setting);
    });
    var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': chart.title }, plot);
    var drawn;
    if (chart.kind === 'line') { drawn = drawLine(svg, chart, visible); }
    else if (chart.kind === 'bars') { drawn = drawBars(svg, chart, visible); }
    else { drawn = drawScatter(svg, chart, visible); }
    legend(plot, chart, visible);
    return drawn;
  }

  function buttonRow(box, label, values, onPick) {
    var row = document.createElement('div');
    row.className = 'buttons';
    var l = document.createElement('span');
    l.textContent = label;
    row.appendChild(l);
    var buttons = [];
    [null].concat(values).forEach(function (v) {
      var b = document.createElement('button');
      b.type = 'button';
      b.textContent = v === null ? 'All' : v;
      b.addEventListener('click', function () {
        buttons.forEach(function (o) { o.classList.remove('on'); });
        b.classList.add('on');
        onPick(v);
      });
      if (v === null) { b.classList.add('on'); }
      buttons.push(b);
      row.appendChild(b);
    });
    box.appendChild(row);
    return buttons;
  }

  function renderChart(chart, index) {
    var box = document.getElementById('chart-' + chart.id);
    if (!box) { throw new Error('no element for chart ' + chart.id); }
    chart.series.forEach(function (s, i) { s._color = COLORS[i % COLORS.length]; });
    var state = { drive: null, setting: null };
    var result = { id: chart.id, kind: chart.kind, expected: chart.series.length };
    var title = document.createElement('h3');
    title.textContent = (index + 1) + '. ' + chart.title;
    box.appendChild(title);
    if (chart.buttons) {
      var drives = uniq(chart.series.map(function (s) { return s.drive; }));
      var settings = uniq(chart.series.map(function (s) { return s.setting; }));
      var driveButtons = buttonRow(box, 'Drive', drives, function (v) { state.drive = v; draw(box, chart, state); });
      var settingButtons = buttonRow(box, 'Spare area', settings, function (v) { state.setting = v; draw(box, chart, state); });
      /* Self-check for the browser test: every button shows exactly its series. */
      var checks = [];
      driveButtons.slice(1).forEach(function (b, i) {
        b.click();
        var want = chart.series.filter(function (s) { return s.drive === drives[i]; }).length;
        checks.push({ button: drives[i], expected: want, drawn: box.querySelectorAll('.series').length });
      });
      driveButtons[0].click();
      settingButtons.slice(1).forEach(function (b, i) {
        b.click();
        var want = chart.series.filter(function (s) { return s.setting === settings[i]; }).length;
        checks.push({ button: settings[i], expected: want, drawn: box.querySelectorAll('.series').length });
      });
      settingButtons[0].click();
      result.buttons = checks;
    }
    var drawn = draw(box, chart, state);
    result.drawn = drawn.filter(function (n) { return n > 0; }).length;
    result.marks = drawn.reduce(function (a, b) { return a + b; }, 0);
    return result;
  }

  function renderAll(data) {
    var results = [];
    data.charts.forEach(function (chart, i) {
      try {
        results.push(renderChart(chart, i));
      } catch (e) {
        console.error('chart ' + chart.id + ': ' + e);
        results.push({ id: chart.id, expected: chart.series.length, drawn: 0, marks: 0 });
      }
    });
    var v = document.getElementById('sb-verify');
    if (v) {
      v.textContent = JSON.stringify({ charts: results, errors: window.__sbErrors || [] });
    }
    return results;
  }

  window.StorbenchCharts = { renderAll: renderAll };
})();

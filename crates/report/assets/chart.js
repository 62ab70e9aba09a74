/* storbench report: chart interactions. Written for storbench (MIT OR Apache-2.0).
 * No dependencies, nothing fetched. The charts are SVG drawn by storbench itself (the
 * same SVG that `--images` writes); this script only adds the buttons (one drive, one
 * spare-area setting, dots or lines) and writes a verification summary (series and
 * marks per chart, button checks, errors captured) as JSON into #sb-verify for the
 * browser test.
 */
(function () {
  'use strict';

  function apply(box, state) {
    box.querySelectorAll('.series, .legend-item').forEach(function (g) {
      var hide = (state.drive && g.getAttribute('data-drive') !== state.drive) ||
        (state.setting && g.getAttribute('data-setting') !== state.setting);
      g.classList.toggle('off', !!hide);
    });
    box.classList.toggle('show-lines', state.style === 'lines');
  }

  function shown(box) {
    return Array.prototype.filter.call(box.querySelectorAll('.series'), function (g) {
      return !g.classList.contains('off');
    });
  }

  function initChart(box) {
    var state = { drive: '', setting: '', style: 'dots' };
    var rows = box.querySelectorAll('.buttons');
    rows.forEach(function (row) {
      var kind = row.getAttribute('data-filter');
      var buttons = row.querySelectorAll('button');
      buttons.forEach(function (b) {
        b.addEventListener('click', function () {
          buttons.forEach(function (o) { o.classList.remove('on'); });
          b.classList.add('on');
          state[kind] = b.getAttribute('data-value');
          apply(box, state);
        });
      });
    });
    var series = box.querySelectorAll('.series');
    var result = {
      id: box.id.replace(/^chart-/, ''),
      expected: +box.getAttribute('data-series'),
      drawn: 0,
      marks: 0
    };
    /* Self-check: every filter button shows exactly its series. */
    var checks = [];
    rows.forEach(function (row) {
      var kind = row.getAttribute('data-filter');
      if (kind === 'style') { return; }
      var buttons = row.querySelectorAll('button');
      Array.prototype.slice.call(buttons, 1).forEach(function (b) {
        b.click();
        var v = b.getAttribute('data-value');
        var want = Array.prototype.filter.call(series, function (g) {
          return g.getAttribute('data-' + kind) === v;
        }).length;
        checks.push({ button: v, expected: want, drawn: shown(box).length });
      });
      buttons[0].click();
    });
    if (checks.length) { result.buttons = checks; }
    series.forEach(function (g) {
      var n = +g.getAttribute('data-marks');
      if (n > 0) { result.drawn++; }
      result.marks += n;
    });
    result.layout = layout(box);
    return result;
  }

  /* Layout self-check for the browser test: text boxes of a chart that overlap, and
   * legend, axis or row labels that read the same, measured in the rendered DOM. */
  function layout(box) {
    var texts = Array.prototype.filter.call(box.querySelectorAll('svg text'), function (t) {
      return t.getClientRects().length > 0 && t.textContent.length > 0;
    });
    var rects = texts.map(function (t) { return t.getBoundingClientRect(); });
    var overlaps = [];
    for (var i = 0; i < rects.length; i++) {
      for (var j = i + 1; j < rects.length; j++) {
        var a = rects[i], b = rects[j];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
            a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
          overlaps.push([texts[i].textContent, texts[j].textContent]);
        }
      }
    }
    var duplicates = [];
    ['legend', 'x-tick', 'y-tick', 'category', 'axis-label'].forEach(function (cls) {
      var seen = {};
      box.querySelectorAll('svg text.' + cls).forEach(function (t) {
        if (t.getClientRects().length === 0) { return; }
        var k = t.textContent;
        if (seen[k]) { duplicates.push(cls + ': ' + k); }
        seen[k] = true;
      });
    });
    return { texts: texts.length, overlaps: overlaps, duplicates: duplicates };
  }

  function init() {
    var results = [];
    document.querySelectorAll('.chart').forEach(function (box) {
      try {
        results.push(initChart(box));
      } catch (e) {
        console.error('chart ' + box.id + ': ' + e);
      }
    });
    var v = document.getElementById('sb-verify');
    if (v) {
      v.textContent = JSON.stringify({ charts: results, errors: window.__sbErrors || [] });
    }
    return results;
  }

  window.StorbenchCharts = { init: init };
})();

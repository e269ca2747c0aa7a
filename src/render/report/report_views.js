/* report_views.js - draws the report's other views: the ranks of one job side by side
 * (issue 19) and the memory curves of training logs (issue 21).
 *
 * It is the page's script in place of report.js when the data are ranks or curves, so the
 * pages of one, two and N snapshots stay exactly what they were. Data (application/json
 * script elements): ranks: sd-ranks (snapdiff.series-ranks/1, what `series --json` writes
 * over the same files), sd-frag (snapdiff.frag/1), sd-stats, sd-report (mode "ranks": each
 * rank's peak, peak.h); curves: sd-curve (snapdiff.curve/1, what `curve --json` writes) and
 * sd-report (mode "curve": per series the bounded points of the curve and the floors the
 * slope is fitted to). This script lays out and draws; every figure is from those
 * documents. Errors go to #sd-errors and body[data-sd-errors]; #sd-status (hidden) has data-status "drawn".
 */
(function () {
  'use strict';

  var errors = [];
  function recordError(text) {
    errors.push(String(text));
    var box = document.getElementById('sd-errors');
    if (box) {
      box.textContent = 'Script errors (please report them):\n' + errors.join('\n');
      box.hidden = false;
    }
    document.body.setAttribute('data-sd-errors', String(errors.length));
  }
  window.addEventListener('error', function (e) {
    recordError('error: ' + e.message + ' (line ' + e.lineno + ':' + e.colno + ')');
  });

  var SVG_NS = 'http://www.w3.org/2000/svg';   /* a namespace name, never fetched */

  function data(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function make(e, attrs, children) {
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === null || attrs[k] === undefined) return;
      if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (Array.isArray(children) ? children : children === undefined || children === null ? [] : [children])
      .forEach(function (c) {
        if (c === null || c === undefined) return;
        e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
      });
    return e;
  }
  function el(tag, attrs, children) { return make(document.createElement(tag), attrs, children); }
  function sv(tag, attrs, children) { return make(document.createElementNS(SVG_NS, tag), attrs, children); }

  var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  function fmtBytes(n) {
    var neg = n < 0, v = Math.abs(n), u = 0;
    while (v >= 1024 && u < UNITS.length - 1) { v /= 1024; u++; }
    var s = u === 0 ? String(Math.round(v)) : v.toFixed(1);
    return (neg ? '-' : '') + s + ' ' + UNITS[u];
  }
  function fmtDelta(n) { return (n > 0 ? '+' : '') + fmtBytes(n); }
  function fmtCount(n) { return Number(n).toLocaleString('en-US'); }

  function section(main, id, title, note) {
    var s = el('section', {id: id}, [el('h2', {text: title})]);
    if (note) s.appendChild(el('p', {'class': 'note', text: note}));
    main.appendChild(s);
    return s;
  }
  function figureBoxes(items) {
    return el('div', {'class': 'figures'}, items.map(function (it) {
      return el('div', {'class': 'figure'}, [el('b', {text: it[1]}), el('span', {text: it[0]})]);
    }));
  }
  function table(id, heads, rows) {
    var t = el('table', {id: id}, [el('thead', null, el('tr', null, heads.map(function (h) {
      return el('th', {'class': h[1] ? 'num' : '', text: h[0]});
    })))]);
    var body = el('tbody');
    rows.forEach(function (r) {
      body.appendChild(el('tr', r.attrs || null, r.cells.map(function (c, i) {
        return el('td', {'class': heads[i][1] ? 'num' : (heads[i][2] || '')}, c);
      })));
    });
    t.appendChild(body);
    return t;
  }

  /* ---- ranks of one job, side by side ---- */

  function rankName(r) { return r.rank === null ? r.source : 'rank ' + r.rank; }

  /* The rank's peak: its devices' peaks (peak.h) added up, null unless every device has
   * one (a device without a trace has no peak, and a part is not the rank's peak). */
  function peakOf(devs) {
    devs = devs || [];
    if (!devs.length || devs.some(function (d) { return d.peak_bytes === null; })) return null;
    return devs.reduce(function (a, d) { return a + d.peak_bytes; }, 0);
  }
  function peakText(devs, peak) {
    if (peak !== null) return fmtBytes(peak);
    if (!(devs || []).some(function (d) { return d.peak_bytes !== null; })) return 'no trace';
    return devs.map(function (d) {
      return 'device ' + d.device + ' ' + (d.peak_bytes === null ? 'no trace' : fmtBytes(d.peak_bytes));
    }).join('; ');
  }

  function ranksChart(container, ranks, peaks, median) {
    var W = 1000, rowH = 22, L = 110, R = 20, H = ranks.length * rowH * 1.5 + 30, maxX = 1;
    ranks.forEach(function (r, i) {
      maxX = Math.max(maxX, r.allocated_bytes, r.reserved_bytes, peaks[i] === null ? 0 : peaks[i]);
    });
    function X(v) { return L + (W - L - R) * v / maxX; }
    var svg = sv('svg', {'class': 'ranks-chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H});
    ranks.forEach(function (r, i) {
      var y = 10 + i * rowH * 1.5;
      svg.appendChild(sv('text', {x: L - 6, y: y + 13, 'text-anchor': 'end', text: rankName(r)}));
      svg.appendChild(sv('rect', {x: L, y: y, width: Math.max(0, X(r.reserved_bytes) - L).toFixed(1), height: rowH - 4,
        fill: 'var(--free)', 'data-rank': String(r.rank), 'data-legend': 'reserved'},
        [sv('title', {text: 'reserved ' + fmtBytes(r.reserved_bytes)})]));
      svg.appendChild(sv('rect', {'class': 'allocated', x: L, y: y + 3, width: Math.max(0, X(r.allocated_bytes) - L).toFixed(1),
        height: rowH - 10, fill: 'var(--alloc)', 'data-rank': String(r.rank), 'data-bytes': String(r.allocated_bytes),
        'data-legend': 'allocated'},
        [sv('title', {text: 'allocated ' + fmtBytes(r.allocated_bytes)})]));
      if (peaks[i] !== null)
        svg.appendChild(sv('line', {'class': 'peak', x1: X(peaks[i]).toFixed(1), x2: X(peaks[i]).toFixed(1), y1: y - 2,
          y2: y + rowH - 2, stroke: 'var(--grow)', 'stroke-width': 3, 'data-legend': 'peak (with a trace)'},
          [sv('title', {text: 'peak ' + fmtBytes(peaks[i])})]));
    });
    svg.appendChild(sv('line', {'class': 'median', x1: X(median).toFixed(1), x2: X(median).toFixed(1), y1: 4, y2: H - 20,
      stroke: 'var(--accent)', 'stroke-dasharray': '4 3', 'data-legend': 'median allocated'}));
    /* The label runs away from the nearer edge, so that none of it falls outside the chart
     * (centred on a median near the right edge, "median allocated 33.0 GiB" was cut off). */
    var right = X(median) > W / 2;
    svg.appendChild(sv('text', {'class': 'median-label', x: (X(median) + (right ? -4 : 4)).toFixed(1), y: H - 6,
      'text-anchor': right ? 'end' : 'start', text: 'median allocated ' + fmtBytes(median)}));
    container.appendChild(svg);
    container.appendChild(legendFor(svg, [['allocated', 'var(--alloc)'], ['reserved', 'var(--free)'],
      ['peak (with a trace)', 'var(--grow)'], ['median allocated', 'var(--accent)']]));
  }

  /* A chart's key: one entry per kind of mark drawn; each mark carries data-legend, its
   * entry the same name (report.js has the same for its charts). */
  var legendCount = 0;
  function legendFor(svg, items) {
    var id = 'sd-legend-' + (++legendCount);
    svg.setAttribute('data-legend-id', id);
    return el('p', {'class': 'legend', id: id}, items.map(function (it) {
      return el('span', {'data-legend': it[0]}, [el('i', {style: 'background: ' + it[1]}), it[0]]);
    }));
  }

  function drawRanks(main, doc, frag, rep) {
    var ranks = doc.ranks, sp = doc.spread;
    var fragFiles = frag.files ? frag.files : [frag];
    var peaks = ranks.map(function (r, i) { return peakOf(rep.peaks[i]); });
    var far = sp.furthest === null ? null : ranks.filter(function (r) {
      return r.rank === sp.furthest || (r.rank === null && r.source === sp.furthest);
    })[0];
    main.appendChild(figureBoxes([
      ['ranks', String(ranks.length)],
      ['allocated, median', fmtBytes(sp.allocated_median)],
      ['allocated, min to max', fmtBytes(sp.allocated_min) + ' to ' + fmtBytes(sp.allocated_max)],
      ['reserved, min to max', fmtBytes(sp.reserved_min) + ' to ' + fmtBytes(sp.reserved_max)],
      ['furthest from the median', far ? rankName(far) + ' ' + fmtDelta(sp.furthest_delta) : 'none']]));
    var died = ranks.filter(function (r) { return r.oom; });
    /* What the ranks say first, as `series` puts it first: any OOM, then the outlier. */
    var top = el('div', {id: 'sd-ranks-top'});
    main.insertBefore(top, main.firstChild);
    if (died.length) {
      // the oom first (issue 26): how many ranks died, at which entry, on what request
      var line = 'Out of memory: ' + died.length + ' of ' + ranks.length + ' rank' + (ranks.length === 1 ? '' : 's') +
        ' recorded an oom entry';
      top.appendChild(el('div', {'class': 'oom-headline', id: 'sd-ranks-oom', 'data-line': line}, [
        el('p', {'class': 'headline', text: line}),
        el('ul', null, died.map(function (r) {
          var o = r.oom;
          return el('li', {'data-rank': String(r.rank), text: rankName(r) + ': the last at ' +
            'entry #' + o.entry + ' on device ' + o.device +
            ': request ' + fmtBytes(o.request_bytes) + ' with ' + fmtBytes(o.device_free_bytes) + ' free on the device (' +
            o.count + ' oom entr' + (o.count === 1 ? 'y' : 'ies') + ')'});
        }))]));
    }
    var s = section(main, 'sd-ranks-section', 'Ranks of one job, side by side',
      'The files are the ranks of one job (their names differ only by a rank number; --as-series draws them as ' +
      'a time series): per rank its allocated and reserved bytes over its devices, as snapdiff series shows them, ' +
      'and its peak (the most allocated at once in the trace; with several devices their peaks added up) where ' +
      'every device of the rank holds a trace.');
    var outlier = el('p', {id: 'sd-ranks-outlier', 'class': 'headline'});
    if (far) {
      outlier.appendChild(document.createTextNode('Furthest from the median: ' + rankName(far) + ', allocated ' +
        fmtBytes(far.allocated_bytes) + ' (' + fmtDelta(sp.furthest_delta) + ' vs the median ' +
        fmtBytes(sp.allocated_median) + '); the spread is ' + fmtBytes(sp.allocated_max - sp.allocated_min) + '.'));
    } else {
      outlier.textContent = 'No outlier: every rank allocates the same (' + fmtBytes(sp.allocated_median) + ').';
    }
    top.appendChild(outlier);
    ranksChart(s, ranks, peaks, sp.allocated_median);
    s.appendChild(table('sd-ranks-table', [['rank'], ['allocated', true], ['reserved', true], ['peak', true],
      ['vs median', true], ['fragmentation'], ['file', false, 'key']], ranks.map(function (r, i) {
      var ff = fragFiles[i];
      return {attrs: {'data-rank': String(r.rank), 'data-allocated': String(r.allocated_bytes),
        'data-peak': peaks[i] === null ? '' : String(peaks[i])},
        cells: [rankName(r), fmtBytes(r.allocated_bytes), fmtBytes(r.reserved_bytes),
          peakText(rep.peaks[i], peaks[i]), fmtDelta(r.allocated_vs_median),
          ff ? el('span', {'class': 'verdict ' + ff.total.verdict, text: ff.total.verdict}) : '', r.source]};
    })));
  }

  /* ---- training logs: the curve, its floor, the baseline, the projection ---- */

  function xUnit(sr) { return sr.x === 'second' ? 's' : sr.x === 'sample' ? 'sample' : 'step'; }

  function slopeOf(sr) {
    var e = sr.lower_edge;
    return !e ? null : e.slope_bytes_per_step !== undefined ? e.slope_bytes_per_step
      : e.slope_bytes_per_sample !== undefined ? e.slope_bytes_per_sample : e.slope_bytes_per_second;
  }

  /* One chart of a series. `whole`: the run, its figures filling the height; else the
   * projection: from 0 to the capacity, out to where the peak reaches it at the floor's
   * slope (from the last window's peak, as steps_to_capacity counts). */
  function curveChart(container, sr, pts, whole) {
    var W = 1000, H = whole ? 240 : 180, L = 70, R = 14, B = 24;
    var cap = sr.capacity_bytes, thr = cap ? cap * sr.threshold_fraction : null;
    var x0 = sr.first.x, x1 = sr.last.x, proj = null, slope = slopeOf(sr);
    if (!whole && cap && sr.steps_to_capacity !== null && sr.steps_to_capacity > 0 && slope)
      proj = {x: x1 + sr.steps_to_capacity, start: cap - slope * sr.steps_to_capacity};
    var xEnd = proj ? proj.x : x1, maxY = 1, minY = Infinity;
    pts.points.forEach(function (p) { maxY = Math.max(maxY, p[2]); minY = Math.min(minY, p[1]); });
    if (!whole || !isFinite(minY)) minY = 0;
    if (!whole && cap) maxY = Math.max(maxY, cap);
    var pad = (maxY - minY) * 0.04 || maxY * 0.04;
    maxY += pad;
    minY = Math.max(0, minY - pad);
    function X(x) { return L + (W - L - R) * (xEnd > x0 ? (x - x0) / (xEnd - x0) : 0.5); }
    function Y(v) { return 8 + (H - 8) * (1 - (v - minY) / (maxY - minY)); }
    var svg = sv('svg', {'class': whole ? 'curve-chart' : 'curve-projection', viewBox: '0 0 ' + W + ' ' + (H + B),
      width: W, height: H + B, 'data-points': String(pts.points.length), 'data-floors': String(pts.floors.length)});
    for (var k = 0; k <= 4; k++) {
      var v = minY + (maxY - minY) * k / 4;
      svg.appendChild(sv('line', {'class': 'grid', x1: L, x2: W - R, y1: Y(v).toFixed(1), y2: Y(v).toFixed(1)}));
      svg.appendChild(sv('text', {x: L - 4, y: (Y(v) + 4).toFixed(1), 'text-anchor': 'end', text: fmtBytes(Math.round(v))}));
    }
    /* the curve: each bucket from its lowest to its highest figure */
    var top = '', bottom = '';
    pts.points.forEach(function (p, i) {
      top += (i ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[2]).toFixed(1);
      bottom = 'L' + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1) + bottom;
    });
    var keys = [];
    function mark(name, colour) { keys.push([name, colour]); return name; }
    if (top) svg.appendChild(sv('path', {'class': 'curve', d: top + bottom + 'Z', fill: 'var(--alloc)', 'fill-opacity': 0.35,
      stroke: 'var(--alloc)', 'stroke-width': 1, 'data-legend': mark(sr.measure + ' (lowest to highest)', 'var(--alloc)')}, [sv('title', {text: sr.measure + ' per ' + xUnit(sr) + ' (lowest to highest)'})]));
    var fl = '';
    pts.floors.forEach(function (f, i) { fl += (i ? 'L' : 'M') + X(f[0]).toFixed(1) + ',' + Y(f[1]).toFixed(1); });
    if (fl) svg.appendChild(sv('path', {'class': 'floor', d: fl, fill: 'none', stroke: 'var(--grow)', 'stroke-width': 2,
      'data-legend': mark('lower edge (floor of each window)', 'var(--grow)')},
      [sv('title', {text: 'lower edge (floor of each window)'})]));
    if (sr.baseline && sr.baseline.x !== null) {
      svg.appendChild(sv('line', {'class': 'baseline', x1: X(sr.baseline.x).toFixed(1), x2: X(sr.baseline.x).toFixed(1), y1: 8, y2: H,
        stroke: 'var(--muted)', 'stroke-dasharray': '3 3', 'data-legend': mark('baseline after warm-up', 'var(--muted)')},
        [sv('title', {text: 'baseline after warm-up: ' + xUnit(sr) + ' ' +
        fmtCount(sr.baseline.x) + ', ' + fmtBytes(sr.baseline.bytes)})]));
      svg.appendChild(sv('circle', {'class': 'baseline-point', cx: X(sr.baseline.x).toFixed(1), cy: Y(sr.baseline.bytes).toFixed(1),
        r: 4, fill: 'var(--fg)', 'data-legend': 'baseline after warm-up'}, [sv('title', {text: 'baseline ' + fmtBytes(sr.baseline.bytes)})]));
    }
    [[cap, 'capacity', 'capacity'], [thr, 'threshold', 'threshold ' + Math.round(100 * sr.threshold_fraction) + '%']]
      .forEach(function (c) {
        if (!c[0] || c[0] > maxY) return;
        svg.appendChild(sv('line', {'class': c[1], x1: L, x2: W - R, y1: Y(c[0]).toFixed(1), y2: Y(c[0]).toFixed(1),
          stroke: c[1] === 'capacity' ? 'var(--grow)' : 'var(--pending)', 'stroke-dasharray': '6 3',
          'data-legend': mark(c[1], c[1] === 'capacity' ? 'var(--grow)' : 'var(--pending)')}));
        svg.appendChild(sv('text', {x: W - R, y: (Y(c[0]) - 3).toFixed(1), 'text-anchor': 'end', text: c[2] + ' ' + fmtBytes(c[0])}));
      });
    if (proj)
      svg.appendChild(sv('path', {'class': 'projection', d: 'M' + X(x1).toFixed(1) + ',' + Y(proj.start).toFixed(1) + 'L' +
        X(proj.x).toFixed(1) + ',' + Y(cap).toFixed(1), stroke: 'var(--grow)', 'stroke-dasharray': '2 3', fill: 'none',
        'stroke-width': 2, 'data-legend': mark('projection at the floor\'s slope', 'var(--grow)')}, [sv('title', {text: 'projected: the peak reaches the capacity in ' + fmtCount(sr.steps_to_capacity) +
        ' ' + xUnit(sr) + (sr.x === 'second' ? '' : 's')})]));
    svg.appendChild(sv('line', {'class': 'axis', x1: L, x2: W - R, y1: H, y2: H}));
    svg.appendChild(sv('text', {x: L, y: H + 16, text: xUnit(sr) + ' ' + fmtCount(x0)}));
    svg.appendChild(sv('text', {x: W - R, y: H + 16, 'text-anchor': 'end', text: xUnit(sr) + ' ' + fmtCount(xEnd) +
      (proj ? ' (projected)' : '')}));
    container.appendChild(svg);
    container.appendChild(legendFor(svg, keys));
  }

  function seriesName(sr) {
    var parts = [sr.source];
    if (sr.rank !== null && sr.rank !== undefined) parts.push('rank ' + sr.rank);
    if (sr.gpu !== null && sr.gpu !== undefined) parts.push('GPU ' + sr.gpu);
    return parts.join(', ');
  }

  function slopeText(sr) {
    var e = sr.lower_edge;
    if (!e) return 'no slope (too few samples after the baseline)';
    var per = xUnit(sr);
    var slope = slopeOf(sr);
    return 'floor ' + fmtDelta(slope) + '/' + per + ' (95% ' + fmtDelta(e.low) + ' to ' + fmtDelta(e.high) + '/' + per +
      ', confidence ' + (e.confidence * 100).toFixed(1) + '%)';
  }

  function drawCurves(main, doc, rep) {
    var series = doc.series;
    var growing = series.filter(function (sr) { return sr.verdict === 'growing'; }).length;
    main.appendChild(figureBoxes([['logs', String(rep.files.length)], ['series', String(series.length)],
      ['growing', String(growing)]]));
    if (doc.warnings && doc.warnings.length)
      main.appendChild(el('ul', {'class': 'warnings'}, doc.warnings.map(function (w) {
        return el('li', {text: typeof w === 'string' ? w : (w.message || JSON.stringify(w))});
      })));
    var s = section(main, 'sd-curve-section', 'Memory curves',
      'Per series, as snapdiff curve reads it: the curve (each point a bucket of samples, lowest to highest), its ' +
      'lower edge (the floor of each window after the baseline, which the slope is fitted to), the baseline after ' +
      'warm-up, and with a capacity the capacity, the threshold and the projection of the peak at the floor\'s slope.');
    series.forEach(function (sr, i) {
      var box = el('div', {'class': 'curve-series', 'data-series': String(i), 'data-verdict': String(sr.verdict)});
      box.appendChild(el('h3', {text: seriesName(sr)}));
      var facts = [el('span', {'class': 'verdict ' + (sr.verdict === 'growing' ? 'fragmented' : 'compact'),
        text: sr.verdict === null ? 'undecided' : sr.verdict}), ' ' + slopeText(sr) + '.'];
      if (sr.growth_pct_vs_baseline !== null && sr.growth_pct_vs_baseline !== undefined)
        facts.push(' Growth vs the baseline ' + sr.growth_pct_vs_baseline.toFixed(1) + '%.');
      if (sr.capacity_bytes) {
        facts.push(' Capacity ' + fmtBytes(sr.capacity_bytes) + ': ' + (sr.steps_to_capacity === null
          ? 'not reached at this slope' : fmtCount(sr.steps_to_capacity) + ' ' + xUnit(sr) + (sr.x === 'second' ? '' : 's') +
          ' to it') + (sr.steps_to_threshold === null ? '' : ', ' + fmtCount(sr.steps_to_threshold) + ' to ' +
          Math.round(100 * sr.threshold_fraction) + '%') + '.');
      }
      box.appendChild(el('p', {'class': 'curve-facts'}, facts));
      if (sr.why) box.appendChild(el('p', {'class': 'note', text: sr.why}));
      var pts = rep.series[i] || {points: [], floors: []};
      curveChart(box, sr, pts, true);
      if (sr.capacity_bytes) {
        box.appendChild(el('p', {'class': 'note', text: 'Against the capacity: the run from 0 to ' + fmtBytes(sr.capacity_bytes) +
          (sr.steps_to_capacity ? ', and the peak projected at the floor\'s slope until it reaches it.' :
            sr.steps_to_capacity === 0 ? '; the peak already reached it.' : '; not growing, so nothing is projected.')}));
        curveChart(box, sr, pts, false);
      }
      s.appendChild(box);
    });
    if (doc.ranks && doc.ranks.outliers && doc.ranks.outliers.length) {
      var r = section(main, 'sd-curve-ranks', 'Ranks');
      r.appendChild(el('ul', null, doc.ranks.outliers.map(function (o) {
        return el('li', {text: 'rank ' + o.rank + ': ' + (o.why || '')});
      })));
    }
  }

  function main() {
    var rep = data('sd-report'), m = document.getElementById('sd-main');
    var summary = document.getElementById('sd-summary');
    if (rep.mode === 'ranks') {
      summary.textContent = rep.files.length + ' ranks of one job';
      drawRanks(m, data('sd-ranks'), data('sd-frag'), rep);
    } else if (rep.mode === 'curve') {
      summary.textContent = rep.files.length === 1 ? rep.files[0] : rep.files.length + ' training logs';
      drawCurves(m, data('sd-curve'), rep);
    } else {
      throw new Error('report_views.js cannot draw mode ' + rep.mode);
    }
  }

  function run() {
    var status = document.getElementById('sd-status');
    try {
      main();
    } catch (e) {
      recordError('error: ' + (e && e.stack ? e.stack : e));
    }
    document.body.setAttribute('data-sd-errors', String(errors.length));
    status.setAttribute('data-status', errors.length ? 'failed' : 'drawn');
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();

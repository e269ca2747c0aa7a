/* report.js - draws snapdiff's HTML report from the JSON embedded in the page.
 *
 * Data (script elements of type application/json): sd-stats (snapdiff.stats/1), sd-frag
 * (snapdiff.frag/1), sd-diff (snapdiff.diff/1, two files only) and sd-report
 * (snapdiff.report/1: the aggregates the pictures need). This script only lays out and
 * draws; every figure comes from snapdiff's analyses. No network: nothing is fetched.
 *
 * Any script error is written into #sd-errors and counted in body[data-sd-errors], so
 * that a headless browser test can read it from the DOM; #sd-status (hidden: no reader
 * needs it) has data-status "drawn" when everything was drawn.
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
  window.addEventListener('unhandledrejection', function (e) {
    recordError('unhandled rejection: ' + (e.reason && e.reason.stack ? e.reason.stack : e.reason));
  });

  var SVG_NS = 'http://www.w3.org/2000/svg';   /* a namespace name, never fetched */
  var MAX_TABLE_ROWS = 500;

  /* ---- helpers ---- */

  function data(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }

  function sv(tag, attrs, children) {
    var e = document.createElementNS(SVG_NS, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }

  function setAttrs(e, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      if (attrs[k] === null || attrs[k] === undefined) return;
      if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
  }

  function append(e, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' || typeof c === 'number'
        ? document.createTextNode(String(c)) : c);
    });
  }

  var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  function fmtBytes(n) {
    var neg = n < 0, v = Math.abs(n), u = 0;
    while (v >= 1024 && u < UNITS.length - 1) { v /= 1024; u++; }
    var s = u === 0 ? String(v) : v.toFixed(1);
    return (neg ? '-' : '') + s + ' ' + UNITS[u];
  }
  function fmtDelta(n) { return (n > 0 ? '+' : '') + fmtBytes(n); }
  function fmtCount(n) { return Number(n).toLocaleString('en-US'); }
  function fmtPct(x) { return (Math.round(x * 10) / 10).toFixed(1) + '%'; }

  var tip = null;
  function showTip(ev, text) {
    tip = tip || document.getElementById('sd-tip');
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + 420 > window.innerWidth) x = Math.max(0, ev.clientX - 430);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { if (tip) tip.hidden = true; }
  function hover(node, textFn) {
    node.addEventListener('mousemove', function (ev) { showTip(ev, textFn(ev)); });
    node.addEventListener('mouseleave', hideTip);
  }

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

  /* A chart's key: one entry per kind of mark drawn. Each mark carries data-legend, its
   * entry the same name, so that a test can tell that no line is left unexplained. */
  var legendCount = 0;
  function legendFor(svg, items) {
    var id = 'sd-legend-' + (++legendCount);
    svg.setAttribute('data-legend-id', id);
    return el('p', {'class': 'legend', id: id}, items.map(function (it) {
      return el('span', {'data-legend': it[0]}, [el('i', {style: 'background: ' + it[1]}), it[0]]);
    }));
  }

  function shortName(path) {
    var i = path.lastIndexOf('/');
    return i >= 0 ? path.slice(i + 1) : path;
  }

  /* ---- a sortable table: click a header to sort by it, again to reverse ---- */

  /* columns: [{label, value(row), text(row)?, num, cls(row)?}]; rows: array of objects.
   * rowKey(row): the data-key attribute of the row (what tests and links look for). */
  function sortableTable(id, columns, rows, sortCol, rowKey, extra) {
    var table = el('table', {id: id, 'class': 'sortable'});
    var thead = el('thead'), tbody = el('tbody'), headRow = el('tr');
    var state = {col: sortCol, desc: true};
    columns.forEach(function (c, i) {
      var th = el('th', {'class': 'sortable' + (c.num ? ' num' : ''), text: c.label,
        'data-col': String(i)});
      th.addEventListener('click', function () {
        state.desc = state.col === i ? !state.desc : !!c.num;
        state.col = i;
        draw();
      });
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);
    table.appendChild(thead);
    table.appendChild(tbody);
    var note = el('p', {'class': 'note'});
    function draw() {
      var c = columns[state.col];
      var sorted = rows.slice().sort(function (a, b) {
        var va = c.value(a), vb = c.value(b);
        var r = va < vb ? -1 : va > vb ? 1 : 0;
        return state.desc ? -r : r;
      });
      Array.prototype.forEach.call(headRow.children, function (th, i) {
        th.classList.toggle('sorted-desc', i === state.col && state.desc);
        th.classList.toggle('sorted-asc', i === state.col && !state.desc);
      });
      tbody.textContent = '';
      sorted.slice(0, MAX_TABLE_ROWS).forEach(function (r) {
        var tr = el('tr', {'data-key': rowKey(r)});
        columns.forEach(function (col) {
          var td = el('td', {'class': (col.num ? 'num' : 'key') + (col.cls ? ' ' + col.cls(r) : '')});
          var content = col.text ? col.text(r) : String(col.value(r));
          append(td, content);
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      if (extra) tbody.appendChild(extra());
      note.textContent = rows.length > MAX_TABLE_ROWS
        ? 'Showing ' + MAX_TABLE_ROWS + ' of ' + fmtCount(rows.length) + ' rows (sorted by ' + c.label + ').'
        : '';
    }
    draw();
    return el('div', null, [table, note]);
  }

  function bar(value, max, cls) {
    var w = max > 0 && value !== 0 ? Math.max(1, Math.round(160 * Math.abs(value) / max)) : 0;
    return el('span', {'class': 'bar' + (cls ? ' ' + cls : ''), style: 'width:' + w + 'px'});
  }

  /* ---- the icicle: stacks as nested rectangles, outermost frame on top ---- */

  function buildTree(tree) {
    var root = {name: 'all', value: 0, children: {}, list: null};
    tree.stacks.forEach(function (st) {
      var bytes = st[0], node = root;
      root.value += bytes;
      st[1].forEach(function (fi) {
        var name = tree.frames[fi];
        var child = node.children[name];
        if (!child) { child = node.children[name] = {name: name, value: 0, children: {}, list: null}; }
        child.value += bytes;
        node = child;
      });
    });
    if (tree.other_bytes > 0) {
      root.children['(other stacks)'] = {name: '(other stacks: ' + fmtCount(tree.stacks_total - tree.stacks.length) +
        ' smaller ones)', value: tree.other_bytes, children: {}, list: null};
      root.value += tree.other_bytes;
    }
    (function sortKids(n) {
      n.list = Object.keys(n.children).map(function (k) { return n.children[k]; })
        .sort(function (a, b) { return b.value - a.value || (a.name < b.name ? -1 : 1); });
      n.list.forEach(sortKids);
    })(root);
    return root;
  }

  function icicle(container, tree, what) {
    var root = buildTree(tree);
    var W = 1200, ROW = 18, box = el('div', {'class': 'icicle'});
    container.appendChild(box);
    var crumbs = el('p', {'class': 'note'});
    container.insertBefore(crumbs, box);
    function depthOf(n) {
      var d = 0;
      n.list.forEach(function (c) { d = Math.max(d, depthOf(c)); });
      return d + 1;
    }
    function draw(top, path) {
      box.textContent = '';
      var depth = Math.min(depthOf(top), 120);
      var svg = sv('svg', {id: 'sd-icicle', viewBox: '0 0 ' + W + ' ' + (depth * ROW + 2),
        width: W, height: depth * ROW + 2, 'data-total': String(top.value)});
      var drawn = 0;
      function place(n, x, w, d) {
        if (w < 0.6 || d >= depth) return;
        var g = sv('g');
        var hue = n === top ? 210 : (n.name.charCodeAt(0) * 7 + n.name.length * 13) % 50;
        var rect = sv('rect', {'class': 'node', x: x.toFixed(2), y: d * ROW, width: Math.max(0.5, w - 0.5).toFixed(2),
          height: ROW - 1, fill: n === top ? '#9fb4d6' : 'hsl(' + (what === 'growth' ? hue : 200 + hue) + ',70%,' + (62 + (d % 3) * 5) + '%)'});
        var share = root.value > 0 ? 100 * n.value / root.value : 0;
        var label = (what === 'growth' ? '+' : '') + fmtBytes(n.value) + ' (' + fmtPct(share) + ')  ' + n.name;
        rect.appendChild(sv('title', {text: label}));
        g.appendChild(rect);
        if (w > 40) {
          var chars = Math.floor((w - 6) / 6.2);
          var t = n.name.length > chars ? n.name.slice(0, Math.max(0, chars - 1)) + '\u2026' : n.name;
          g.appendChild(sv('text', {x: (x + 3).toFixed(2), y: d * ROW + 12.5, text: t, 'pointer-events': 'none'}));
        }
        rect.addEventListener('click', function () {
          if (n !== top && n.list.length) draw(n, path.concat([n]));
          else if (n === top && path.length) draw(path.length > 1 ? path[path.length - 2] : root, path.slice(0, -1));
        });
        svg.appendChild(g);
        drawn++;
        var cx = x;
        n.list.forEach(function (c) {
          var cw = top.value > 0 ? w * c.value / n.value : 0;
          place(c, cx, cw, d + 1);
          cx += cw;
        });
      }
      place(top, 0, W, 0);
      svg.setAttribute('data-nodes', String(drawn));
      box.appendChild(svg);
      crumbs.textContent = (path.length ? 'Zoomed into: ' + path.map(function (p) { return p.name; }).join(' \u2192 ') +
        ' (click the top bar to zoom out). ' : 'Click a frame to zoom in. ') +
        'Width is ' + (what === 'growth' ? 'growth' : 'live bytes') + '; outermost frame on top.';
    }
    draw(root, []);
  }

  /* ---- fragmentation: segment map and free-block histogram ---- */

  function segmentMap(container, map) {
    if (!map || !map.rows.length) return;
    var W = 1000, LEFT = 190, ROW = 16, cols = 0;
    map.rows.forEach(function (r) { cols = Math.max(cols, r.pages.length); });
    var cell = (W - LEFT) / Math.max(cols, 1);
    var svg = sv('svg', {'class': 'segmap', 'data-rows': String(map.rows.length),
      viewBox: '0 0 ' + W + ' ' + (map.rows.length * ROW + 4), width: W, height: map.rows.length * ROW + 4});
    map.rows.forEach(function (r, i) {
      var y = i * ROW + 2;
      svg.appendChild(sv('text', {x: 0, y: y + 11, text: fmtBytes(r.total_size) + ' ' + r.pool + (r.expandable ? ' exp' : '')}));
      r.pages.forEach(function (pg, k) {
        var x = LEFT + k * cell, span = pg[3] || 1;
        var wa = cell * pg[0] / span, wp = cell * pg[1] / span, wf = cell * pg[2] / span;
        var g = sv('g');
        g.appendChild(sv('rect', {x: x.toFixed(2), y: y, width: Math.max(0, wa - 0.01).toFixed(2), height: ROW - 3, fill: 'var(--alloc)'}));
        g.appendChild(sv('rect', {x: (x + wa).toFixed(2), y: y, width: wp.toFixed(2), height: ROW - 3, fill: 'var(--pending)'}));
        g.appendChild(sv('rect', {x: (x + wa + wp).toFixed(2), y: y, width: Math.max(0, wf - 0.3).toFixed(2), height: ROW - 3, fill: 'var(--free)'}));
        g.appendChild(sv('title', {text: 'segment 0x' + r.address.toString(16) + ', page ' + k + ': ' +
          fmtBytes(pg[0]) + ' allocated, ' + fmtBytes(pg[1]) + ' pending free, ' + fmtBytes(pg[2]) + ' free'}));
        svg.appendChild(g);
      });
    });
    container.appendChild(el('p', {'class': 'note', text: 'The ' + map.rows.length + ' largest of ' +
      fmtCount(map.segments) + ' segments; one cell is ' + fmtBytes(map.page_bytes) + '. '}));
    container.appendChild(el('div', {'class': 'legend'}, [
      el('span', null, [el('i', {style: 'background:var(--alloc)'}), 'allocated']),
      el('span', null, [el('i', {style: 'background:var(--pending)'}), 'pending free']),
      el('span', null, [el('i', {style: 'background:var(--free)'}), 'free'])]));
    container.appendChild(svg);
  }

  function histogram(container, buckets) {
    var first = -1, last = -1, max = 0;
    buckets.forEach(function (b, i) {
      if (b.blocks > 0) { if (first < 0) first = i; last = i; }
      max = Math.max(max, b.bytes);
    });
    if (first < 0) {
      container.appendChild(el('p', {'class': 'note', text: 'No free blocks.'}));
      return;
    }
    var shown = buckets.slice(first, last + 1), W = 1000, H = 180, BOT = 40;
    var bw = W / shown.length;
    var svg = sv('svg', {'class': 'histogram', 'data-buckets': String(shown.length),
      viewBox: '0 0 ' + W + ' ' + (H + BOT), width: W, height: H + BOT});
    shown.forEach(function (b, i) {
      var h = max > 0 ? (H - 16) * b.bytes / max : 0, x = i * bw;
      var g = sv('g');
      g.appendChild(sv('rect', {x: (x + 2).toFixed(2), y: (H - h).toFixed(2), width: (bw - 4).toFixed(2), height: h.toFixed(2), fill: 'var(--free)', stroke: '#8f99ab'}));
      if (b.blocks) g.appendChild(sv('text', {x: (x + bw / 2).toFixed(2), y: (H - h - 3).toFixed(2), 'text-anchor': 'middle', text: fmtCount(b.blocks)}));
      var lab = b.max_bytes === null ? '\u2265 ' + fmtBytes(b.min_bytes) : b.min_bytes === 0 ? '< ' + fmtBytes(b.max_bytes) : fmtBytes(b.min_bytes);
      g.appendChild(sv('text', {x: (x + bw / 2).toFixed(2), y: H + 14, 'text-anchor': 'middle', text: lab}));
      g.appendChild(sv('title', {text: fmtCount(b.blocks) + ' free blocks, ' + fmtBytes(b.bytes) + ', sizes ' + lab +
        (b.max_bytes === null ? '' : ' to ' + fmtBytes(b.max_bytes))}));
      svg.appendChild(g);
    });
    svg.appendChild(sv('line', {'class': 'axis', x1: 0, x2: W, y1: H, y2: H}));
    container.appendChild(el('p', {'class': 'note', text: 'Free bytes by block size (block counts above the bars).'}));
    container.appendChild(svg);
  }

  function fragDevice(container, dev, map, ooms, oomSites) {
    var title = dev.device === undefined ? 'All devices' : 'Device ' + dev.device;
    var s = el('div', {'class': 'frag-device', 'data-device': dev.device === undefined ? 'total' : String(dev.device)});
    s.appendChild(el('h3', null, [title + ': ', el('span', {'class': 'verdict ' + dev.verdict, text: dev.verdict})]));
    s.appendChild(el('p', {text: dev.explanation}));
    if (dev.advice && dev.advice.length)
      s.appendChild(el('ul', {'class': 'advice'}, dev.advice.map(function (a) { return el('li', {text: a}); })));
    s.appendChild(figureBoxes([
      ['reserved', fmtBytes(dev.reserved_bytes)], ['allocated', fmtBytes(dev.allocated_bytes)],
      ['gap (' + fmtPct(dev.gap_pct) + ' of reserved)', fmtBytes(dev.gap_bytes)],
      ['free in cached blocks', fmtBytes(dev.external_free_bytes)],
      ['largest free block', fmtBytes(dev.largest_free_bytes)],
      ['fragmentation index', Number(dev.fragmentation_index).toFixed(2)],
      ['stranded (empty_cache keeps it)', fmtBytes(dev.stranded_free_bytes)]]));
    s.appendChild(el('p', {'class': 'empty-cache', text: 'empty_cache() would return ' +
      fmtBytes(dev.empty_cache_releasable_bytes) + ' of ' + fmtBytes(dev.reserved_bytes) + ' reserved.'}));
    if (map) segmentMap(s, map);
    if (dev.free_histogram) histogram(s, dev.free_histogram);
    if (ooms && ooms.length) {
      s.appendChild(el('h3', {text: 'Out-of-memory events (' + ooms.length + ')'}));
      var t = el('table', {'class': 'ooms'});
      t.appendChild(el('tr', null, ['entry', 'requested', 'device free', 'free (usable)', 'largest free', 'cause', 'line']
        .map(function (h, i) { return el('th', {'class': i < 5 ? 'num' : '', text: h}); })));
      ooms.forEach(function (o) {
        var site = oomSites ? oomSites[String(o.trace_index)] : null;
        t.appendChild(el('tr', {'data-trace-index': String(o.trace_index)}, [
          el('td', {'class': 'num', text: String(o.trace_index)}),
          el('td', {'class': 'num', text: fmtBytes(o.request_bytes)}),
          el('td', {'class': 'num', text: fmtBytes(o.device_free_bytes)}),
          el('td', {'class': 'num', text: fmtBytes(o.free_bytes)}),
          el('td', {'class': 'num', text: fmtBytes(o.largest_free_bytes)}),
          el('td', {text: o.cause + (o.note ? ' (' + o.note + ')' : '')}),
          el('td', {'class': 'key', text: site || '(no Python frame recorded)'})]));
      });
      s.appendChild(t);
    }
    container.appendChild(s);
  }

  /* ---- the trace timeline: live bytes over trace entries, peak marked ---- */

  function timeline(container, tl) {
    var W = 1000, H = 220, L = 70, B = 24, pts = tl.points;
    var maxY = 1, n = tl.entries || 1;
    pts.forEach(function (p) { maxY = Math.max(maxY, p[2]); });
    function X(i) { return L + (W - L - 10) * i / n; }
    function Y(v) { return 8 + (H - 8) * (1 - v / maxY); }
    var svg = sv('svg', {'class': 'timeline', 'data-device': String(tl.device), 'data-points': String(pts.length),
      viewBox: '0 0 ' + W + ' ' + (H + B), width: W, height: H + B});
    for (var k = 0; k <= 4; k++) {
      var v = maxY * k / 4;
      svg.appendChild(sv('line', {'class': 'grid', x1: L, x2: W - 10, y1: Y(v).toFixed(1), y2: Y(v).toFixed(1)}));
      svg.appendChild(sv('text', {x: L - 4, y: (Y(v) + 4).toFixed(1), 'text-anchor': 'end', text: fmtBytes(Math.round(v))}));
    }
    var hi = '', lo = '';
    pts.forEach(function (p, i) {
      hi += (i ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[2]).toFixed(1);
      lo = 'L' + X(p[0]).toFixed(1) + ',' + Y(p[3]).toFixed(1) + lo;
    });
    svg.appendChild(sv('path', {d: hi + lo + 'Z', fill: 'rgba(47,111,179,0.25)', stroke: 'none',
      'data-legend': 'lowest to highest of each point'}));
    svg.appendChild(sv('path', {'class': 'line', d: hi, stroke: 'var(--alloc)', 'data-legend': 'live bytes (highest of each point)'}));
    var pk = tl.peak;
    var peakSite = pk.site === null ? '' : tl.sites[pk.site];
    // " in the backward of step 2": the peak's phase and step, as the CLI says them
    var peakPhase = pk.phase ? ' in the ' + pk.phase + (pk.step ? ' of step ' + pk.step : '') : '';
    svg.appendChild(sv('circle', {'class': 'peak', cx: X(pk.entry).toFixed(1), cy: Y(pk.bytes).toFixed(1), r: 4, 'data-legend': 'peak'},
      [sv('title', {text: 'peak ' + fmtBytes(pk.bytes) + ' at entry ' + pk.entry + peakPhase + (peakSite ? '\n' + peakSite : '')})]));
    svg.appendChild(sv('text', {x: Math.min(X(pk.entry) + 6, W - 200).toFixed(1), y: Math.max(Y(pk.bytes) + 4, 14).toFixed(1),
      text: 'peak ' + fmtBytes(pk.bytes) + peakPhase}));
    svg.appendChild(sv('line', {'class': 'axis', x1: L, x2: W - 10, y1: H, y2: H}));
    svg.appendChild(sv('text', {x: L, y: H + 16, text: 'trace entry 0'}));
    svg.appendChild(sv('text', {x: W - 10, y: H + 16, 'text-anchor': 'end', text: fmtCount(n) + ' entries'}));
    var cursor = sv('line', {'class': 'axis', x1: 0, x2: 0, y1: 8, y2: H, visibility: 'hidden'});
    svg.appendChild(cursor);
    svg.addEventListener('mousemove', function (ev) {
      var r = svg.getBoundingClientRect();
      var x = (ev.clientX - r.left) * W / r.width, best = 0;
      for (var i = 0; i < pts.length; i++) if (Math.abs(X(pts[i][0]) - x) < Math.abs(X(pts[best][0]) - x)) best = i;
      var p = pts[best];
      cursor.setAttribute('x1', X(p[0]).toFixed(1));
      cursor.setAttribute('x2', X(p[0]).toFixed(1));
      cursor.setAttribute('visibility', 'visible');
      showTip(ev, 'entries ' + fmtCount(p[0]) + (tl.entries_per_point > 1 ? '-' + fmtCount(Math.min(p[0] + tl.entries_per_point, n) - 1) : '') +
        '\nlive ' + fmtBytes(p[3]) + ' to ' + fmtBytes(p[2]) +
        (p[4] === null ? '' : '\nhighest after an allocation at\n' + tl.sites[p[4]]));
    });
    svg.addEventListener('mouseleave', function () { cursor.setAttribute('visibility', 'hidden'); hideTip(); });
    container.appendChild(el('h3', {text: 'Device ' + tl.device}));
    container.appendChild(el('p', {'class': 'note', text: 'Live bytes after each of ' + fmtCount(n) +
      ' trace entries, counting what was live before recording began (' + fmtBytes(tl.start_bytes) +
      '; the trace ends at ' + fmtBytes(tl.end_bytes) + ')' + (tl.entries_per_point > 1 ? '; each point is the highest and lowest of ' +
      fmtCount(tl.entries_per_point) + ' entries' : '') + '. Peak ' + fmtBytes(pk.bytes) + ' at entry ' +
      fmtCount(pk.entry) + peakPhase + (peakSite ? ', after an allocation at ' + peakSite : '') + '. Hover for the allocation site.',
      id: 'sd-timeline-note-' + tl.device, 'data-peak-phase': peakPhase.trim()}));
    container.appendChild(svg);
    container.appendChild(legendFor(svg, [['live bytes (highest of each point)', 'var(--alloc)'],
      ['lowest to highest of each point', 'rgba(47,111,179,0.25)'], ['peak', 'var(--grow)']]));
  }

  /* ---- N files: per-group lines ---- */

  var SERIES_GREW = 'grew at every step and ended higher', SERIES_OTHER = 'other groups';
  function seriesChart(container, series, files) {
    var W = 1000, H = 300, L = 80, B = 40, ns = files.length, maxY = 1;
    series.groups.forEach(function (g) { g.bytes.forEach(function (b) { maxY = Math.max(maxY, b); }); });
    function X(i) { return L + (W - L - 30) * (ns > 1 ? i / (ns - 1) : 0.5); }
    function Y(v) { return 10 + (H - 10) * (1 - v / maxY); }
    var svg = sv('svg', {id: 'sd-series', 'data-lines': String(series.groups.length),
      viewBox: '0 0 ' + W + ' ' + (H + B), width: W, height: H + B});
    for (var k = 0; k <= 4; k++) {
      var v = maxY * k / 4;
      svg.appendChild(sv('line', {'class': 'grid', x1: L, x2: W - 30, y1: Y(v).toFixed(1), y2: Y(v).toFixed(1)}));
      svg.appendChild(sv('text', {x: L - 4, y: (Y(v) + 4).toFixed(1), 'text-anchor': 'end', text: fmtBytes(Math.round(v))}));
    }
    files.forEach(function (f, i) {
      svg.appendChild(sv('text', {x: X(i).toFixed(1), y: H + 16, 'text-anchor': 'middle', text: String(i + 1)},
        [sv('title', {text: f})]));
    });
    var ordered = series.groups.slice().sort(function (a, b) { return (a.growing ? 1 : 0) - (b.growing ? 1 : 0); });
    ordered.forEach(function (g) {
      var d = g.bytes.map(function (b, i) { return (i ? 'L' : 'M') + X(i).toFixed(1) + ',' + Y(b).toFixed(1); }).join('');
      var path = sv('path', {'class': 'line ' + (g.growing ? 'growing' : 'other'), d: d, 'data-key': g.key,
        'data-legend': g.growing ? SERIES_GREW : SERIES_OTHER},
        [sv('title', {text: g.key + '\n' + g.bytes.map(fmtBytes).join(' \u2192 ')})]);
      svg.appendChild(path);
    });
    container.appendChild(svg);
    container.appendChild(legendFor(svg, [[SERIES_GREW, 'var(--grow)'], [SERIES_OTHER, '#9aa3b5']]));
  }

  /* ---- the pages ---- */

  function statsFiles(stats) { return stats.files ? stats.files : [stats]; }
  function fragFiles(frag) { return frag.files ? frag.files : [frag]; }

  function drawSingle(main, stats, frag, rep) {
    var st = statsFiles(stats)[0], total = st.total;
    main.appendChild(figureBoxes([
      ['allocated', fmtBytes(total.allocated_bytes)], ['reserved', fmtBytes(total.reserved_bytes)],
      ['devices', String(st.devices.length)], ['blocks', fmtCount(total.blocks)],
      ['trace entries', fmtCount(total.trace_entries)]]));

    var sites = rep.sites;
    var s1 = section(main, 'sd-sites', 'Live memory by ' + rep.group_by,
      fmtCount(sites.groups) + ' groups hold ' + fmtBytes(sites.total_bytes) + ' in ' + fmtCount(sites.total_blocks) +
      ' live blocks' + (sites.groups > sites.rows.length ? '; the ' + sites.rows.length + ' largest are listed' : '') + '.');
    var max = sites.rows.length ? sites.rows[0].bytes : 0;
    s1.appendChild(sortableTable('sd-sites-table', [
      {label: 'bytes', num: true, value: function (r) { return r.bytes; }, text: function (r) { return fmtBytes(r.bytes); }},
      {label: 'share', num: false, value: function (r) { return r.bytes; }, cls: function () { return 'nowrap'; },
        text: function (r) { return [bar(r.bytes, max), ' ' + fmtPct(sites.total_bytes ? 100 * r.bytes / sites.total_bytes : 0)]; }},
      {label: 'blocks', num: true, value: function (r) { return r.blocks; }, text: function (r) { return fmtCount(r.blocks); }},
      {label: 'requested', num: true, value: function (r) { return r.requested; }, text: function (r) { return fmtBytes(r.requested); }},
      {label: rep.group_by, value: function (r) { return r.key; }}],
      sites.rows, 0, function (r) { return r.key; },
      sites.other_bytes > 0 ? function () {
        return el('tr', {'class': 'other'}, [el('td', {'class': 'num', text: fmtBytes(sites.other_bytes)}), el('td'),
          el('td', {'class': 'num', text: fmtCount(sites.other_blocks)}), el('td'),
          el('td', {'class': 'muted', text: '(' + fmtCount(sites.groups - sites.rows.length) + ' smaller groups)'})]);
      } : null));

    var s2 = section(main, 'sd-tree', 'Live memory by stack (icicle)');
    if (rep.tree.stacks.length) icicle(s2, rep.tree, 'live');
    else s2.appendChild(el('p', {'class': 'note', text: 'No live blocks.'}));

    drawFrag(main, fragFiles(frag)[0], rep, 0);
    drawTimelines(main, rep, 0);
  }

  function drawFrag(main, ff, rep, fileIndex) {
    var s = section(main, 'sd-frag-section', 'Fragmentation' + (rep.files.length > 1 ? ': ' + shortName(ff.file) : ''));
    var maps = rep.segment_maps[fileIndex] || [];
    var oomSites = (rep.oom_sites || [])[fileIndex] || [];
    if (ff.devices.length > 1) {
      s.appendChild(el('p', null, [el('span', {'class': 'verdict ' + ff.total.verdict, text: ff.total.verdict}), ' ' + ff.total.explanation]));
    }
    ff.devices.forEach(function (dev, i) {
      fragDevice(s, dev, maps[i], dev.oom_events, oomSites[i]);
    });
  }

  /* ---- reserved over time: recorded, and replayed under each config (snapdiff replay) ---- */

  var RESERVED_COLOURS = ['var(--alloc)', '#b5651d', '#2e8b57', '#8a2be2', '#c71585'];

  function reservedChart(container, rt) {
    var W = 1000, H = 220, L = 70, B = 24, n = rt.entries || 1, maxY = 1;
    var lines = [{name: 'recorded (trace)', points: rt.recorded, peak: rt.recorded_peak_reserved_bytes}];
    /* An untrusted replay is not drawn beside the recording as if it were a prediction. */
    if (rt.trusted !== false) rt.configs.forEach(function (c) {
      lines.push({name: c.alloc_conf === 'recorded' ? 'replayed, recorded settings' : 'replayed, ' + c.alloc_conf,
        points: c.points, peak: c.peak_reserved_bytes});
    });
    lines.forEach(function (ln) { ln.points.forEach(function (p) { maxY = Math.max(maxY, p[1]); }); });
    function X(i) { return L + (W - L - 10) * i / n; }
    function Y(v) { return 8 + (H - 8) * (1 - v / maxY); }
    var svg = sv('svg', {'class': 'reserved-timeline', 'data-device': String(rt.device),
      viewBox: '0 0 ' + W + ' ' + (H + B), width: W, height: H + B});
    for (var k = 0; k <= 4; k++) {
      var v = maxY * k / 4;
      svg.appendChild(sv('line', {'class': 'grid', x1: L, x2: W - 10, y1: Y(v).toFixed(1), y2: Y(v).toFixed(1)}));
      svg.appendChild(sv('text', {x: L - 4, y: (Y(v) + 4).toFixed(1), 'text-anchor': 'end', text: fmtBytes(Math.round(v))}));
    }
    lines.forEach(function (ln, i) {
      var d = '';
      ln.points.forEach(function (p, j) { d += (j ? 'L' : 'M') + X(p[0]).toFixed(1) + ',' + Y(p[1]).toFixed(1); });
      if (d) svg.appendChild(sv('path', {'class': 'line', d: d, fill: 'none', stroke: RESERVED_COLOURS[i % RESERVED_COLOURS.length],
        'data-config': ln.name, 'data-legend': ln.name}, [sv('title', {text: ln.name + ': peak reserved ' + fmtBytes(ln.peak)})]));
    });
    svg.appendChild(sv('line', {'class': 'axis', x1: L, x2: W - 10, y1: H, y2: H}));
    svg.appendChild(sv('text', {x: L, y: H + 16, text: 'trace entry 0'}));
    svg.appendChild(sv('text', {x: W - 10, y: H + 16, 'text-anchor': 'end', text: fmtCount(n) + ' entries'}));
    container.appendChild(el('h3', {text: 'Device ' + rt.device + ': reserved over time'}));
    if (rt.trusted === false)
      container.appendChild(el('p', {'class': 'note', text: 'The replay is not trusted here (' + rt.untrusted_why +
        '): only the recording is drawn; snapdiff replay FILE shows the model\'s figures and where it departs.'}));
    container.appendChild(el('p', {'class': 'note', text: 'Reserved bytes over the trace as recorded and as snapdiff replay ' +
      'models the allocator under each setting (each point the highest of its bucket). Peak reserved: ' +
      lines.map(function (ln) { return ln.name + ' ' + fmtBytes(ln.peak); }).join('; ') +
      '. The replay assumes the program makes the same requests in the same order; memory outside the caching ' +
      'allocator is not modelled.'}));
    container.appendChild(svg);
    container.appendChild(legendFor(svg, lines.map(function (ln, i) {
      return [ln.name, RESERVED_COLOURS[i % RESERVED_COLOURS.length]];
    })));
  }

  function drawTimelines(main, rep, fileIndex) {
    var tls = rep.timelines[fileIndex] || [];
    if (!tls.length) return;
    var s = section(main, 'sd-timeline-section', 'Trace timeline');
    tls.forEach(function (tl) { timeline(s, tl); });
    (rep.reserved_timelines || []).forEach(function (rt) { reservedChart(s, rt); });
  }

  /* "activations", "optimizer state", "backward temporaries": as the diff's text says it. */
  function categoryWords(c, phase) {
    return (c === 'temporaries' ? phase + ' ' : '') + c.replace(/_/g, ' ');
  }
  function leadBytes(dev, c, side) {
    var x = (dev.categories || []).filter(function (k) { return k.category === c; })[0];
    return x ? x[side + '_bytes'] : 0;
  }

  /* The peaks compared as the CLI diff compares them (diff JSON's peak): the line that says
   * when they fall in different phases, then the peak of each phase by category. */
  function drawPeakPhases(main, diff) {
    var devs = diff.peak && diff.peak.devices ? diff.peak.devices : [];
    devs.forEach(function (dev) {
      if (!dev.phases_differ) return;
      var line = 'OLD peaks in the ' + dev.old.phase + ' (' + categoryWords(dev.old_lead, dev.old.phase) + ' ' +
        fmtBytes(leadBytes(dev, dev.old_lead, 'old')) + '), NEW in the ' + dev.new.phase + ' (' +
        categoryWords(dev.new_lead, dev.new.phase) + ' ' + fmtBytes(leadBytes(dev, dev.new_lead, 'new')) + ')' +
        (devs.length > 1 ? ' on device ' + dev.device_new : '');
      main.appendChild(el('p', {'class': 'headline', id: 'sd-phase-line-' + dev.device_new, 'data-line': line, text: line}));
    });
    devs = devs.filter(function (dev) { return dev.phases && dev.phases.length; });
    if (!devs.length) return;
    var s = section(main, 'sd-peak-phases', 'The peak of each phase, by category',
      'The most live bytes after an allocation of each phase of a training step, in OLD and in NEW, and what was live then.');
    devs.forEach(function (dev) {
      var t = el('table', {id: 'sd-peak-phases-table-' + dev.device_new, 'class': 'phases'});
      t.appendChild(el('tr', null, ['phase / category', 'old', 'new', 'delta'].map(function (h, i) {
        return el('th', {'class': i ? 'num' : '', text: h});
      })));
      dev.phases.forEach(function (p) {
        var known = p.old_peak_bytes !== null && p.new_peak_bytes !== null;
        var d = known ? p.new_peak_bytes - p.old_peak_bytes : null;
        t.appendChild(el('tr', {'data-key': p.phase, 'class': 'phase' + (dev.old.phase === p.phase || dev.new.phase === p.phase ? ' at-peak' : '')}, [
          el('td', {'class': 'key', text: p.phase}),
          el('td', {'class': 'num', text: p.old_peak_bytes === null ? '-' : fmtBytes(p.old_peak_bytes)}),
          el('td', {'class': 'num', text: p.new_peak_bytes === null ? '-' : fmtBytes(p.new_peak_bytes)}),
          el('td', {'class': 'num' + (d > 0 ? ' grow' : d < 0 ? ' shrink' : ''), text: d === null ? '' : fmtDelta(d)})]));
        p.categories.forEach(function (c) {
          t.appendChild(el('tr', {'data-key': p.phase + '/' + c.category}, [
            el('td', {'class': 'key indent', text: c.category}),
            el('td', {'class': 'num', text: p.old_peak_bytes === null ? '-' : fmtBytes(c.old_bytes)}),
            el('td', {'class': 'num', text: p.new_peak_bytes === null ? '-' : fmtBytes(c.new_bytes)}),
            el('td', {'class': 'num' + (known && c.delta_bytes > 0 ? ' grow' : known && c.delta_bytes < 0 ? ' shrink' : ''),
              text: known ? fmtDelta(c.delta_bytes) : ''})]));
        });
      });
      s.appendChild(t);
    });
  }

  /* "at the peak" as the CLI diff prints it (diff JSON's peak): each side's peak with its
   * entry and phase, then what was live at the two peaks by group, the largest change first
   * (the CLI's 20 rows), the rest summed, and whether the groups add up to the peak delta. */
  var PEAK_ROWS = 20;
  function peakLine(dev, n) {
    var where = '';
    if (dev.device_old !== dev.device_new) where = ' (OLD device ' + dev.device_old + ', NEW device ' + dev.device_new + ')';
    else if (n > 1) where = ' (device ' + dev.device_new + ')';
    function side(name, p) {
      return name + ' ' + fmtBytes(p.bytes) + ' at entry #' + p.entry + (p.phase ? ' (' + p.phase + ')' : '');
    }
    return 'at the peak' + where + ': ' + side('OLD', dev.old) + ', ' + side('NEW', dev.new) + ' (' + fmtDelta(dev.delta_bytes) + ')';
  }

  function drawPeakCompared(main, diff) {
    var devs = diff.peak && diff.peak.devices ? diff.peak.devices : [];
    if (!devs.length) return;
    var s = section(main, 'sd-peak', 'At the peak',
      'Each file at its peak (the most allocated at once in its trace), and what was live then by ' + diff.group_by +
      ', the largest change first: what `snapdiff diff` prints under "at the peak".');
    devs.forEach(function (dev) {
      var line = peakLine(dev, devs.length);
      s.appendChild(el('p', {'class': 'headline', id: 'sd-peak-line-' + dev.device_new, 'data-line': line, text: line}));
      var changed = dev.groups.filter(function (g) { return g.delta_bytes !== 0; });
      var sum = dev.groups.reduce(function (a, g) { return a + g.delta_bytes; }, 0);
      var t = el('table', {id: 'sd-peak-table-' + dev.device_new});
      t.appendChild(el('tr', null, ['old', 'new', 'delta', diff.group_by].map(function (h, i) {
        return el('th', {'class': i < 3 ? 'num' : '', text: h});
      })));
      changed.slice(0, PEAK_ROWS).forEach(function (g) {
        t.appendChild(el('tr', {'data-key': g.key}, [
          el('td', {'class': 'num', text: fmtBytes(g.old_bytes)}),
          el('td', {'class': 'num', text: fmtBytes(g.new_bytes)}),
          el('td', {'class': 'num ' + (g.delta_bytes > 0 ? 'grow' : 'shrink'), text: fmtDelta(g.delta_bytes)}),
          el('td', {'class': 'key', text: g.label || g.key})]));   /* as the CLI names it */
      });
      if (changed.length > PEAK_ROWS) {
        var rest = changed.slice(PEAK_ROWS).reduce(function (a, g) { return a + g.delta_bytes; }, 0);
        var more = changed.length - PEAK_ROWS;
        t.appendChild(el('tr', {'class': 'other'}, [el('td'), el('td'), el('td', {'class': 'num', text: fmtDelta(rest)}),
          el('td', {text: '... ' + fmtCount(more) + ' more changed group' + (more === 1 ? '' : 's')})]));
      }
      s.appendChild(t);
      s.appendChild(el('p', {'class': 'note', text: sum === dev.delta_bytes
        ? '(the groups add up to the peak delta, ' + fmtDelta(dev.delta_bytes) + ')'
        : '(focus: the groups hold ' + fmtDelta(sum) + ' of the peak delta ' + fmtDelta(dev.delta_bytes) + ')'}));
    });
  }

  /* The oom first (issue 26): each file's last oom event, as frag analysed it. */
  function drawOomHeadline(main, frag, rep) {
    fragFiles(frag).forEach(function (ff, fi) {
      (ff.devices || []).forEach(function (dev) {
        var ooms = dev.oom_events || [];
        if (!ooms.length) return;
        var o = ooms[ooms.length - 1];
        var total = o.device_free_bytes + o.wholly_free_bytes + o.stranded_free_bytes;
        var line = (rep.files.length > 1 ? shortName(ff.file) + ': ' : '') + 'out of memory on device ' + dev.device +
          (ooms.length > 1 ? ' (' + ooms.length + ' oom entries, the last)' : '') + ': request ' + fmtBytes(o.request_bytes) +
          (o.request_bytes > total ? ' > ' : ' <= ') + 'device free ' + fmtBytes(o.device_free_bytes) + ' + wholly free ' +
          fmtBytes(o.wholly_free_bytes) + ' + stranded ' + fmtBytes(o.stranded_free_bytes) + ' = ' + fmtBytes(total) +
          ': ' + o.cause + (o.shortfall_bytes ? '; without the stranded space ' + fmtBytes(o.shortfall_bytes) +
          ' would have had to be freed' : '');
        var levers = (o.levers || []).map(function (l) {
          return fmtBytes(l.bytes) + ' ' + l.category + (l.label ? ' at ' + l.label : '') + ' \u2192 ' + l.lever;
        });
        main.appendChild(el('div', {'class': 'oom-headline', id: 'sd-oom-' + fi + '-' + dev.device, 'data-line': line}, [
          el('p', {'class': 'headline', text: line}),
          levers.length ? el('ul', null, levers.map(function (l) { return el('li', {text: 'lever: ' + l}); })) : null]));
      });
    });
  }

  function drawDiff(main, diff, frag, rep) {
    var t = diff.totals;
    main.appendChild(figureBoxes([
      ['allocated, old', fmtBytes(diff.old.allocated)], ['allocated, new', fmtBytes(diff.new.allocated)],
      ['allocated growth', fmtDelta(t.allocated_delta)], ['reserved growth', fmtDelta(t.reserved_delta)],
      ['blocks new / freed', fmtCount(t.blocks_new) + ' / ' + fmtCount(t.blocks_freed)]].concat(
      // the CLI's "peak" row: with one pair of devices, the growth of the peak
      diff.peak && diff.peak.devices && diff.peak.devices.length === 1
        ? [['peak growth', fmtDelta(diff.peak.devices[0].delta_bytes)]] : [])));
    if (diff.warnings && diff.warnings.length)
      main.appendChild(el('ul', {'class': 'warnings'}, diff.warnings.map(function (w) {
        return el('li', {text: typeof w === 'string' ? w : (w.message || w.text || JSON.stringify(w))});
      })));
    drawPeakPhases(main, diff);
    drawPeakCompared(main, diff);
    var groups = diff.groups || [];
    // grew as the diff text counts it (sd_diff_group_changed): a rounding-only change
    // (block bytes moved, requested bytes did not) is neither growth nor shrinkage
    function roundingOnly(g) { return g.delta_bytes !== 0 && g.delta_requested_bytes === 0; }
    var growing = groups.filter(function (g) {
      return g.delta_bytes > 0 && !roundingOnly(g);
    });
    var s1 = section(main, 'sd-growth', 'Growth by ' + diff.group_by,
      fmtCount(growing.length) + ' of ' + fmtCount(groups.length) + ' groups grew. Click a header to sort.');
    var max = 0;
    groups.forEach(function (g) { if (!roundingOnly(g)) max = Math.max(max, Math.abs(g.delta_bytes)); });
    s1.appendChild(sortableTable('sd-growth-table', [
      {label: 'growth', num: true, value: function (g) { return g.delta_bytes; }, text: function (g) { return fmtDelta(g.delta_bytes); },
        cls: function (g) { return roundingOnly(g) ? 'rounding' : g.delta_bytes > 0 ? 'grow' : g.delta_bytes < 0 ? 'shrink' : ''; }},
      {label: '', value: function (g) { return g.delta_bytes; }, cls: function () { return 'nowrap'; },
        text: function (g) {
          if (roundingOnly(g)) return el('span', {'class': 'muted', text: 'allocator rounding'});
          return bar(g.delta_bytes, max, g.delta_bytes > 0 ? 'grow' : '');
        }},
      {label: 'old', num: true, value: function (g) { return g.old_bytes; }, text: function (g) { return fmtBytes(g.old_bytes); }},
      {label: 'new', num: true, value: function (g) { return g.new_bytes; }, text: function (g) { return fmtBytes(g.new_bytes); }},
      {label: 'blocks', num: true, value: function (g) { return g.delta_blocks; },
        text: function (g) { return (g.delta_blocks > 0 ? '+' : '') + fmtCount(g.delta_blocks); }},
      {label: diff.group_by, value: function (g) { return g.key; }, text: function (g) {
        var parts = [g.label || g.key];   /* the label the CLI shows, via included */
        if (g.pattern) parts.push(el('span', {'class': 'hint', text: 'pattern: ' + g.pattern}));
        if (g.hint) parts.push(el('span', {'class': 'hint', text: typeof g.hint === 'string' ? g.hint : JSON.stringify(g.hint)}));
        return parts;
      }}], groups, 0, function (g) { return g.key; }));

    var s2 = section(main, 'sd-tree', 'Growth by stack (icicle)',
      'Stacks whose live bytes grew from the old snapshot to the new one; width is the growth.');
    if (rep.tree.stacks.length) icicle(s2, rep.tree, 'growth');
    else s2.appendChild(el('p', {'class': 'note', text: 'No stack grew.'}));
    roundingNote(s2, rep.tree);

    var s3 = section(main, 'sd-frag-section', 'Fragmentation of each side');
    fragFiles(frag).forEach(function (ff, i) {
      s3.appendChild(el('p', null, [(i ? 'new ' : 'old ') + shortName(ff.file) + ': ',
        el('span', {'class': 'verdict ' + ff.total.verdict, text: ff.total.verdict}), ' ' + ff.total.explanation]));
    });
  }

  /* Stacks whose block bytes moved while their requested bytes did not grew by allocator
   * rounding only: the diff does not call that growth, and the icicle does not draw it. */
  function roundingNote(s, tree) {
    if (!tree.rounding_stacks) return;
    s.appendChild(el('p', {'class': 'note', id: 'sd-tree-rounding', 'data-bytes': String(tree.rounding_bytes),
      text: fmtCount(tree.rounding_stacks) + ' stack' + (tree.rounding_stacks === 1 ? '' : 's') + ' changed by ' +
        fmtBytes(tree.rounding_bytes) + ' of allocator rounding only (the same requested bytes in larger blocks): ' +
        'not growth, and not drawn.'}));
  }

  function drawSeries(main, stats, rep) {
    var series = rep.series, files = rep.files;
    main.appendChild(figureBoxes([
      ['snapshots', String(files.length)],
      ['allocated, first', fmtBytes(series.total_bytes[0])],
      ['allocated, last', fmtBytes(series.total_bytes[series.total_bytes.length - 1])],
      ['groups that grew', fmtCount(series.growing_total)]]));
    var s1 = section(main, 'sd-series-section', 'Live bytes by ' + rep.group_by + ' over the snapshots',
      'Drawn from one profile over the ' + files.length + ' snapshots: per group, its live bytes in each file. ' +
      'Red lines grew in every step and ended higher; ' + series.groups.length + ' of ' + fmtCount(series.groups_total) +
      ' groups are drawn (the most growth first, then the largest).');
    seriesChart(s1, series, files);
    s1.appendChild(el('ol', {'class': 'files'}, files.map(function (f) { return el('li', {'class': 'mono', text: f}); })));
    s1.appendChild(sortableTable('sd-series-table', [
      {label: 'growth', num: true, value: function (g) { return g.delta_bytes; }, text: function (g) { return fmtDelta(g.delta_bytes); },
        cls: function (g) { return g.growing ? 'grow' : ''; }},
      {label: 'first', num: true, value: function (g) { return g.bytes[0]; }, text: function (g) { return fmtBytes(g.bytes[0]); }},
      {label: 'last', num: true, value: function (g) { return g.bytes[g.bytes.length - 1]; },
        text: function (g) { return fmtBytes(g.bytes[g.bytes.length - 1]); }},
      {label: 'growing', value: function (g) { return g.growing ? 1 : 0; }, text: function (g) { return g.growing ? 'yes' : ''; }},
      {label: rep.group_by, value: function (g) { return g.key; }}], series.groups, 0, function (g) { return g.key; }));
    var s2 = section(main, 'sd-tree', 'Growth by stack, first to last snapshot (icicle)');
    if (rep.tree.stacks.length) icicle(s2, rep.tree, 'growth');
    else s2.appendChild(el('p', {'class': 'note', text: 'No stack grew.'}));
    roundingNote(s2, rep.tree);
  }

  /* A job's folder (snapdiff.series-job/1, what `series --json` writes over it): the page
   * follows one rank; this table shows every rank by step, as `series` prints it. */
  function drawJob(main, job, followed) {
    if (!job) return;
    var ranks = job.ranks.map(function (r) { return r.rank; });
    var s = section(main, 'sd-job', 'Job folder: steps by rank (' + job.layout + ' names)',
      'Allocated bytes of each rank\'s snapshot at each step, over every device; OOM dumps ' +
      '(taken when the allocator failed) on rows of their own. The sections above follow ' +
      (followed === null ? 'one rank' : 'rank ' + followed) + '; `snapdiff series` prints the same tables.');
    var steps = [];
    job.snapshots.forEach(function (sn) {
      var key = (sn.oom ? 'oom ' : '') + (sn.step === null ? '-' : sn.step);
      var row = steps.length ? steps[steps.length - 1] : null;
      if (!row || row.key !== key) steps.push(row = {key: key, step: sn.step, oom: sn.oom, by: {}});
      row.by[sn.rank] = sn;
    });
    var t = el('table', {id: 'sd-job-table'});
    t.appendChild(el('tr', null, [el('th', {text: 'step'})].concat(ranks.map(function (r) {
      return el('th', {'class': 'num' + (r === followed ? ' followed' : ''), text: r === null ? 'rank ?' : 'rank ' + r});
    }))));
    steps.forEach(function (row) {
      var label = (row.step === null ? '(not named)' : String(row.step)) + (row.oom ? ' (OOM dump)' : '');
      t.appendChild(el('tr', {'data-key': row.key, 'data-ranks': ranks.filter(function (r) { return row.by[r]; }).join(' ')},
        [el('td', {text: label})].concat(ranks.map(function (r) {
          var sn = row.by[r];
          return el('td', {'class': 'num', 'data-rank': String(r), 'data-allocated': sn ? String(sn.allocated_bytes) : '',
            title: sn ? sn.source : '', text: sn ? fmtBytes(sn.allocated_bytes) : '\u2013'});
        }))));
    });
    s.appendChild(t);
    var t2 = el('table', {id: 'sd-job-ranks'});
    t2.appendChild(el('tr', null, ['rank', 'steps', 'from step', 'to step', 'allocated', 'then', 'change', 'OOM dumps']
      .map(function (h, i) { return el('th', {'class': i ? 'num' : '', text: h}); })));
    job.ranks.forEach(function (r) {
      t2.appendChild(el('tr', {'data-key': String(r.rank), 'data-steps': String(r.steps), 'data-oom': String(r.oom_dumps)}, [
        el('td', {text: String(r.rank) + (r.rank === job.grew_most ? ' (grew most)' : '')}),
        el('td', {'class': 'num', text: String(r.steps)}),
        el('td', {'class': 'num', text: r.first_step === null ? '\u2013' : String(r.first_step)}),
        el('td', {'class': 'num', text: r.last_step === null ? '\u2013' : String(r.last_step)}),
        el('td', {'class': 'num', text: r.first_allocated_bytes === null ? '\u2013' : fmtBytes(r.first_allocated_bytes)}),
        el('td', {'class': 'num', text: r.last_allocated_bytes === null ? '\u2013' : fmtBytes(r.last_allocated_bytes)}),
        el('td', {'class': 'num', text: r.change_bytes === null ? '\u2013' : fmtDelta(r.change_bytes)}),
        el('td', {'class': 'num', text: String(r.oom_dumps)})]));
    });
    s.appendChild(t2);
  }

  /* Pinned host memory (host_segments, host_traces): its own section, in no device figure. */
  function drawHost(main, stats) {
    if (!stats) return;
    var files = statsFiles(stats).filter(function (f) { return f.host; });
    if (!files.length) return;
    var s = section(main, 'sd-host', 'Pinned host memory',
      'Page-locked host memory of torch\'s CachingHostAllocator (host_segments and host_traces, ' +
      'recorded with record_pinned_host_memory=True). It is host RAM: no device figure on this page includes it.');
    var t = el('table', {id: 'sd-host-table'});
    t.appendChild(el('tr', null, ['file', 'allocated', 'reserved', 'inactive', 'segments', 'blocks', 'trace entries']
      .map(function (h, i) { return el('th', {'class': i ? 'num' : '', text: h}); })));
    files.forEach(function (f) {
      var h = f.host;
      t.appendChild(el('tr', {'data-key': f.source, 'data-allocated': String(h.allocated_bytes),
        'data-reserved': String(h.reserved_bytes)}, [el('td', {'class': 'mono', text: shortName(f.source)}),
        el('td', {'class': 'num', text: fmtBytes(h.allocated_bytes)}), el('td', {'class': 'num', text: fmtBytes(h.reserved_bytes)}),
        el('td', {'class': 'num', text: fmtBytes(h.inactive_bytes)}), el('td', {'class': 'num', text: fmtCount(h.segments)}),
        el('td', {'class': 'num', text: fmtCount(h.blocks)}), el('td', {'class': 'num', text: fmtCount(h.trace_entries)})]));
    });
    s.appendChild(t);
  }

  function main() {
    var rep = data('sd-report'), stats = data('sd-stats'), frag = data('sd-frag');
    var m = document.getElementById('sd-main');
    var summary = document.getElementById('sd-summary');
    if (rep.mode !== 'ranks' && frag) drawOomHeadline(m, frag, rep);
    if (rep.mode === 'single') {
      summary.textContent = rep.files[0];
      drawSingle(m, stats, frag, rep);
    } else if (rep.mode === 'diff') {
      summary.textContent = 'old ' + rep.files[0] + ', new ' + rep.files[1];
      drawDiff(m, data('sd-diff'), frag, rep);
    } else {
      summary.textContent = rep.files.length + ' snapshots';
      drawSeries(m, stats, rep);
    }
    var job = data('sd-job');
    if (job) drawJob(m, job, job.grew_most !== null ? job.grew_most : followedRank(job));
    drawHost(m, stats);
  }

  /* The rank the page follows when none grew: the one with the most steps (cmd_report.c). */
  function followedRank(job) {
    var best = null;
    job.ranks.forEach(function (r) { if (!best || r.steps > best.steps) best = r; });
    return best ? best.rank : null;
  }

  function run() {
    var status = document.getElementById('sd-status');
    var t0 = performance.now();
    try {
      main();
    } catch (e) {
      recordError('error: ' + (e && e.stack ? e.stack : e));
    }
    document.body.setAttribute('data-sd-errors', String(errors.length));
    status.setAttribute('data-status', errors.length ? 'failed' : 'drawn');
    /* How long drawing took, and the page's whole load (parse + draw), in ms. */
    status.setAttribute('data-draw-ms', String(Math.round(performance.now() - t0)));
    status.setAttribute('data-load-ms', String(Math.round(performance.now())));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);
  else run();
})();

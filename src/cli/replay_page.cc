#include "cli/replay_page.h"

namespace fk::cli {

const char kReplayPageCss[] = R"css(
:root { --healthy:#2f9e58; --admitting:#3b7ddd; --hold:#e0a020; --suspend:#d63c3c;
  --ignore:#98a1ab; --intent:#7b3fd4; --applied:#a01818; --conflict:#f08c00; --failed:#222;
  --superseded:#8a8f96; --pending:#7b3fd4; --ink:#1d2433; --muted:#5d6675; --line:#e3e7ee; }
* { box-sizing: border-box; }
body { margin: 0; padding: 18px 20px 40px; font: 13px/1.4 system-ui, -apple-system, "Segoe UI",
  Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fbfcfd; }
h1 { font-size: 19px; margin: 0 0 2px; } h2 { font-size: 15px; margin: 22px 0 8px; }
.meta { color: var(--muted); margin: 0 0 10px; } code { font: 12px ui-monospace, monospace; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 10px; }
.chip { background: #eef1f6; border-radius: 11px; padding: 2px 10px; }
.chip b { font-weight: 650; } .chip.alert { background: #fbe3e3; color: #8a1414; }
.chip.ok { background: #e1f3e8; color: #1d6b3b; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 0 0 10px; color: var(--muted); }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.legend-head { font-weight: 650; color: var(--ink); }
.legend-note { color: var(--muted); margin: 0 0 10px; }
.sw.shade { opacity: .16; } .sw.shade.strong { opacity: .28; }
.sw.shade.v-healthy { background: var(--healthy); } .sw.shade.v-admitting { background: var(--admitting); }
.sw.shade.v-hold { background: var(--hold); } .sw.shade.v-suspend { background: var(--suspend); }
.sw.shade.v-ignore { background: var(--ignore); }
#fk-lanes .note { font-size: 10.5px; fill: #39414f; }
#fk-lanes .axis-title { fill: var(--muted); font-size: 10.5px; font-style: italic; }
.axis-tick { stroke: #9aa3b0; }
.sw { width: 12px; height: 12px; border-radius: 50%; display: inline-block; }
.sw.sq { border-radius: 2px; } .sw.band { width: 22px; border-radius: 2px; }
.sw.tri { width: 0; height: 0; border-radius: 0; border: 6px solid transparent;
  border-top: 10px solid var(--intent); border-bottom: 0; }
#fk-timeline { overflow-x: auto; background: #fff; border: 1px solid var(--line);
  border-radius: 6px; }
#fk-lanes { display: block; }
#fk-lanes text { font-size: 12px; fill: var(--ink); }
#fk-lanes .ns-label { font-weight: 650; font-size: 12.5px; }
#fk-lanes .lane-label { fill: #333b4a; } #fk-lanes .lane-sub { fill: var(--muted); font-size: 11px; }
#fk-lanes .axis { fill: var(--muted); font-size: 10.5px; }
#fk-lanes .band-label { font-size: 10.5px; fill: #1f3550; pointer-events: none; }
.lane-bg { fill: #fff; } .lane-bg.alt { fill: #f6f8fb; } .ns-bg { fill: #eef2f7; }
.grid { stroke: #eceff4; } .fence-change { stroke: #4a6fa5; stroke-dasharray: 3 3; stroke-width: 1.2; }
.fence-a { fill: #d6e4f5; } .fence-b { fill: #b7cfec; } .fence-altered { fill: #f6c6c6; }
.fence-absent { fill: #e3e3e3; } .leader { fill: #dcd3f3; } .band { stroke: #fff; stroke-width: 1; }
.seg { opacity: .16; } .seg.v-healthy { fill: var(--healthy); } .seg.v-admitting { fill: var(--admitting); }
.seg.v-hold { fill: var(--hold); opacity: .28; } .seg.v-suspend { fill: var(--suspend); opacity: .28; }
.seg.v-ignore { fill: var(--ignore); }
.mark { cursor: pointer; } .mark:hover { stroke: #000; stroke-width: 1.5; }
.obs { fill: #fff; stroke: #6b7483; stroke-width: 1.3; } .obs.suspended { fill: #6b7483; }
.v-healthy { fill: var(--healthy); } .v-admitting { fill: var(--admitting); }
.v-hold { fill: var(--hold); } .v-suspend { fill: var(--suspend); } .v-ignore { fill: var(--ignore); }
.intent { fill: var(--intent); } .forgotten { stroke: #444; stroke-width: 2; fill: none; }
.o-applied { fill: var(--applied); } .o-conflict { fill: var(--conflict); }
.o-failed { fill: var(--failed); } .o-superseded { fill: var(--superseded); }
.o-pending { fill: #fff; stroke: var(--pending); stroke-width: 1.5; }
.link { fill: none; stroke: var(--intent); stroke-width: 1.6; }
.tick { stroke: #5b45a8; stroke-width: 2; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f1f4f8; position: sticky; top: 0; font-weight: 650; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.mono { font: 12px ui-monospace, monospace; white-space: nowrap; }
td.details { font: 12px ui-monospace, monospace; word-break: break-word; }
tr:target { background: #fff3c4; }
.kind { border-radius: 3px; padding: 0 5px; background: #eef1f6; white-space: nowrap; }
tr.k-suspend_intent .kind { background: #e8dcfa; } tr.k-suspend_outcome .kind { background: #f7d6d6; }
tr.k-fence_observed .kind { background: #d6e4f5; } tr.k-decided .kind { background: #e1f3e8; }
tr.k-leadership .kind { background: #dcd3f3; }
dl.glossary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; }
dl.glossary dt { font: 12px ui-monospace, monospace; } dl.glossary dd { margin: 0; color: var(--muted); }
)css";

const char kReplayPageJs[] = R"js(
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('fk-data').textContent);
  const svg = document.getElementById('fk-lanes');
  const SVG = svg.namespaceURI;  // the inline <svg>'s namespace: no URL in this file
  const rows = data.rows, journals = data.journals, merged = data.merged;
  const LABEL = 240, PAD = 14, LANE = 22, NOTE = 15, HEAD = 24, AXIS = 40, GAP = 5;
  const CHAR = 6.2, NOTE_LINES = 8;  // px per character at 10.5px; most note lines under a lane
  const avail = Math.max(document.getElementById('fk-timeline').clientWidth - 2, 900);
  // x is time. Rows recorded a few ms apart would hide each other, so each
  // row keeps at least GAP px after the one before it: the axis shifts with them.
  const t0 = rows.length ? rows[0].ms : 0;
  const t1 = rows.reduce(function (m, r) { return Math.max(m, r.ms); }, t0);
  const xOf = new Map(), shifts = [];
  let scale = (avail - LABEL - 3 * PAD) / Math.max(t1 - t0, 1), last = -Infinity;
  function place() {
    let shift = 0;
    last = -Infinity;
    shifts.length = 0;
    rows.forEach(function (r) {
      const tx = LABEL + PAD + (r.ms - t0) * scale;
      const x = Math.max(tx + shift, last + GAP);
      shift = x - tx;
      last = x;
      xOf.set(r.key, x);
      shifts.push([r.ms, shift]);
    });
    return shift;
  }
  // Fit the page's width: the spreading takes room the time scale then gives up.
  for (let i = 0; i < 4; ++i) {
    const spread = place();
    const fit = (avail - LABEL - 3 * PAD - spread) / Math.max(t1 - t0, 1);
    if (fit <= 0 || Math.abs(fit - scale) < scale * 0.01) break;
    scale = fit;
  }
  place();
  const xEnd = Math.max(last, LABEL + PAD + (t1 - t0) * scale) + 2 * PAD;
  const bg = el('g', {}, svg), grid = el('g', {}, svg), fg = el('g', {}, svg);
  let y = AXIS;

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function label(parent, x, yy, s, cls, anchor) {
    const t = el('text', {x: x, y: yy, class: cls, 'text-anchor': anchor || 'start'}, parent);
    t.textContent = s;
    return t;
  }
  function key(r, seq) { return merged ? r.j + '-' + seq : String(seq); }
  function row(r) {
    return (merged ? journals[r.j].label + ' ' : '') + '#' + r.seq + '  ' + r.t + '  ' + r.kind +
        '  ' + r.ns + '/' + r.name + (r.uid ? '  uid ' + r.uid : '') + (merged ? '  writer ' + r.w : '') +
        '\n' + r.text;
  }
  function mark(node, r) {  // every journal row is one mark: hover shows it, click jumps to it
    node.setAttribute('data-mark', r.seq);
    node.setAttribute('data-kind', r.kind);
    node.setAttribute('data-journal', r.j);
    node.classList.add('mark');
    el('title', {}, node).textContent = row(r);
    node.addEventListener('click', function () { location.hash = 'row-' + r.key; });
    return node;
  }
  function journalMark(parent, r, x, yy) {  // which journal: a bar in its colour under the mark
    if (merged) el('rect', {x: x - 5, y: yy, width: 10, height: 2.5, fill: journals[r.j].colour, 'data-journal-mark': r.j}, parent);
  }
  function laneBackground(alt, height) {
    el('rect', {x: 0, y: y, width: xEnd + PAD, height: height || LANE, class: 'lane-bg' + (alt ? ' alt' : '')}, bg);
  }
  function band(parent, r, x0, x1, cls, text, attrs) {
    const b = el('rect', Object.assign({x: x0, y: y + 3, width: Math.max(x1 - x0, 2),
                                        height: LANE - 6, rx: 3, class: 'band ' + cls}, attrs), parent);
    if (r) mark(b, r);
    // A narrow band keeps a shorter label ("generation 2", "gen 2", "2"; a
    // leader cut short) rather than none.
    const room = Math.floor((x1 - x0 - 8) / CHAR);
    const short = /^generation \d+/.test(text) ? [text.replace('generation ', 'gen '), text.replace(/^generation (\d+).*$/, '$1')] : [];
    const fits = [text].concat(short).find(function (s) { return s.length <= room; }) ||
        (room >= 4 ? text.substring(0, room - 1) + '\u2026' : '');
    if (fits) label(parent, x0 + 4, y + LANE / 2 + 4, fits, 'band-label').setAttribute('data-band-label', text);
    return b;
  }
  function at(r) { return xOf.get(r.key); }
  function left(r) { return at(r) - GAP / 2; }

  function shiftAt(ms) {  // the shift of the last row recorded at or before ms
    let s = 0;
    for (let i = 0; i < shifts.length && shifts[i][0] <= ms; ++i) s = shifts[i][1];
    return s;
  }
  function axis() {
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4,
                   3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 216e5, 432e5, 864e5];
    const step = steps.find(function (s) { return s * scale >= 90; }) || 864e5;
    const g = el('g', {'data-axis': 'time', 'data-step-ms': step}, fg);
    label(g, LABEL - 10, 14, 'time (UTC)', 'axis-title', 'end');
    if (rows.length) label(g, LABEL - 10, 28, new Date(t0).toISOString().substring(0, 10), 'axis-title', 'end');
    const placed = [], texts = new Set();
    function tick(t, x, text) {
      texts.add(text);
      label(g, x, 22, text, 'axis', 'middle').setAttribute('data-tick-ms', t);
      el('line', {x1: x, x2: x, y1: 27, y2: AXIS, class: 'axis-tick'}, g);
      el('line', {x1: x, x2: x, y1: AXIS, y2: 1e5, class: 'grid'}, grid);
      placed.push(x);
    }
    function free(x) {  // room for a label of up to 12 characters, right of the axis title
      return x - CHAR * 6 >= LABEL && placed.every(function (p) { return Math.abs(p - x) >= CHAR * 12 + 12; });
    }
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const iso = new Date(t).toISOString(), x = LABEL + PAD + (t - t0) * scale + shiftAt(t);
      if (x - CHAR * 6 >= LABEL) tick(t, x, iso.substring(11, step < 1e3 ? 23 : 19));
    }
    // Rows that came in bursts are spread apart, and the burst takes room
    // the regular ticks leave empty: each burst gets its own tick, at its
    // first row, to the millisecond.
    rows.forEach(function (r) {
      const text = new Date(r.ms).toISOString().substring(11, 23);
      if (free(at(r)) && !texts.has(text)) tick(r.ms, at(r), text);
    });
  }

  function leadershipLane(j, terms) {
    laneBackground(true);
    label(fg, LABEL - 10, y + 15, merged ? 'leader: ' + journals[j].label : 'leadership', 'lane-label', 'end');
    const g = el('g', {'data-lane': 'leadership', 'data-journal': j}, fg);
    if (!terms.length) label(g, LABEL + PAD, y + 15, 'no leadership rows (leader election off, or outside the filters)', 'lane-sub');
    // A term the journal never closes ends with the journal's last row: after
    // that, this journal says nothing (its process stopped, or was killed).
    const own = rows.filter(function (r) { return r.j === j; });
    const journalEnd = own.length ? at(own[own.length - 1]) + GAP : xEnd;
    terms.forEach(function (r, i) {
      if (r.state === 'acquired') {
        const end = terms.slice(i + 1).find(function (n) { return n.identity === r.identity; });
        band(g, r, left(r), end ? left(end) : journalEnd, 'leader', 'leader: ' + r.identity, {'data-band': 'leader'});
      } else {
        mark(el('line', {x1: at(r), x2: at(r), y1: y + 2, y2: y + LANE - 2, class: 'tick'}, g), r);
      }
    });
    y += LANE;
  }

  function fenceLane(ns, policy, list, changes) {
    laneBackground(false);
    label(fg, LABEL - 10, y + 15, policy, 'lane-sub', 'end');
    const g = el('g', {'data-lane': 'fence', 'data-namespace': ns, 'data-policy': policy}, fg);
    list.forEach(function (r, i) {
      const x1 = i + 1 < list.length ? left(list[i + 1]) : xEnd;
      const cls = !r.present ? 'fence-absent' : !r.intact ? 'fence-altered' : (r.gen % 2 ? 'fence-a' : 'fence-b');
      const text = !r.present ? 'absent' : 'generation ' + r.gen + (r.intact ? '' : ' (altered)');
      band(g, r, left(r), x1, cls, text, {'data-band': 'fence', 'data-generation': r.gen});
      journalMark(g, r, at(r), y + LANE - 3);
      if (i > 0 && (r.gen !== list[i - 1].gen || r.intact !== list[i - 1].intact || r.present !== list[i - 1].present)) changes.push(left(r));
    });
    y += LANE;
  }

  function segments(g, list) {
    const decided = list.filter(function (r) { return r.kind === 'decided'; });
    decided.forEach(function (r, i) {
      const x1 = i + 1 < decided.length ? at(decided[i + 1]) : xEnd;
      el('rect', {x: at(r), y: y + 1, width: x1 - at(r), height: LANE - 2,
                  class: 'seg v-' + r.verdict, 'data-shade': r.verdict}, g);
    });
  }

  function shape(g, r, cy) {
    const x = at(r);
    switch (r.kind) {
      case 'sandbox_observed':
        return el('circle', {cx: x, cy: cy, r: 3.5, class: 'obs' + (r.mode === 'suspended' ? ' suspended' : '')}, g);
      case 'decided':
        if (r.verdict === 'suspend')
          return el('path', {d: 'M' + x + ' ' + (cy - 7) + 'l7 7l-7 7l-7 -7z', class: 'v-suspend', 'data-verdict': r.verdict}, g);
        if (r.verdict === 'hold')
          return el('rect', {x: x - 5, y: cy - 5, width: 10, height: 10, class: 'v-hold', 'data-verdict': r.verdict}, g);
        return el('circle', {cx: x, cy: cy, r: 5, class: 'v-' + r.verdict, 'data-verdict': r.verdict}, g);
      case 'suspend_intent':
        return el('path', {d: 'M' + (x - 6) + ' ' + (cy - 5) + 'h12l-6 10z', class: 'intent'}, g);
      case 'suspend_outcome':
        return el('rect', {x: x - 4.5, y: cy - 4.5, width: 9, height: 9, rx: 1.5,
                           class: 'o-' + r.outcome, 'data-outcome': r.outcome}, g);
      default:
        return el('path', {d: 'M' + (x - 5) + ' ' + (cy - 5) + 'l10 10m0 -10l-10 10', class: 'forgotten'}, g);
    }
  }

  // The words printed under a lane: each verdict change, intent, outcome and
  // forgetting, with its reason and note.
  function noteOf(r, previous) {
    const tail = (r.reason ? ' (' + r.reason + ')' : '') + (r.note ? ': ' + r.note : '');
    if (r.kind === 'decided') return previous && previous.verdict === r.verdict ? '' : r.verdict + tail;
    if (r.kind === 'suspend_intent') return 'intent' + tail;
    if (r.kind === 'suspend_outcome') return r.outcome + tail;
    if (r.kind === 'forgotten') return 'forgotten' + tail;
    return '';
  }
  // Each note on the first line under the lane where it fits whole; a lane
  // takes as many lines as its busiest moment needs (at most NOTE_LINES,
  // beyond which a note on the line that frees first is cut short). Returns
  // the notes as [row, text, line] and the number of lines.
  function layoutNotes(list) {
    let previous = null;
    const noted = [], ends = [], last = [];
    list.forEach(function (r) {
      const text = noteOf(r, previous);
      if (r.kind === 'decided') previous = r;
      if (!text) return;
      const x = at(r) - 3;
      let line = ends.findIndex(function (e) { return e <= x; });
      if (line < 0 && ends.length < NOTE_LINES) line = ends.push(-Infinity) - 1;
      if (line < 0) {
        line = ends.indexOf(Math.min.apply(null, ends));
        const cut = noted[last[line]], fits = Math.max(Math.floor((x - at(cut[0]) - 6) / CHAR), 2);
        if (cut[1].length > fits) cut[1] = cut[1].substring(0, fits - 1) + '\u2026';
      }
      ends[line] = x + CHAR * text.length + 8;
      last[line] = noted.length;
      noted.push([r, text, line, text]);
    });
    return {noted: noted, lines: Math.max(ends.length, 2)};
  }
  function notes(g, laid) {  // the whole text is each note's tooltip (and in the table)
    laid.noted.forEach(function (n) {
      const t = label(g, at(n[0]) - 3, y + LANE + NOTE * (1 + n[2]) - 4, n[1], 'note');
      t.setAttribute('data-note', n[0].key);
      el('title', {}, t).textContent = n[3];
    });
  }

  function sandboxLane(ns, name, list, alt) {
    const laid = layoutNotes(list);
    laneBackground(alt, LANE + laid.lines * NOTE);
    label(fg, LABEL - 10, y + 15, name, 'lane-label', 'end');
    const g = el('g', {'data-lane': 'sandbox', 'data-sandbox': ns + '/' + name}, fg);
    segments(g, list);
    const cy = y + LANE / 2;
    list.forEach(function (r) {
      const ref = key(r, r.ref);
      if (r.kind !== 'suspend_outcome' || !xOf.has(ref)) return;
      const x0 = xOf.get(ref), x1 = at(r);
      el('path', {d: 'M' + x0 + ' ' + cy + 'C' + x0 + ' ' + (cy - 14) + ' ' + x1 + ' ' + (cy - 14) + ' ' + x1 + ' ' + cy,
                  class: 'link o-' + r.outcome, 'data-link': r.ref + '-' + r.seq}, g);
    });
    list.forEach(function (r) { mark(shape(g, r, cy), r); journalMark(g, r, at(r), cy + 8); });
    notes(g, laid);
    y += LANE + laid.lines * NOTE;
  }

  function namespaceGroup(ns, group) {
    el('rect', {x: 0, y: y, width: xEnd + PAD, height: HEAD, class: 'ns-bg'}, bg);
    label(fg, 10, y + 16, ns, 'ns-label');
    label(fg, LABEL - 10, y + 16, 'fence', 'lane-sub', 'end');
    y += HEAD;
    const top = y, changes = [];
    Array.from(group.fences.keys()).sort().forEach(function (p) { fenceLane(ns, p, group.fences.get(p), changes); });
    Array.from(group.sandboxes.keys()).sort().forEach(function (n, i) { sandboxLane(ns, n, group.sandboxes.get(n), i % 2); });
    changes.forEach(function (x) { el('line', {x1: x, x2: x, y1: top, y2: y, class: 'fence-change'}, fg); });
  }

  const namespaces = new Map(), terms = journals.map(function () { return []; });
  rows.forEach(function (r) {
    if (r.kind === 'leadership') { terms[r.j].push(r); return; }
    if (r.kind === 'writer_started') return;  // a run's start: in the table, not a lane
    if (!namespaces.has(r.ns)) namespaces.set(r.ns, {fences: new Map(), sandboxes: new Map()});
    const lanes = r.kind === 'fence_observed' ? namespaces.get(r.ns).fences : namespaces.get(r.ns).sandboxes;
    if (!lanes.has(r.name)) lanes.set(r.name, []);
    lanes.get(r.name).push(r);
  });
  axis();
  terms.forEach(function (list, j) { leadershipLane(j, list); });
  Array.from(namespaces.keys()).sort().forEach(function (ns) { namespaceGroup(ns, namespaces.get(ns)); });
  svg.setAttribute('width', xEnd + PAD);
  svg.setAttribute('height', y + 6);
  grid.querySelectorAll('line').forEach(function (l) { l.setAttribute('y2', y); });
  document.body.setAttribute('data-rendered', rows.length);
})();
)js";

}  // namespace fk::cli

/* pytest-agentchaos HTML report: filters, expandable tests, and each test's timeline, built
   when the test is first expanded. Trace data is agent output: it only ever reaches the page
   through textContent and setAttribute, never as markup. */
(function () {
  "use strict";

  // [lane, label], top to bottom; lanes without events are not drawn
  var LANES = [
    ["run", "run / steps"], ["tool", "tool calls"], ["http", "http calls"],
    ["model", "model calls"], ["fault", "faults injected"], ["detect", "detections"],
    ["intervene", "interventions"], ["repair", "repairs"], ["snapshot", "snapshots / rebirth"],
    ["halt", "halts / budgets / end"], ["other", "other events"]
  ];
  // the colour of a mark is the highest of its events' tones in this order
  var TONES = ["call", "info", "ok", "rebirth", "warn", "fault", "err"];
  var LABEL_W = 150, LANE_H = 20, TOP = 30, BOTTOM = 30, MIN_COL = 6, MAX_COL = 36;
  var LABEL_ROOM = 110, CHAR_W = 6.2;  // right of the plot: room for the last marks' labels
  var MAX_LISTED = 200;

  function byId(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // ---- filters -------------------------------------------------------------------------
  function applyFilters() {
    var outcome = byId("filter-outcome").value;
    var profile = byId("filter-profile").value;
    var verdict = byId("filter-verdict").value;
    var rows = document.querySelectorAll("#tests tr.test");
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var visible = (!outcome || row.getAttribute("data-outcome") === outcome) &&
        (!profile || row.getAttribute("data-profile") === profile) &&
        (!verdict || row.getAttribute("data-verdicts").split(" ").indexOf(verdict) >= 0);
      row.hidden = !visible;
      var button = row.querySelector("button.expand");
      byId(button.getAttribute("aria-controls")).hidden =
        !visible || button.getAttribute("aria-expanded") !== "true";
      if (visible) { shown++; }
    }
    byId("shown-count").textContent = shown + " of " + rows.length + " tests shown";
  }

  // ---- expanding a test ----------------------------------------------------------------
  function toggle(button) {
    var open = button.getAttribute("aria-expanded") !== "true";
    var detail = byId(button.getAttribute("aria-controls"));
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = open ? "\u25be" : "\u25b8";
    detail.hidden = !open;
    if (open) {
      var boxes = detail.querySelectorAll("div.timeline");
      for (var i = 0; i < boxes.length; i++) {
        if (!boxes[i].getAttribute("data-built")) {
          boxes[i].setAttribute("data-built", "1");
          try {
            buildTimeline(boxes[i]);
          } catch (e) {
            boxes[i].textContent = "timeline could not be drawn: " + String(e && e.message);
          }
        }
      }
    }
  }

  // ---- copy the replay command ---------------------------------------------------------
  function copy(button) {
    var code = byId(button.getAttribute("data-target"));
    var text = code.textContent;
    function say(label) {
      button.textContent = label;
      window.setTimeout(function () { button.textContent = "copy"; }, 2500);
    }
    function selectIt() {
      try {
        var range = document.createRange();
        range.selectNodeContents(code);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        var done = false;
        try { done = document.execCommand("copy"); } catch (e) { done = false; }
        say(done ? "copied" : "selected: press Ctrl+C");
      } catch (e) {
        say("select the command to copy it");
      }
    }
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { say("copied"); }, selectIt);
        return;
      }
    } catch (e) { /* no clipboard API here: select the text instead */ }
    selectIt();
  }

  // ---- the timeline --------------------------------------------------------------------
  function decodeTypes(blob) {
    return blob.types.map(function (entry) {
      var at = new Map();
      entry[1].forEach(function (name, i) { at.set(name, i + 3); });
      return { name: String(entry[0]), fields: entry[1], at: at };
    });
  }

  function field(type, ev, name) {
    var i = type.at.get(name);
    return i === undefined ? undefined : ev[i];
  }

  // the lane and the tone of one event
  function classify(type, ev) {
    var f = function (name) { return field(type, ev, name); };
    switch (type.name) {
      case "ToolCall": return [f("channel") === "http" ? "http" : "tool", "call"];
      case "ToolResult": return [f("channel") === "http" ? "http" : "tool", f("ok") === false ? "err" : "ok"];
      case "ModelCall": return ["model", "call"];
      case "ModelResult": return ["model", f("ok") === false ? "err" : "ok"];
      case "FaultInjected": return ["fault", "fault"];
      case "Detection": return ["detect", "warn"];
      case "Intervention": return f("action") === "rebirth" ? ["snapshot", "rebirth"] : ["intervene", "info"];
      case "Repair": return ["repair", f("ok") === false ? "err" : "ok"];
      case "Snapshot": {
        var action = f("action");
        return ["snapshot", action === "restored" ? "rebirth" : action === "skipped" ? "warn" : "info"];
      }
      case "Halt": return ["halt", f("hard") === true ? "err" : "warn"];
      case "BudgetExhausted": return ["halt", "err"];
      case "RunEnded": return ["halt", (f("status") || "completed") === "completed" ? "ok" : "err"];
      case "RunStarted": case "Step": return ["run", "info"];
      default: return ["other", "info"];
    }
  }

  function show(value) {
    try { return JSON.stringify(value); } catch (e) { return String(value); }
  }

  function fmtT(t) { return String(Math.round(t * 1000) / 1000); }

  function fmtAxisT(t) {
    if (t >= 3600) { return (t / 3600).toFixed(1) + "h"; }
    if (t >= 100) { return Math.round(t) + "s"; }
    return (Math.round(t * 10) / 10) + "s";
  }

  // one event as one line of text
  function describe(types, ev) {
    var type = types[ev[0]];
    var parts = [], skip = {};
    if (type.name === "Repair") {
      var ok = field(type, ev, "ok") !== false;
      parts.push(String(field(type, ev, "tool") || "?") + " via " + String(field(type, ev, "strategy") || "?") +
        ": " + (ok ? "ok" : "declined"));
      parts.push("before " + show(field(type, ev, "before") || {}) + " -> after " + show(field(type, ev, "after") || {}));
      skip = { tool: 1, strategy: 1, ok: 1, before: 1, after: 1 };
    }
    for (var i = 3; i < ev.length; i++) {
      var name = type.fields[i - 3];
      if (ev[i] === null || ev[i] === undefined || Object.prototype.hasOwnProperty.call(skip, name)) { continue; }
      parts.push(name + "=" + show(ev[i]));
    }
    return "#" + ev[1] + " t=" + fmtT(ev[2]) + "s " + type.name + (parts.length ? " " + parts.join(", ") : "");
  }

  // the short text a mark of these lanes is labelled with (its first notable event's)
  var LABELLED = { fault: 1, detect: 1, intervene: 1, repair: 1, snapshot: 1, halt: 1 };
  function markLabel(type, ev) {
    var f = function (name) { return field(type, ev, name); };
    var text;
    switch (type.name) {
      case "FaultInjected": text = f("kind"); break;
      case "Detection": text = f("kind"); break;
      case "Intervention": text = f("action"); break;
      case "Repair": text = (f("ok") === false ? "declined " : "") + (f("strategy") || "repair"); break;
      case "Snapshot": text = f("action"); break;
      case "Halt": text = "halt " + (f("reason") || ""); break;
      case "BudgetExhausted": text = f("budget"); break;
      case "RunEnded": text = f("status") || "completed"; break;
      default: return "";
    }
    text = String(text === undefined || text === null ? "" : text);
    return text.length > 22 ? text.slice(0, 21) + "\u2026" : text;
  }

  function num(value, fallback) {
    return typeof value === "number" && isFinite(value) ? value : fallback;
  }

  // loop episodes (the loop observer's detections) and halts, as [first step, last step]
  function episodes(types, events, lo, hi) {
    var spans = [], loops = new Map(), strikes = null;
    events.forEach(function (ev) {
      var type = types[ev[0]], f = function (name) { return field(type, ev, name); };
      var detail = f("detail");
      detail = detail && typeof detail === "object" && !Array.isArray(detail) ? detail : {};
      if (type.name === "Detection" && f("detector") === "loop_observer") {
        var episode = String(detail.episode);
        if (f("kind") === "loop") {
          var span = {
            kind: "loop", from: num(detail.began_step, num(detail.detected_step, ev[1])),
            to: hi, label: "loop #" + episode + (detail.loop_kind ? " (" + String(detail.loop_kind) + ")" : ""),
            note: "detected at step " + num(detail.detected_step, ev[1]) + ", never broken"
          };
          loops.set(episode, span);
          spans.push(span);
        } else if (f("kind") === "loop_broken" && loops.has(episode)) {
          var open = loops.get(episode);
          open.to = Math.max(open.from, num(detail.broken_step, ev[1]));
          open.note = "detected at step " + num(detail.detected_step, open.from) + ", broken at step " + open.to;
          loops.delete(episode);
        }
      } else if (type.name === "Detection" && f("detector") === "halt") {
        if (strikes === null) { strikes = ev[1]; }
      } else if (type.name === "Halt" && detail.by === "halt_monitor") {
        var fired = Array.isArray(detail.fired) ? detail.fired.map(String).join(", ") : "";
        spans.push({ kind: "halt", from: strikes === null ? ev[1] : strikes, to: ev[1],
                     label: "halt: " + (fired || String(f("reason") || "monitor")),
                     note: "the halt monitor stopped the agent at step " + ev[1] +
                       (strikes === null ? "" : " (first strike at step " + strikes + ")") });
        strikes = null;
      } else if ((type.name === "Halt" && f("hard") === true) || type.name === "BudgetExhausted") {
        var what = type.name === "BudgetExhausted"
          ? "budget " + String(f("budget")) + "=" + String(f("limit"))
          : "hard halt: " + String(f("reason") || "?");
        spans.push({ kind: "stop", from: ev[1], to: hi, label: what,
                     note: what + " stopped the run at step " + ev[1] });
      }
    });
    return spans.filter(function (span) { return span.to >= lo && span.from <= hi; });
  }

  function niceStep(span) {
    var raw = Math.max(1, span / 8), power = Math.pow(10, Math.floor(Math.log10(raw)));
    var scaled = raw / power;
    return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
  }

  function buildTimeline(box) {
    var blob = JSON.parse(byId(box.getAttribute("data-trace")).textContent);
    var types = decodeTypes(blob), events = blob.ev;
    var summary = el("p", "timeline-summary");
    box.appendChild(summary);
    if (!events.length) {
      summary.textContent = "the trace has no events";
      return;
    }
    var lo = Infinity, hi = -Infinity, tMax = 0, i;
    for (i = 0; i < events.length; i++) {
      lo = Math.min(lo, events[i][1]);
      hi = Math.max(hi, events[i][1]);
      tMax = Math.max(tMax, events[i][2]);
    }
    var width = Math.max(520, box.clientWidth || 960);
    var plotW = width - LABEL_W - 12;
    var span = hi - lo + 1;
    var per = Math.max(1, Math.ceil(span / Math.floor(plotW / MIN_COL)));
    var bins = Math.ceil(span / per);
    var col = Math.min(MAX_COL, plotW / bins);

    // a multi-agent run: one model lane per agent (each agent's model calls are its target)
    var models = [];
    for (i = 0; i < events.length; i++) {
      var tn = types[events[i][0]].name;
      if (tn === "ModelCall" || tn === "ModelResult") {
        var m = String(field(types[events[i][0]], events[i], "model"));
        if (models.indexOf(m) < 0) { models.push(m); }
      }
    }
    var laneDefs = [];
    LANES.forEach(function (lane) {
      if (lane[0] === "model" && models.length > 1) {
        models.forEach(function (m) {
          laneDefs.push(["model:" + m, "model: " + (m.length > 18 ? m.slice(0, 17) + "\u2026" : m)]);
        });
      } else {
        laneDefs.push(lane);
      }
    });
    var laneLabel = new Map(laneDefs);

    // aggregate: one mark per lane and step (or group of steps)
    var cells = new Map(), used = new Set(), binT = [];
    for (i = 0; i < events.length; i++) {
      var ev = events[i], kind = classify(types[ev[0]], ev);
      if (kind[0] === "model" && models.length > 1) {
        kind = ["model:" + String(field(types[ev[0]], ev, "model")), kind[1]];
      }
      var b = Math.floor((ev[1] - lo) / per), key = kind[0] + " " + b;
      var cell = cells.get(key);
      if (!cell) {
        cell = { lane: kind[0], bin: b, tone: 0, errors: 0, items: [] };
        cells.set(key, cell);
      }
      cell.items.push(i);
      cell.tone = Math.max(cell.tone, TONES.indexOf(kind[1]));
      if (kind[1] === "err") { cell.errors++; }
      used.add(kind[0]);
      if (binT[b] === undefined || ev[2] < binT[b]) { binT[b] = ev[2]; }
    }
    var lanes = laneDefs.filter(function (lane) { return used.has(lane[0]); });
    // loop episodes and halts on lanes of their own at the top, packed so none overlaps
    var spans = episodes(types, events, lo, hi), spanRows = [];
    spans.sort(function (a, b) { return a.from - b.from; }).forEach(function (span) {
      for (var r = 0; r < spanRows.length; r++) {
        if (spanRows[r] < span.from) { break; }
      }
      spanRows[r] = span.to;
      span.row = r;
    });
    var spanLanes = spanRows.map(function (_, r) {
      return ["episodes:" + r, r === 0 ? "loops / halts" : ""];
    });
    lanes = spanLanes.concat(lanes);
    var row = new Map();
    lanes.forEach(function (lane, n) { row.set(lane[0], n); });

    var text = events.length + " events, steps " + lo + "\u2013" + hi + ", virtual time 0\u2013" +
      fmtT(tMax) + "s; " + (per === 1 ? "one mark per lane and step" : "each mark groups " + per + " steps") +
      ". Hover a mark for its events, click it to list them.";
    if (blob.omitted) {
      text += " Events " + (blob.omitted[0] + 1) + "\u2013" + blob.omitted[1] + " of " + blob.n +
        " are left out of this page (they are in the trace file).";
    }
    summary.textContent = text;

    var plotH = lanes.length * LANE_H;
    // the page brings an empty <svg> along: its namespace is the one to create marks in
    var svg = box.querySelector("svg.timeline-svg");
    var ns = svg.namespaceURI;
    var plotEnd = LABEL_W + bins * col, totalW = plotEnd + 12 + LABEL_ROOM;
    svg.setAttribute("width", String(totalW));
    svg.setAttribute("height", String(TOP + plotH + BOTTOM));
    svg.setAttribute("viewBox", "0 0 " + totalW + " " + (TOP + plotH + BOTTOM));
    box.appendChild(svg);

    function node(tag, attrs, content) {
      var n = document.createElementNS(ns, tag);
      for (var name in attrs) { n.setAttribute(name, String(attrs[name])); }
      if (content !== undefined) { n.textContent = content; }
      svg.appendChild(n);
      return n;
    }

    lanes.forEach(function (lane, n) {
      node("rect", { x: LABEL_W, y: TOP + n * LANE_H, width: bins * col, height: LANE_H,
                     "class": n % 2 ? "lane lane-odd" : "lane" });
      node("text", { x: LABEL_W - 8, y: TOP + n * LANE_H + LANE_H / 2 + 4, "class": "lane-label",
                     "text-anchor": "end" }, lane[1]);
    });
    // virtual time above the steps: labelled where it moved since the last label (a run whose
    // time stands still shows it once, and its steps below)
    var tMin = Infinity;
    binT.forEach(function (t) { tMin = Math.min(tMin, t); });
    var still = !(tMax > tMin);
    node("text", { x: LABEL_W - 8, y: TOP - 12, "class": "axis-title", "text-anchor": "end" },
         still ? "virtual time stood still: " + fmtAxisT(tMax) : "virtual time");
    node("text", { x: LABEL_W - 8, y: TOP + plotH + 20, "class": "axis-title", "text-anchor": "end" }, "step");
    var every = niceStep(span), lastT;
    for (var s = Math.ceil(lo / every) * every; s <= hi; s += every) {
      var bin = Math.floor((s - lo) / per), x = LABEL_W + (bin + 0.5) * col;
      node("line", { x1: x, x2: x, y1: TOP - 4, y2: TOP + plotH + 4, "class": "tick" });
      node("text", { x: x, y: TOP + plotH + 20, "class": "tick-label", "text-anchor": "middle" }, String(s));
      if (!still && binT[bin] !== undefined && fmtAxisT(binT[bin]) !== lastT) {
        lastT = fmtAxisT(binT[bin]);
        node("text", { x: x, y: TOP - 12, "class": "tick-label time-label", "text-anchor": "middle" }, lastT);
      }
    }

    // the spans: a band across the plot, a bar on its lane, its label on the bar
    spans.forEach(function (span) {
      var first = Math.floor((Math.max(span.from, lo) - lo) / per);
      var last = Math.floor((Math.min(span.to, hi) - lo) / per);
      var x0 = LABEL_W + first * col, w = Math.max(2, (last - first + 1) * col - 1);
      var y = TOP + row.get("episodes:" + span.row) * LANE_H;
      node("rect", { x: x0, y: TOP, width: w, height: plotH, "class": "span-band span-" + span.kind });
      var bar = node("rect", { x: x0, y: y + 2, width: w, height: LANE_H - 4,
                               "class": "span span-" + span.kind, "aria-label": span.label + ": " + span.note });
      var tip = document.createElementNS(ns, "title");
      tip.textContent = span.label + ": " + span.note + " (steps " + span.from + "\u2013" + span.to + ")";
      bar.appendChild(tip);
      node("text", { x: x0 + 3, y: y + LANE_H / 2 + 4, "class": "span-label" }, span.label);
      if (x0 + 3 + span.label.length * CHAR_W > totalW) {  // cannot show whole: the title does
        svg.lastChild.textContent = span.label.slice(0, Math.max(1, Math.floor((totalW - x0) / CHAR_W) - 2)) + "\u2026";
      }
    });

    var list = [], labels = [];
    cells.forEach(function (cell) {
      var first = cell.bin * per + lo, last = Math.min(hi, first + per - 1);
      var where = first === last ? "step " + first : "steps " + first + "\u2013" + last;
      var counts = new Map();
      cell.items.forEach(function (k) {
        var name = types[events[k][0]].name;
        counts.set(name, (counts.get(name) || 0) + 1);
      });
      var tally = [];
      counts.forEach(function (n, name) { tally.push(name + " \u00d7" + n); });
      var head = laneLabel.get(cell.lane) + ", " + where +
        " (t=" + fmtT(events[cell.items[0]][2]) + "s): " + cell.items.length + " event" +
        (cell.items.length === 1 ? "" : "s") + ", " + tally.join(", ") +
        (cell.errors ? " (" + cell.errors + " failed or stopped)" : "");
      var title = cell.items.length <= 5
        ? head + "\n" + cell.items.map(function (k) { return describe(types, events[k]); }).join("\n")
        : head;
      var rect = node("rect", {
        x: LABEL_W + cell.bin * col + 0.5, y: TOP + row.get(cell.lane) * LANE_H + 3,
        width: Math.max(1, col - 1), height: LANE_H - 6, tabindex: 0, role: "button",
        "class": "mark tone-" + TONES[cell.tone], "data-cell": list.length, "aria-label": head
      });
      var tip = document.createElementNS(ns, "title");
      tip.textContent = title;
      rect.appendChild(tip);
      list.push({ head: head, items: cell.items });
      if (LABELLED[cell.lane]) { labels.push(cell); }
    });

    // labels on the notable marks: right of the mark, in the empty cells before the lane's
    // next mark (or past the plot's end), where no earlier label is
    var ends = new Map(), next = new Map();
    cells.forEach(function (cell) {
      (next.get(cell.lane) || next.set(cell.lane, []).get(cell.lane)).push(cell.bin);
    });
    next.forEach(function (list) { list.sort(function (a, b) { return a - b; }); });
    labels.sort(function (a, b) { return a.bin - b.bin; }).forEach(function (cell) {
      var text = "";
      for (var k = 0; k < cell.items.length && !text; k++) {
        text = markLabel(types[events[cell.items[k]][0]], events[cell.items[k]]);
      }
      if (!text) { return; }
      var bins = next.get(cell.lane), after = bins[bins.indexOf(cell.bin) + 1];
      var x = LABEL_W + (cell.bin + 1) * col + 2;
      var room = (after === undefined ? totalW : LABEL_W + after * col) - x - 2;
      if (x < (ends.get(cell.lane) || 0) || text.length * CHAR_W > room) { return; }
      ends.set(cell.lane, x + text.length * CHAR_W + 6);
      node("text", { x: x, y: TOP + row.get(cell.lane) * LANE_H + LANE_H / 2 + 4,
                     "class": "mark-label" }, text);
    });

    var details = el("div", "event-details");
    details.appendChild(el("p", "muted", "Click a mark to list its events here."));
    box.appendChild(details);

    function select(rect) {
      var cell = list[Number(rect.getAttribute("data-cell"))];
      var chosen = svg.querySelector("rect.selected");
      if (chosen) { chosen.classList.remove("selected"); }
      rect.classList.add("selected");
      details.textContent = "";
      details.appendChild(el("p", "event-head", cell.head));
      cell.items.slice(0, MAX_LISTED).forEach(function (k) {
        details.appendChild(el("div", "event-line", describe(types, events[k])));
      });
      if (cell.items.length > MAX_LISTED) {
        details.appendChild(el("p", "muted", "\u2026 and " + (cell.items.length - MAX_LISTED) +
          " more events (see the trace file)"));
      }
    }
    svg.addEventListener("click", function (e) {
      var rect = e.target.closest && e.target.closest("rect.mark");
      if (rect) { select(rect); }
    });
    svg.addEventListener("keydown", function (e) {
      if ((e.key === "Enter" || e.key === " ") && e.target.classList && e.target.classList.contains("mark")) {
        e.preventDefault();
        select(e.target);
      }
    });

    var meta = el("details", "trace-meta");
    meta.appendChild(el("summary", "", "run metadata (seed, profile, budgets, planned faults)"));
    meta.appendChild(el("pre", "", JSON.stringify(blob.meta, null, 1)));
    box.appendChild(meta);
  }

  // ---- wiring --------------------------------------------------------------------------
  ["filter-outcome", "filter-profile", "filter-verdict"].forEach(function (id) {
    byId(id).addEventListener("change", applyFilters);
  });
  document.addEventListener("click", function (e) {
    var target = e.target;
    if (!target.closest) { return; }
    var button = target.closest("button");
    if (button && button.classList.contains("copy")) { copy(button); return; }
    if (button && button.classList.contains("expand")) { toggle(button); return; }
    var row = target.closest("tr.test");
    if (row && !window.getSelection().toString()) { toggle(row.querySelector("button.expand")); }
  });
  applyFilters();
})();

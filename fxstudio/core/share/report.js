/* fxstudio report: pan/zoom, collapse/expand, details, heat, compare colours.
 * Plain JavaScript written for this page (no library, no network): see
 * fxstudio/core/share/report.py's docstring for why.  It reads the inline SVG's semantic
 * structure (g.node[data-name...], g.group[data-module], g.edge[data-from][data-to]) and
 * the page's JSON (script#fx-data). */
(function () {
  "use strict";
  var data = {};
  var NS = "http://www.w3.org/2000/svg";
  var panes = {};

  function byName(list, key) {
    var out = {};
    (list || []).forEach(function (row) { out[row[key]] = row; });
    return out;
  }
  var profileNodes = {}, memoryNodes = {}, compare = null, valuesByRight = {};

  function text(el, s) { el.textContent = s; return el; }
  function fmtSeconds(s) {
    if (s === null || s === undefined) { return "–"; }
    if (s >= 1) { return s.toFixed(3) + " s"; }
    if (s >= 1e-3) { return (s * 1e3).toFixed(3) + " ms"; }
    return (s * 1e6).toFixed(1) + " µs";
  }
  function fmtBytes(n) {
    if (n === null || n === undefined) { return "–"; }
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return (i ? n.toFixed(1) : n.toFixed(0)) + " " + units[i];
  }

  function Pane(root, size) {
    var self = this;
    this.root = root;
    this.name = root.getAttribute("data-pane");
    this.svg = root.querySelector(".fx-view svg");
    this.details = root.querySelector(".fx-details");
    this.nodes = {};
    this.selected = null;
    this.moved = false;
    var all = this.svg.querySelectorAll("g.node");
    for (var i = 0; i < all.length; i++) { this.nodes[all[i].getAttribute("data-name")] = all[i]; }
    this.edges = Array.prototype.slice.call(this.svg.querySelectorAll("g.edge"));
    var vb = this.svg.viewBox && this.svg.viewBox.baseVal;
    if (!vb || !vb.width) {
      var bb = this.svg.getBBox();
      this.svg.setAttribute("viewBox", [bb.x, bb.y, bb.width, bb.height].join(" "));
      vb = this.svg.viewBox.baseVal;
    }
    this.home = [vb.x, vb.y, vb.width, vb.height];
    this.drawnHome = this.home.slice();  /* (the home shrinks as collapsed modules close up) */
    var name = this.svg.querySelector("g.node text.name");
    this.namePx = name ? name.getAttribute("font-size") : "11";
    /* the drawing keeps its natural size and viewBox; the view moves it by a CSS transform,
     * which the browser paints without laying the drawing out again */
    this.svg.setAttribute("width", vb.width);
    this.svg.setAttribute("height", vb.height);
    this.frame = root.querySelector(".fx-view");
    this.size = size || this.frame.getBoundingClientRect();
    this.view = this.start(this.size);
    this.show();
    window.addEventListener("resize", function () {
      self.size = self.frame.getBoundingClientRect();
      self.show();
    });
    this.svg.addEventListener("wheel", function (e) { self.wheel(e); }, { passive: false });
    this.svg.addEventListener("pointerdown", function (e) { self.down(e); });
    this.svg.addEventListener("click", function (e) { self.click(e); });
    root.querySelectorAll("[data-fx]").forEach(function (b) {
      b.addEventListener("click", function () { self.command(b.getAttribute("data-fx")); });
    });
    var heat = root.querySelector("select.fx-heat");
    if (heat) { heat.addEventListener("change", function () { self.heat(heat.value); }); }
  }

  /* the first view: the whole graph when it is readable so; else its top, as wide as fits
   * at no more than natural size (a tall graph of thousands of nodes starts legible) */
  Pane.prototype.start = function (size) {
    var r = size || this.size, h = this.home;
    if (!r.width || !r.height) { return h.slice(); }
    var fit = Math.min(r.width / h[2], r.height / h[3]);
    if (fit > 1.5) {  /* a small graph: at 1.5x, centred, not blown up to the pane */
      var cw = r.width / 1.5, ch = r.height / 1.5;
      return [h[0] + (h[2] - cw) / 2, h[1] + (h[3] - ch) / 2, cw, ch];
    }
    if (fit >= 0.45) { return h.slice(); }
    var s = Math.max(fit, Math.min(1, r.width / h[2]));
    var w = r.width / s, hh = r.height / s;
    return [h[0] + (h[2] - w) / 2, h[1], w, hh];
  };
  Pane.prototype.show = function () {
    var v = this.view, h = this.home, W = this.size.width, H = this.size.height;
    var s = Math.min(W / v[2], H / v[3]);
    this.scale = s;
    this.tx = (W - v[2] * s) / 2 - (v[0] - h[0]) * s;
    this.ty = (H - v[3] * s) / 2 - (v[1] - h[1]) * s;
    this.svg.style.transform = "translate(" + this.tx + "px," + this.ty + "px) scale(" + s + ")";
    this.svg.setAttribute("data-fx-view", v.join(" "));
  };
  Pane.prototype.toSvg = function (clientX, clientY) {
    var r = this.frame.getBoundingClientRect();
    return {
      x: this.home[0] + (clientX - r.left - this.tx) / this.scale,
      y: this.home[1] + (clientY - r.top - this.ty) / this.scale
    };
  };
  Pane.prototype.wheel = function (e) {
    e.preventDefault();
    var f = Math.exp(e.deltaY * 0.0015), p = this.toSvg(e.clientX, e.clientY), v = this.view;
    f = Math.min(Math.max(f, 0.5), 2);
    var w = v[2] * f, h = v[3] * f;
    if (w < 20 || w > this.home[2] * 20) { return; }
    this.view = [p.x - (p.x - v[0]) * f, p.y - (p.y - v[1]) * f, w, h];
    this.show();
  };
  Pane.prototype.down = function (e) {
    if (e.button !== 0) { return; }
    var self = this, x0 = e.clientX, y0 = e.clientY, start = this.view.slice();
    var scale = 1 / this.scale;
    this.moved = false;
    function move(ev) {
      var dx = ev.clientX - x0, dy = ev.clientY - y0;
      if (!self.moved && Math.abs(dx) + Math.abs(dy) < 4) { return; }
      self.moved = true;
      self.svg.classList.add("fx-panning");
      self.view = [start[0] - dx * scale, start[1] - dy * scale, start[2], start[3]];
      self.show();
    }
    function up() {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      self.svg.classList.remove("fx-panning");
    }
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  };
  Pane.prototype.click = function (e) {
    if (this.moved) { this.moved = false; return; }
    var node = e.target.closest("g.node");
    if (node && !node.closest("g.group.fx-collapsed")) { this.select(node.getAttribute("data-name"), true); return; }
    var group = e.target.closest("g.group");
    if (group) { this.toggle(group); }
  };

  /* collapse: the group's members hidden (CSS: .fx-collapsed hides its nodes, groups and
   * edges), one box in their place as the canvas draws a collapsed module -- its label, the
   * size the drawing gives it (data-box) -- and the drawing closed up around it (relayout). */
  Pane.prototype.toggle = function (group, alone) {
    if (group.classList.contains("fx-collapsed")) {
      group.classList.remove("fx-collapsed");
      var box = group.querySelector(":scope > .fx-box");
      if (box) { box.parentNode.removeChild(box); }
    } else {
      var n = group.querySelectorAll("g.node").length;
      var label = group.getAttribute("data-module") || "module";
      if (group.getAttribute("data-type")) { label += " : " + group.getAttribute("data-type"); }
      var g = document.createElementNS(NS, "g");
      g.setAttribute("class", "fx-box");
      var tip = document.createElementNS(NS, "title");
      text(tip, (group.getAttribute("data-module") || "module") + " — " + n + " nodes (click to expand)");
      var r = document.createElementNS(NS, "rect");
      r.setAttribute("rx", 8);
      var t = document.createElementNS(NS, "text");
      t.setAttribute("text-anchor", "middle");
      t.setAttribute("dominant-baseline", "central");
      t.setAttribute("font-size", this.namePx);
      text(t, "▸ " + label);
      g.appendChild(tip); g.appendChild(r); g.appendChild(t);
      group.appendChild(g);
      group.classList.add("fx-collapsed");
    }
    if (alone !== false) { this.relayout(); }
  };
  Pane.prototype.outerCollapsed = function (el) {
    var found = null;
    for (var p = el.parentNode; p && p !== this.svg; p = p.parentNode) {
      if (p.classList && p.classList.contains("fx-collapsed")) { found = p; }
    }
    return found;
  };
  function num(el, name) { return el ? parseFloat(el.getAttribute(name)) || 0 : 0; }
  function firstPoint(s) {
    var m = /(-?[\d.]+)[ ,](-?[\d.]+)/.exec(s || "");
    return m ? [parseFloat(m[1]), parseFloat(m[2])] : [0, 0];
  }
  /* Where everything was drawn, read once: each node's box, each frame, each edge's ends
   * and the run of edges it is drawn in (g.edge-run: a run whose edges all move alike moves
   * as one, so closing a 10,000-node drawing up writes a few hundred transforms). */
  Pane.prototype.drawn = function () {
    if (this.at) { return this.at; }
    var at = { nodes: [], groups: [], runs: [] }, self = this;
    Object.keys(this.nodes).forEach(function (name) {
      var el = self.nodes[name], r = el.querySelector(":scope > rect.box");
      el.fxAt = { x: num(r, "x"), y: num(r, "y"), w: num(r, "width"), h: num(r, "height"), name: name };
      el.fxMoved = "0 0";
      at.nodes.push(el);
    });
    this.svg.querySelectorAll("g.group").forEach(function (g) {
      var r = g.querySelector(":scope > rect.frame");
      if (!r) { return; }
      var box = (g.getAttribute("data-box") || "110 40").split(" ").map(parseFloat);
      g.fxAt = { x: num(r, "x"), y: num(r, "y"), w: num(r, "width"), h: num(r, "height"),
                 bw: box[0], bh: box[1], frame: r, height: num(r, "height") };
      g.fxMoved = "0 0";
      at.groups.push(g);
    });
    var runs = new Map();
    this.edges.forEach(function (e) {
      var path = e.querySelector("path"), arrow = e.querySelector("polygon");
      var d = path ? path.getAttribute("d") : "";
      e.fxAt = { d: d, start: firstPoint(d.slice(1)), end: firstPoint(arrow && arrow.getAttribute("points")),
                 stub: e.hasAttribute("data-stub"), path: path, arrow: arrow, inside: false,
                 from: self.nodes[e.getAttribute("data-from")], to: self.nodes[e.getAttribute("data-to")] };
      e.fxMoved = "0 0";
      if (arrow) { arrow.fxMoved = "0 0"; }
      var run = e.parentNode.classList.contains("edge-run") ? e.parentNode : e;
      if (!runs.has(run)) {
        runs.set(run, { el: run === e ? null : run, edges: [] });
        run.fxMoved = "0 0";
      }
      runs.get(run).edges.push(e);
    });
    runs.forEach(function (run) { at.runs.push(run); });
    this.at = at;
    return at;
  };
  function moveY(el, dx, dy) {  /* (written only when it changes) */
    var key = dx + " " + dy;
    if (el.fxMoved === key) { return; }
    el.fxMoved = key;
    if (dx || dy) { el.setAttribute("transform", "translate(" + dx + "," + dy + ")"); }
    else { el.removeAttribute("transform"); }
  }
  /* The collapsed modules' boxes placed, and the drawing closed up below each: what lies
   * below a box moves up by what the module's frame was taller than the box, where nothing
   * beside the module shares its height (a branch beside it: the box stays, the rest too).
   * Everything is placed again from where it was drawn, so any order of collapse and expand
   * comes back to the same picture; a group moves as one (its members with it), so only
   * what moves apart from its group is written. */
  Pane.prototype.relayout = function () {
    var at = this.drawn(), self = this, EPS = 0.5, stamp = (this.stamp || 0) + 1;
    this.stamp = stamp;
    var outer = at.groups.filter(function (g) {
      return g.classList.contains("fx-collapsed") && self.outerCollapsed(g) === null;
    });
    outer.forEach(function (g) {  /* what a box hides is left where it is (not drawn) */
      g.querySelectorAll("g.node, g.group").forEach(function (el) { el.fxHidden = stamp; el.fxIn = g; });
    });
    function shown(el) { return el.fxHidden !== stamp; }
    function boxOf(el) { return el && !shown(el) ? el.fxIn : null; }
    var nodes = at.nodes.filter(shown), groups = at.groups.filter(shown);
    var cuts = [];
    outer.forEach(function (g) {
      var a = g.fxAt, y0 = a.y, y1 = a.y + a.h;
      function beside(el) {
        var b = el.fxAt;
        return el !== g && !el.contains(g) && b.y < y1 - EPS && b.y + b.h > y0 + EPS;
      }
      if (a.h > a.bh && !nodes.some(beside) && !groups.some(beside)) { cuts.push([y1, a.h - a.bh]); }
    });
    cuts.sort(function (p, q) { return p[0] - q[0]; });
    function shift(y) {  /* how far up what was drawn at y moves */
      var s = 0;
      for (var i = 0; i < cuts.length && cuts[i][0] <= y + EPS; i++) { s += cuts[i][1]; }
      return s;
    }
    var shifts = this.shifts = {}, boxes = this.boxes = {};
    /* each element moved by its shift less what its group's moving already gave it */
    (function place(parent, moved) {
      for (var c = parent.firstElementChild; c; c = c.nextElementSibling) {
        var cls = c.classList;
        if (cls.contains("node")) {
          var s = shift(c.fxAt.y);
          shifts[c.fxAt.name] = s;
          moveY(c, 0, moved - s);
        } else if (cls.contains("group") && c.fxAt) {
          var a = c.fxAt, top = shift(a.y);
          moveY(c, 0, moved - top);
          if (cls.contains("fx-collapsed")) {
            var box = c.querySelector(":scope > .fx-box");
            if (box) { boxes[c.getAttribute("data-module")] = placeBox(box, a, top); }
            continue;
          }
          var h = a.h - (shift(a.y + a.h) - top);  /* (the frame moves with its group) */
          if (a.height !== h) { a.height = h; a.frame.setAttribute("height", h); }
          place(c, top);
        }
      }
    })(this.svg.querySelector("g.graph") || this.svg, 0);
    at.runs.forEach(function (run) {
      var common = null;
      run.edges.forEach(function (e) {
        var f = e.fxAt, a = f.from, b = f.to, ga = boxOf(a), gb = boxOf(b);
        var inside = ga !== null && ga === gb;
        if (inside !== f.inside) { f.inside = inside; e.classList.toggle("fx-inside", inside); }
        f.toBox = gb ? boxes[gb.getAttribute("data-module")] : null;
        f.fromBox = ga ? boxes[ga.getAttribute("data-module")] : null;
        f.sa = a ? shift(a.fxAt.y) : 0;
        f.sb = b ? shift(b.fxAt.y) : 0;
        f.kept = !inside && !f.stub && !f.fromBox && !f.toBox && f.sa === f.sb;
        if (f.kept && common === null) { common = f.sa; }
      });
      common = run.el ? common || 0 : 0;
      if (run.el) { moveY(run.el, 0, -common); }
      run.edges.forEach(function (e) { edgePlaced(e, common); });
    });
    this.home[3] = this.drawnHome[3] - shift(Infinity);
  };
  /* a collapsed module's box: the size the drawing gives it, centred where its frame was, at
   * its frame's top (in its group's units: the group moved up by ``top``); where it shows */
  function placeBox(box, a, top) {
    var cx = a.x + a.w / 2, r = box.querySelector("rect"), t = box.querySelector("text");
    r.setAttribute("x", cx - a.bw / 2); r.setAttribute("y", a.y);
    r.setAttribute("width", a.bw); r.setAttribute("height", a.bh);
    t.setAttribute("x", cx); t.setAttribute("y", a.y + a.bh / 2);
    return { x: cx - a.bw / 2, y: a.y - top, w: a.bw, h: a.bh };
  }
  /* an edge in a run moved up by ``common``: its route kept and moved with both ends, or
   * drawn again from its source (or the box holding it) to its target (or the box) */
  function edgePlaced(e, common) {
    var f = e.fxAt, path = f.path, arrow = f.arrow, end = f.end;
    if (f.inside) { return; }  /* (not drawn: where it was is kept) */
    var to = f.toBox, from = f.fromBox;
    var ex = to ? to.x + to.w / 2 : end[0], ey = to ? to.y : end[1] - f.sb;
    if (f.stub) { moveY(e, ex - end[0], ey - end[1] + common); return; }
    if (f.kept) {
      if (f.redrawn) { f.redrawn = false; path.setAttribute("d", f.d); moveY(arrow, 0, 0); }
      moveY(e, 0, common - f.sa);
      return;
    }
    moveY(e, 0, common);
    var sx = from ? from.x + from.w / 2 : f.start[0], sy = from ? from.y + from.h : f.start[1] - f.sa;
    var mid = (sy + ey) / 2;
    f.redrawn = true;
    path.setAttribute("d", "M" + sx + "," + sy + "C" + sx + "," + mid + " " + ex + "," + mid + " " + ex + "," + ey);
    moveY(arrow, ex - end[0], ey - end[1]);
  }
  Pane.prototype.command = function (what) {
    var self = this;
    if (what === "fit") { this.view = this.home.slice(); this.show(); return; }
    if (what === "top") { this.view = this.start(); this.show(); return; }
    var groups = Array.prototype.slice.call(this.svg.querySelectorAll("g.group"));
    if (what === "expand") {
      groups.forEach(function (g) { if (g.classList.contains("fx-collapsed")) { self.toggle(g, false); } });
    } else if (what === "collapse") {
      groups.forEach(function (g) {
        var top = !g.parentNode.closest || !g.parentNode.closest("g.group");
        if (top && !g.classList.contains("fx-collapsed")) { self.toggle(g, false); }
      });
    }
    this.relayout();
  };

  Pane.prototype.row = function (table, key, value) {
    if (value === null || value === undefined || value === "") { return; }
    var tr = document.createElement("tr");
    tr.appendChild(text(document.createElement("th"), key));
    tr.appendChild(text(document.createElement("td"), String(value)));
    table.appendChild(tr);
  };
  Pane.prototype.select = function (name, andPartner) {
    var node = this.nodes[name];
    if (!node) { return false; }
    if (this.selected) { this.selected.classList.remove("fx-selected"); }
    this.selected = node;
    node.classList.add("fx-selected");
    var d = this.details;
    d.textContent = "";
    d.appendChild(text(document.createElement("h3"), name));
    var t = document.createElement("table");
    var a = function (k) { return node.getAttribute("data-" + k); };
    this.row(t, "op", a("op"));
    this.row(t, "target", a("target"));
    this.row(t, "shape", a("shape"));
    this.row(t, "dtype", a("dtype"));
    this.row(t, "module", a("module"));
    this.row(t, "source", a("source"));
    if (this.name === "main") {
      var p = profileNodes[name], m = memoryNodes[name];
      if (p) { this.row(t, "time", fmtSeconds(p.time_s) + " (" + (100 * p.share).toFixed(1) + "%)"); this.row(t, "bound", p.bound); }
      if (m) { this.row(t, "bytes", fmtBytes(m.bytes)); this.row(t, "live after", fmtBytes(m.live_bytes)); }
    }
    if (compare && this.name !== "main") {
      var status = node.getAttribute("data-fx-status");
      this.row(t, "compare", status || "same");
      var v = this.name === "right" ? valuesByRight[name] : null;
      if (v && v.max_rel_diff !== null && v.max_rel_diff !== undefined) {
        this.row(t, "value diff", "max abs " + v.max_abs_diff.toExponential(2) + ", rel " + v.max_rel_diff.toExponential(2));
      }
    }
    d.appendChild(t);
    if (andPartner && compare && this.name !== "main") {
      var other = panes[this.name === "left" ? "right" : "left"];
      var partners = (node.getAttribute("data-fx-pair") || "").split(" ").filter(Boolean);
      if (other && partners.length) { other.select(partners[0], false); other.center(partners[0]); }
    }
    return true;
  };
  Pane.prototype.center = function (name) {
    var node = this.nodes[name];
    if (!node) { return; }
    var inside = this.outerCollapsed(node), bb;
    if (inside && this.boxes) {  /* hidden in a collapsed module: its box */
      var b = this.boxes[inside.getAttribute("data-module")];
      bb = { x: b.x, y: b.y, width: b.w, height: b.h };
    } else {  /* (in the drawing's units, less how far it moved up; its groups carry no transform) */
      bb = node.getBBox();
      bb = { x: bb.x, y: bb.y - ((this.shifts || {})[name] || 0), width: bb.width, height: bb.height };
    }
    var pt = { x: bb.x + bb.width / 2, y: bb.y + bb.height / 2 };
    var w = Math.min(this.view[2], this.home[2]), h = Math.min(this.view[3], this.home[3]);
    this.view = [pt.x - w / 2, pt.y - h / 2, w, h];
    this.show();
  };
  Pane.prototype.heat = function (kind) {
    var values = {}, max = 0, name;
    if (kind === "profile") {
      for (name in profileNodes) { values[name] = profileNodes[name].time_s || 0; }
    } else if (kind === "memory") {
      for (name in memoryNodes) { values[name] = memoryNodes[name].bytes || 0; }
    }
    for (name in values) { max = Math.max(max, values[name]); }
    for (name in this.nodes) {
      var el = this.nodes[name], v = values[name];
      if (v === undefined || max <= 0) {
        el.classList.remove("fx-heat");
        el.style.removeProperty("--fx-heat");
        continue;
      }
      var f = Math.sqrt(v / max);  /* small values stay visible beside the largest */
      var hue = 55 - 55 * f, light = 92 - 28 * f;  /* the text stays readable */
      el.style.setProperty("--fx-heat", "hsl(" + hue.toFixed(0) + ",95%," + light.toFixed(0) + "%)");
      el.classList.add("fx-heat");
    }
  };

  /* compare: each side's nodes marked removed / added / changed, the first divergence ringed,
   * and each node knows its partner on the other side (a click selects both). */
  function markCompare() {
    var left = panes.left, right = panes.right;
    if (!compare || !left || !right) { return; }
    function list(x) { return typeof x === "string" ? [x] : x; }
    function mark(pane, names, cls, partner) {
      names.forEach(function (n) {
        var el = pane.nodes[n];
        if (!el) { return; }
        if (cls) { el.classList.add("fx-" + cls); el.setAttribute("data-fx-status", cls); }
        if (partner) { el.setAttribute("data-fx-pair", partner.join(" ")); }
      });
    }
    compare.removed.forEach(function (n) { mark(left, [n], "removed"); });
    compare.added.forEach(function (n) { mark(right, [n], "added"); });
    compare.pairs.forEach(function (p) {
      var l = list(p.left), r = list(p.right), cls = p.status === "changed" ? "changed" : "";
      mark(left, l, cls, r);
      mark(right, r, cls, l);
    });
    var first = compare.values && compare.values.first_difference;
    if (first && right.nodes[first]) { right.nodes[first].classList.add("fx-first"); }
  }

  function goto(name) {
    var order = compare && !panes.main ? ["right", "left"] : ["main", "right", "left"];
    for (var i = 0; i < order.length; i++) {
      var pane = panes[order[i]];
      if (pane && pane.nodes[name]) {
        pane.root.scrollIntoView({ block: "start" });
        pane.select(name, true);
        pane.center(name);
        return;
      }
    }
  }

  /* A large report holds its drawings and JSON gzip-compressed (base64): the browser's own
   * DecompressionStream inflates them, in memory -- no request. */
  function content(el) {
    if (el.getAttribute("data-encoding") !== "gzip-base64") {
      return Promise.resolve(el.textContent);
    }
    var raw = atob(el.textContent.trim()), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  function start(json) {
    data = JSON.parse(json || "{}");
    profileNodes = byName((data.profile || {}).nodes, "name");
    memoryNodes = byName((data.memory || {}).nodes, "name");
    compare = data.compare || null;
    valuesByRight = compare && compare.values ? byName(compare.values.nodes, "right") : {};
    var packed = Array.prototype.slice.call(document.querySelectorAll(".fx-view > script.fx-svg"));
    return Promise.all(packed.map(content)).then(function (svgs) {
      /* each packed pane's size, measured before its drawing is in: its first view is set
       * before the browser lays the drawing out (once, not again for another view) */
      var sizes = packed.map(function (el) { return el.parentNode.getBoundingClientRect(); });
      packed.forEach(function (el, i) {
        var view = el.parentNode;
        view.setAttribute("data-fx-size", i);
        view.removeChild(el);
        view.insertAdjacentHTML("afterbegin", svgs[i]);
      });
      document.querySelectorAll(".fx-pane").forEach(function (root) {
        var view = root.querySelector(".fx-view"), i = view.getAttribute("data-fx-size");
        var pane = new Pane(root, i === null ? null : sizes[+i]);
        panes[pane.name] = pane;
      });
      markCompare();
      document.querySelectorAll("[data-fx-goto]").forEach(function (a) {
        a.addEventListener("click", function (e) { e.preventDefault(); goto(a.getAttribute("data-fx-goto")); });
      });
      document.body.setAttribute("data-fx-ready", "1");
      window.fxReport = { panes: panes, data: data };
    });
  }

  content(document.getElementById("fx-data")).then(start).catch(function (err) {
    var p = document.createElement("p");
    p.className = "fx-failed";
    p.textContent = "This report could not be shown (" + err + "): open it in a current " +
      "browser (Chrome/Edge 80+, Firefox 113+, Safari 16.4+).";
    document.body.insertBefore(p, document.body.firstChild);
    throw err;
  });
})();

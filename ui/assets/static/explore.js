// jikken ui: a run's exploration views. The rows come from /api/runs/RUN/explore, which filters
// them with the conditions of 'jikken results --where' (the server parses them; this file never
// does). Everything from the store goes into the page as text or as numbers: SVG is built
// with createElementNS and setAttribute of numbers, labels with textContent.
"use strict";

(function () {
  const NS = "http://www.w3.org/2000/svg";
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];

  function node(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  function html(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // A cell of the results table as a number: its text as jikken writes it ("+Inf", "NaN").
  function num(cell) {
    if (cell === undefined || cell === "") return NaN;
    if (cell === "+Inf" || cell === "Inf") return Infinity;
    if (cell === "-Inf") return -Infinity;
    return Number(cell);
  }

  function fmt(v) {
    if (!isFinite(v)) return String(v);
    return String(Number(v.toPrecision(4)));
  }

  // A column as an axis: numbers when every filled cell is one, else its distinct values in
  // order, placed at 0, 1, 2, ...
  function axisOf(data, name) {
    const i = data.columns.indexOf(name);
    const cells = data.rows.map(r => (i >= 0 ? r[i] : ""));
    const filled = cells.filter(c => c !== "");
    if (filled.every(c => !isNaN(num(c)) || c === "NaN")) {
      let vals = cells.map(num);
      let fin = vals.filter(isFinite);
      // Positive values spread over two decades or more are placed on a log scale, as a
      // learning rate's grid is laid out.
      const log = fin.length > 1 && fin.every(v => v > 0) && Math.max(...fin) / Math.min(...fin) >= 100;
      if (log) { vals = vals.map(v => (v > 0 ? Math.log10(v) : NaN)); fin = vals.filter(isFinite); }
      let lo = Math.min(...fin), hi = Math.max(...fin);
      if (!fin.length) { lo = 0; hi = 1; }
      if (lo === hi) { lo -= 0.5; hi += 0.5; }
      return { name: log ? name + " (log)" : name, kind: "num", log, vals, lo, hi };
    }
    const cats = Array.from(new Set(filled)).sort();
    const vals = cells.map(c => (c === "" ? NaN : cats.indexOf(c)));
    return { name, kind: "cat", cats, vals, lo: -0.5, hi: Math.max(cats.length - 0.5, 0.5) };
  }

  function ticks(ax) {
    if (ax.kind === "cat") return ax.cats.slice(0, 12).map((c, i) => [i, c]);
    const out = [];
    for (let k = 0; k <= 4; k++) { const v = ax.lo + (ax.hi - ax.lo) * k / 4; out.push([v, value(ax, v)]); }
    return out;
  }

  // value writes a position on an axis as the value it stands for.
  function value(ax, v) {
    if (ax.kind === "cat") return ax.cats[v];
    return fmt(ax.log ? Math.pow(10, v) : v);
  }

  function median(xs) {
    const s = xs.filter(isFinite).sort((a, b) => a - b);
    if (!s.length) return NaN;
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  function explore(sec) {
    const where = document.getElementById("x-where");
    const group = document.getElementById("x-group");
    const xSel = document.getElementById("x-x"), ySel = document.getElementById("x-y");
    const err = document.getElementById("x-error");
    const shown = document.getElementById("x-shown");
    const scatter = document.getElementById("x-scatter");
    const parallel = document.getElementById("x-parallel");
    const groups = document.getElementById("x-groups");
    let data = null;

    function fillAxes() {
      const names = data.params.concat(data.metrics);
      for (const [sel, pick] of [[xSel, data.params[0] || names[0]], [ySel, data.metrics[0] || names[1] || names[0]]]) {
        const keep = sel.value;
        sel.replaceChildren();
        for (const n of names) { const o = html("option", n); o.value = n; sel.appendChild(o); }
        sel.value = names.includes(keep) ? keep : pick || "";
      }
    }

    // Groups by the cell's text, in numeric order when every value is a number.
    function colours() {
      const i = group.value ? data.columns.indexOf(group.value) : -1;
      if (i < 0) return { keys: ["all"], idx: data.rows.map(() => 0), c: data.rows.map(() => palette[0]) };
      const cells = data.rows.map(r => r[i]);
      const keys = Array.from(new Set(cells));
      if (keys.every(k => k !== "" && !isNaN(num(k)))) keys.sort((a, b) => num(a) - num(b)); else keys.sort();
      const idx = cells.map(c => keys.indexOf(c));
      return { keys, idx, c: idx.map(j => palette[j % palette.length]) };
    }

    function drawScatter(col) {
      scatter.replaceChildren();
      if (!xSel.value || !ySel.value) return;
      const W = 520, H = 380, L = 64, R = 12, T = 12, B = 44;
      scatter.setAttribute("viewBox", "0 0 " + W + " " + H);
      const ax = axisOf(data, xSel.value), ay = axisOf(data, ySel.value);
      const sx = v => L + (v - ax.lo) / (ax.hi - ax.lo) * (W - L - R);
      const sy = v => H - B - (v - ay.lo) / (ay.hi - ay.lo) * (H - T - B);
      scatter.appendChild(node("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
      for (const [v, label] of ticks(ax)) scatter.appendChild(node("text", { x: sx(v), y: H - B + 14, "text-anchor": "middle", class: "tick" }, label));
      for (const [v, label] of ticks(ay)) scatter.appendChild(node("text", { x: L - 4, y: sy(v) + 4, "text-anchor": "end", class: "tick" }, label));
      scatter.appendChild(node("text", { x: L + (W - L - R) / 2, y: H - 6, "text-anchor": "middle", class: "axis" }, ax.name));
      scatter.appendChild(node("text", { x: 12, y: T + (H - T - B) / 2, "text-anchor": "middle", class: "axis", transform: "rotate(-90 12 " + (T + (H - T - B) / 2) + ")" }, ay.name));
      const ti = data.columns.indexOf("trial");
      data.rows.forEach((r, k) => {
        const x = ax.vals[k], y = ay.vals[k];
        if (!isFinite(x) || !isFinite(y)) return;
        // Categories spread a little sideways, so that equal values stay visible as a cloud.
        const jitter = ax.kind === "cat" ? ((k * 0.618) % 1 - 0.5) * 0.5 : 0;
        const c = node("circle", { cx: sx(x + jitter), cy: sy(y), r: 3, fill: col.c[k], class: "pt" });
        c.appendChild(node("title", {}, r[ti] + ": " + ax.name + " " + value(ax, x) + ", " + ay.name + " " + value(ay, y)));
        scatter.appendChild(c);
      });
    }

    function drawParallel(col) {
      parallel.replaceChildren();
      const axes = data.params.concat(data.metrics).map(n => axisOf(data, n)).filter(a => a.vals.some(isFinite));
      if (axes.length < 2) return;
      const gap = 110, W = Math.max(520, 60 + gap * (axes.length - 1) + 60), H = 380, T = 30, B = 24;
      parallel.setAttribute("viewBox", "0 0 " + W + " " + H);
      const xs = axes.map((_, j) => 60 + j * ((W - 120) / (axes.length - 1)));
      const sy = (a, v) => H - B - (v - a.lo) / (a.hi - a.lo) * (H - T - B);
      data.rows.forEach((_, k) => {
        let d = "", pen = false;
        axes.forEach((a, j) => {
          const v = a.vals[k];
          if (!isFinite(v)) { pen = false; return; }
          d += (pen ? " L " : " M ") + xs[j].toFixed(1) + " " + sy(a, v).toFixed(1);
          pen = true;
        });
        if (d) parallel.appendChild(node("path", { d: d.trim(), stroke: col.c[k], class: "pc-line" }));
      });
      axes.forEach((a, j) => {
        parallel.appendChild(node("line", { x1: xs[j], x2: xs[j], y1: T, y2: H - B, class: "pc-axis" }));
        parallel.appendChild(node("text", { x: xs[j], y: T - 10, "text-anchor": "middle", class: "axis" }, a.name));
        const t = ticks(a);
        for (const [v, label] of a.kind === "cat" ? t : [t[0], t[t.length - 1]]) {
          parallel.appendChild(node("text", { x: xs[j] + 4, y: sy(a, v) + 4, class: "tick" }, label));
        }
      });
    }

    function drawGroups(col) {
      groups.replaceChildren();
      const head = html("tr");
      head.appendChild(html("th", group.value || "trials"));
      head.appendChild(html("th", "n"));
      for (const m of data.metrics) head.appendChild(html("th", "median " + m, "metric"));
      const thead = html("thead"); thead.appendChild(head); groups.appendChild(thead);
      const cols = data.metrics.map(m => data.columns.indexOf(m));
      const body = html("tbody");
      col.keys.forEach((key, gi) => {
        const idx = col.idx.map((j, k) => (j === gi ? k : -1)).filter(k => k >= 0);
        const tr = html("tr");
        const name = html("td", key === "" ? "(none)" : key);
        if (group.value) { const sw = html("span", null, "swatch"); sw.style.background = palette[gi % palette.length]; name.prepend(sw); }
        tr.appendChild(name);
        tr.appendChild(html("td", idx.length, "n"));
        for (const i of cols) {
          const m = median(idx.map(k => num(data.rows[k][i])));
          tr.appendChild(html("td", isNaN(m) ? "" : fmt(m), "n"));
        }
        body.appendChild(tr);
      });
      groups.appendChild(body);
    }

    // The trials table shows the rows the conditions keep.
    function syncTable() {
      const table = document.getElementById("trials");
      if (!table) return;
      const ti = data.columns.indexOf("trial");
      const kept = new Set(data.rows.map(r => r[ti]));
      for (const tr of table.tBodies[0].rows) if (tr.dataset.trial) tr.classList.toggle("xhidden", !kept.has(tr.dataset.trial));
    }

    function draw() {
      const col = colours();
      drawScatter(col);
      drawParallel(col);
      drawGroups(col);
      syncTable();
      shown.textContent = data.rows.length === data.total ? data.total + " trials" : data.rows.length + " of " + data.total + " trials meet the conditions";
    }

    async function load() {
      const u = new URL(sec.dataset.api, location.href);
      // Conditions are separated by commas, each one of 'jikken results --where'.
      for (const c of where.value.split(",")) if (c.trim()) u.searchParams.append("where", c.trim());
      const res = await fetch(u, { cache: "no-store" });
      const v = await res.json();
      if (!res.ok) {
        err.textContent = v.error || String(res.status);
        err.hidden = false;
        return;
      }
      err.hidden = true;
      data = v;
      fillAxes();
      draw();
    }

    document.getElementById("x-form").addEventListener("submit", e => { e.preventDefault(); load().catch(e => { err.textContent = String(e); err.hidden = false; }); });
    where.addEventListener("change", () => load().catch(() => {}));
    for (const s of [group, xSel, ySel]) s.addEventListener("input", () => { if (data) draw(); });
    load().catch(e => { err.textContent = String(e); err.hidden = false; });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const sec = document.getElementById("explore");
    if (sec) explore(sec);
  });
})();

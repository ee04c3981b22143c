// jikken ui: filters, sorting and live updates. Every value from the store is put in the page
// with textContent, never as HTML: trials print and name what they like.
"use strict";

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function fmtMetric(v) {
  if (typeof v === "string") return v === "Infinity" ? "Inf" : v === "-Infinity" ? "-Inf" : v;
  if (typeof v !== "number") return "";
  return String(Number(v.toPrecision(6)));
}

// metricNumber reads a metric as the server sends it, infinities as the strings "Infinity" and
// "-Infinity", to sort by: infinities sort as numbers, NaN (no order) as a missing value.
function metricNumber(v) {
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  return typeof v === "number" ? v : null;
}

// fmtDuration writes milliseconds as the server does: 850ms, 12.3s, 4m05s, 2h10m.
function fmtDuration(ms) {
  if (!(ms >= 0)) return "";
  if (ms < 1000) return Math.floor(ms) + "ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + "s";
  const pad = n => String(Math.floor(n)).padStart(2, "0");
  if (s < 3600) return Math.floor(s / 60) + "m" + pad(s % 60) + "s";
  return Math.floor(s / 3600) + "h" + pad((s % 3600) / 60) + "m";
}

function badge(status) {
  const b = el("span", status, "badge s-" + status);
  return b;
}

const order = ["succeeded", "pruned", "eliminated", "failed", "running", "pending", "skipped", "killed"];

function countsText(counts) {
  const parts = [];
  for (const s of order) if (counts && counts[s] > 0) parts.push(counts[s] + " " + s);
  return parts.join(" · ");
}

function drawProgress(bar, counts, total) {
  if (!bar) return;
  bar.replaceChildren();
  if (!total) return;
  for (const s of order) {
    const n = (counts && counts[s]) || 0;
    if (!n || s === "pending") continue;
    const part = el("span", null, "p-" + s);
    part.style.width = (100 * n / total) + "%";
    part.title = n + " " + s;
    bar.appendChild(part);
  }
}

// ---- the run page: a table of trials kept in step with /api/runs/RUN ----

function runPage(table) {
  const run = table.dataset.run;
  let params = JSON.parse(table.dataset.params || "[]");
  let metrics = JSON.parse(table.dataset.metrics || "[]");
  let sortKey = null, sortDir = 1, rows = null;

  const text = document.getElementById("f-text");
  const status = document.getElementById("f-status");
  const selects = Array.from(document.querySelectorAll("select.f-param"));
  const shown = document.getElementById("f-shown");

  // Filters live in the URL's fragment so a filtered view can be shared.
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get("q")) text.value = h.get("q");
  if (h.get("status")) status.value = h.get("status");
  for (const s of selects) if (h.get("p." + s.dataset.param)) s.value = h.get("p." + s.dataset.param);

  function filter() {
    const q = text.value.trim().toLowerCase();
    const st = status.value;
    const want = selects.filter(s => s.value !== "").map(s => [s.dataset.param, s.value]);
    let n = 0, total = 0;
    for (const tr of table.tBodies[0].rows) {
      if (!tr.dataset.trial) continue;
      total++;
      let ok = (!st || tr.dataset.status === st) && (!q || tr.textContent.toLowerCase().includes(q));
      for (const [p, v] of want) {
        const td = tr.querySelector('td[data-param="' + CSS.escape(p) + '"]');
        if (!td || td.textContent !== v) ok = false;
      }
      tr.classList.toggle("hidden", !ok);
      if (ok) n++;
    }
    shown.textContent = n === total ? total + " trials" : "showing " + n + " of " + total + " trials";
    const f = new URLSearchParams();
    if (q) f.set("q", text.value.trim());
    if (st) f.set("status", st);
    for (const [p, v] of want) f.set("p." + p, v);
    const frag = f.toString();
    history.replaceState(null, "", frag ? "#" + frag : location.pathname + location.search);
  }

  function sortValue(t, key) {
    if (key === "name") return t.name;
    if (key === "status") return t.status;
    if (key === "seed") return t.seed ?? null;
    if (key === "attempts") return t.attempts;
    if (key === "exit") return t.exit_code ?? null;
    if (key === "duration") return t.started ? (new Date(t.finished || Date.now()) - new Date(t.started)) : null;
    if (key.startsWith("p:")) { const v = t.params[key.slice(2)]; const f = Number(v); return v !== undefined && v !== "" && !isNaN(f) ? f : v; }
    if (key.startsWith("m:")) return metricNumber(t.metrics && t.metrics[key.slice(2)]);
    return null;
  }

  function sortRows(list) {
    if (!sortKey) return list;
    return list.slice().sort((a, b) => {
      const x = sortValue(a, sortKey), y = sortValue(b, sortKey);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * sortDir;
    });
  }

  function header() {
    const tr = el("tr");
    const th = (label, key, cls) => { const c = el("th", label, cls); c.dataset.sort = key; if (key === sortKey) c.classList.add(sortDir > 0 ? "sorted-asc" : "sorted-desc"); tr.appendChild(c); };
    th("trial", "name"); th("status", "status");
    for (const p of params) th(p, "p:" + p);
    th("seed", "seed"); th("attempts", "attempts"); th("exit", "exit"); th("duration", "duration");
    for (const m of metrics) th(m, "m:" + m, "metric");
    table.tHead.replaceChildren(tr);
  }

  function render(list) {
    const body = document.createDocumentFragment();
    for (const t of sortRows(list)) {
      const tr = el("tr");
      tr.dataset.trial = t.name;
      tr.dataset.status = t.status;
      const a = el("a", t.name);
      a.href = "/runs/" + encodeURIComponent(run) + "/trials/" + encodeURIComponent(t.name);
      const first = el("td"); first.appendChild(a); tr.appendChild(first);
      const st = el("td"); st.appendChild(badge(t.status)); tr.appendChild(st);
      for (const p of params) { const td = el("td", t.params[p] ?? ""); td.dataset.param = p; tr.appendChild(td); }
      tr.appendChild(el("td", t.seed ?? "", "n"));
      tr.appendChild(el("td", t.attempts, "n"));
      tr.appendChild(el("td", t.exit_code ?? "", "n"));
      tr.appendChild(el("td", t.duration || "", "n"));
      for (const m of metrics) tr.appendChild(el("td", t.metrics && m in t.metrics ? fmtMetric(t.metrics[m]) : "", "n"));
      body.appendChild(tr);
    }
    table.tBodies[0].replaceChildren(body);
    filter();
  }

  // Until the first answer, the rows the server wrote stand; sorting needs the data.
  async function refresh() {
    const res = await fetch(table.dataset.poll, { cache: "no-store" });
    if (!res.ok) throw new Error(res.status);
    const v = await res.json();
    // Redraw only what changed: a redrawn table loses the reader's text selection.
    const same = JSON.stringify(v.trial_rows) === JSON.stringify(rows);
    rows = v.trial_rows;
    const newCols = JSON.stringify(v.params) !== JSON.stringify(params) || JSON.stringify(v.metrics) !== JSON.stringify(metrics);
    params = v.params; metrics = v.metrics;
    if (newCols) header();
    if (newCols || !same) render(rows);
    const s = document.getElementById("run-status");
    if (s) { s.textContent = v.status; s.className = "badge big s-" + v.status; }
    const c = document.getElementById("run-counts");
    if (c) c.textContent = countsText(v.counts);
    const d = document.getElementById("run-duration");
    if (d && v.started) d.textContent = fmtDuration(new Date(v.finished || Date.now()) - new Date(v.started));
    const note = document.getElementById("run-note");
    if (note && v.note) note.textContent = v.note;
    drawProgress(document.getElementById("run-progress"), v.counts, v.trials);
    return v.live;
  }

  table.tHead.addEventListener("click", e => {
    const th = e.target.closest("th[data-sort]");
    if (!th) return;
    const key = th.dataset.sort;
    sortDir = key === sortKey ? -sortDir : 1;
    sortKey = key;
    header();
    if (rows) render(rows); else refresh().catch(() => {});
  });
  for (const c of [text, status, ...selects]) c.addEventListener("input", filter);
  filter();

  const interval = Number(table.dataset.interval) || 2000;
  const counts = {};
  for (const tr of table.tBodies[0].rows) if (tr.dataset.status) counts[tr.dataset.status] = (counts[tr.dataset.status] || 0) + 1;
  drawProgress(document.getElementById("run-progress"), counts, table.tBodies[0].rows.length);
  if (table.dataset.live === "true") poll(refresh, interval);
}

// poll calls fn every interval while it answers true (the thing watched is still live), and
// keeps trying through errors, more slowly.
function poll(fn, interval) {
  let wait = interval;
  const tick = async () => {
    let again = true;
    try { again = await fn(); wait = interval; } catch (e) { wait = Math.min(wait * 2, 30000); }
    if (again) setTimeout(tick, wait);
  };
  setTimeout(tick, interval);
}

// ---- the runs list: statuses and counts of live runs ----

function runsList(table) {
  const interval = Number(table.dataset.interval) || 2000;
  const live = s => s === "running" || s === "pending" || s === "";
  const anyLive = () => Array.from(table.querySelectorAll('[data-field="status"]')).some(b => live(b.textContent));
  if (!anyLive()) return;
  poll(async () => {
    const res = await fetch(table.dataset.poll, { cache: "no-store" });
    if (!res.ok) throw new Error(res.status);
    const p = await res.json();
    for (const r of p.runs) {
      const tr = table.querySelector('tr[data-run="' + CSS.escape(r.run_id) + '"]');
      if (!tr) continue;
      const b = tr.querySelector('[data-field="status"]');
      b.textContent = r.status; b.className = "badge s-" + r.status;
      tr.querySelector('[data-field="counts"]').textContent = countsText(r.counts);
    }
    return anyLive();
  }, interval);
}

// ---- the trial page: follow a running attempt's log ----

function followLog(pre) {
  let size = Number(pre.dataset.size) || 0;
  const url = pre.dataset.log;
  poll(async () => {
    const res = await fetch(url + "&offset=" + size, { cache: "no-store" });
    if (!res.ok) throw new Error(res.status);
    const more = await res.text();
    if (res.headers.get("X-Log-Restart") === "true") { pre.textContent = ""; }
    const stick = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    if (more) pre.append(document.createTextNode(more));
    size = Number(res.headers.get("X-Log-Size")) || size;
    if (stick) pre.scrollTop = pre.scrollHeight;
    const st = res.headers.get("X-Trial-Status");
    const s = document.getElementById("trial-status");
    if (s && st) { s.textContent = st; s.className = "badge big s-" + st; }
    // Keep asking until the log stops growing and the trial has ended: the runner may clear
    // the live attempt a moment before it records the end.
    return res.headers.get("X-Log-Live") === "true" || !["succeeded", "failed", "skipped", "killed", "pruned", "eliminated"].includes(st);
  }, 1000);
}

function trialPage() {
  for (const pre of document.querySelectorAll("pre.logtext")) {
    pre.scrollTop = pre.scrollHeight;
  }
  const live = document.querySelectorAll('section.attempt.latest pre.logtext[data-follow="true"]');
  for (const pre of live) followLog(pre);
  // A trial that has not started: reload once it has attempts, to show them.
  const waiting = document.getElementById("no-attempts");
  if (waiting) {
    poll(async () => {
      const res = await fetch(waiting.dataset.poll, { cache: "no-store" });
      if (!res.ok) throw new Error(res.status);
      const v = await res.json();
      if (v.attempts && v.attempts.length) { location.reload(); return false; }
      return true;
    }, Number(waiting.dataset.interval) || 2000);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const trials = document.getElementById("trials");
  if (trials) runPage(trials);
  const runs = document.getElementById("runs");
  if (runs) runsList(runs);
  if (document.querySelector("pre.logtext, #no-attempts")) trialPage();
});

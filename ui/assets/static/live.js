// jikken ui: live curves. A page that shows running trials asks the server for the points after
// the last ones it has and draws the curves again, so they grow without a reload: the trial page
// a curve per metric (/api/runs/RUN/trials/TRIAL/live), the run page a curve per running trial
// of its primary metric (/api/runs/RUN/live, one request a poll for all of them).
// Metric and trial names come from the trials: they reach the page through textContent only.
"use strict";

(function () {
  const W = 360, H = 120, NS = "http://www.w3.org/2000/svg", COLOURS = 8, LEGEND = 12;

  // chart draws, in box, a figure per metric holding a line per series (a trial on the run page,
  // the trial itself on its own page), every line of a figure on the same axes.
  function chart(box) {
    let figs = new Map();

    function figure(metric) {
      let f = figs.get(metric);
      if (f) return f;
      const fig = document.createElement("figure");
      fig.className = "curve";
      fig.dataset.metric = metric;
      const svg = document.createElementNS(NS, "svg");
      svg.setAttribute("viewBox", "0 0 " + W + " " + H);
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", metric + " over steps");
      const cap = document.createElement("figcaption");
      fig.append(svg, cap);
      box.appendChild(fig);
      f = { metric, fig, svg, cap, lines: new Map() };
      figs.set(metric, f);
      return f;
    }

    function line(f, key) {
      let l = f.lines.get(key);
      if (l) return l;
      const el = document.createElementNS(NS, "polyline");
      el.setAttribute("class", "c" + (f.lines.size % COLOURS));
      el.dataset.series = key;
      if (key) {
        const title = document.createElementNS(NS, "title");
        title.textContent = key;
        el.appendChild(title);
      }
      f.svg.appendChild(el);
      l = { key, el, pts: [] };
      f.lines.set(key, l);
      return l;
    }

    function draw(f) {
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity, n = 0;
      for (const l of f.lines.values()) {
        for (const [x, y] of l.pts) {
          x0 = Math.min(x0, x); x1 = Math.max(x1, x);
          y0 = Math.min(y0, y); y1 = Math.max(y1, y);
        }
        n += l.pts.length;
      }
      const scale = (v, lo, hi) => (hi > lo ? (v - lo) / (hi - lo) : 0.5);
      for (const l of f.lines.values()) {
        // A long curve is thinned to about one point per pixel.
        const stride = Math.max(1, Math.floor(l.pts.length / W));
        const out = [];
        for (let i = 0; i < l.pts.length; i += stride) {
          const [x, y] = l.pts[i];
          out.push((4 + (W - 8) * scale(x, x0, x1)).toFixed(1) + "," + (H - 4 - (H - 8) * scale(y, y0, y1)).toFixed(1));
        }
        l.el.setAttribute("points", out.join(" "));
        l.el.dataset.n = String(l.pts.length);
      }
      f.fig.dataset.n = String(n);
      const b = document.createElement("b");
      b.textContent = f.metric;
      f.cap.replaceChildren(b);
      const lines = Array.from(f.lines.values()).filter(l => l.pts.length);
      if (lines.length === 1 && !lines[0].key) {
        const last = lines[0].pts[lines[0].pts.length - 1][1];
        f.cap.append(" · " + n + " points · last " + String(Number(last.toPrecision(6))));
        return;
      }
      f.cap.append(" · " + lines.length + " trials · " + n + " points");
      lines.slice(0, LEGEND).forEach((l, i) => {
        const s = document.createElement("span");
        s.className = "legend c" + (i % COLOURS);
        s.textContent = l.key;
        f.cap.append(" ", s);
      });
      if (lines.length > LEGEND) f.cap.append(" +" + (lines.length - LEGEND) + " more");
    }

    return {
      // add appends points ({name, value, step}) to the line key of their metric's figure.
      add(key, points) {
        const changed = new Set();
        for (const p of points) {
          if (typeof p.value !== "number") continue; // NaN and infinities are not drawn
          const f = figure(p.name), l = line(f, key);
          l.pts.push([p.step ?? l.pts.length, p.value]);
          changed.add(f);
        }
        for (const f of changed) draw(f);
      },
      // drop forgets the line key (its trial started another attempt).
      drop(key) {
        for (const f of figs.values()) {
          const l = f.lines.get(key);
          if (l) { l.pts = []; draw(f); }
        }
      },
      clear() {
        figs = new Map();
        box.replaceChildren();
      },
    };
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error(r.status);
    return r.json();
  }

  // The trial page: every metric of one trial.
  function trialCurves(box) {
    const c = chart(box), every = Number(box.dataset.interval) || 2000;
    let attempt = 0, after = 0;
    async function poll() {
      let running = true, more = false;
      try {
        const d = await getJSON(box.dataset.live + "?after=" + after + "&attempt=" + attempt);
        if (d.attempt !== attempt) {
          c.clear();
          attempt = d.attempt;
        }
        c.add("", d.points);
        after = d.after;
        running = d.running;
        more = d.more;
        box.dataset.after = String(after);
      } catch (e) {
        // The server went away for a moment: ask again at the next turn.
      }
      if (more) setTimeout(poll, 0);
      else if (running) setTimeout(poll, every);
      else box.dataset.done = "true";
    }
    poll();
  }

  // The run page: the primary metric of each trial its table shows running (app.js keeps the
  // rows' data-status current), followed until its last points are drawn.
  function runCurves(box) {
    const c = chart(box), every = Number(box.dataset.interval) || 2000;
    const cursors = new Map(); // trial -> {attempt, after, metric}
    const over = ["succeeded", "failed", "killed", "skipped", "pruned", "eliminated"];
    async function poll() {
      for (const tr of document.querySelectorAll('#trials tr[data-status="running"]')) {
        if (!cursors.has(tr.dataset.trial)) cursors.set(tr.dataset.trial, { attempt: 0, after: 0, metric: "" });
      }
      let more = false;
      if (cursors.size) {
        try {
          const asked = new Set(cursors.keys());
          const d = await getJSON(box.dataset.live + "?after=" + encodeURIComponent(JSON.stringify(Object.fromEntries(cursors))));
          for (const t of d.trials) {
            asked.delete(t.trial);
            const was = cursors.get(t.trial);
            if (was && was.attempt !== t.attempt) c.drop(t.trial);
            c.add(t.trial, t.points);
            if (t.running || t.more) cursors.set(t.trial, { attempt: t.attempt, after: t.after, metric: t.metric });
            else cursors.delete(t.trial);
            more = more || !!t.more;
          }
          for (const name of asked) cursors.delete(name); // not started: followed once it runs
        } catch (e) {
          // Ask again at the next turn.
        }
      }
      box.dataset.following = String(cursors.size);
      const st = document.getElementById("run-status");
      if (more) setTimeout(poll, 0);
      else if (cursors.size || !st || !over.includes(st.textContent)) setTimeout(poll, every);
      else box.dataset.done = "true";
    }
    poll();
  }

  const trial = document.getElementById("live-curves");
  if (trial) trialCurves(trial);
  const run = document.getElementById("run-live");
  if (run) runCurves(run);
})();

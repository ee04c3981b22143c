// jikken ui: live curves. A trial page that runs asks /api/.../live for the points after the
// last one it has and draws each metric's curve again, so the curves grow without a reload.
// Metric names come from the trial: they reach the page through textContent only.
"use strict";

(function () {
  const box = document.getElementById("live-curves");
  if (!box) return;
  const url = box.dataset.live;
  const every = Number(box.dataset.interval) || 2000;
  const W = 360, H = 120, NS = "http://www.w3.org/2000/svg";
  let attempt = 0, after = 0, series = new Map();

  function reset() {
    series = new Map();
    box.replaceChildren();
  }

  function add(name) {
    const fig = document.createElement("figure");
    fig.className = "curve";
    fig.dataset.metric = name;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", name + " over steps");
    const line = document.createElementNS(NS, "polyline");
    svg.appendChild(line);
    const cap = document.createElement("figcaption");
    fig.append(svg, cap);
    box.appendChild(fig);
    const s = { name, pts: [], fig, line, cap };
    series.set(name, s);
    return s;
  }

  function draw(s) {
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const [x, y] of s.pts) {
      x0 = Math.min(x0, x); x1 = Math.max(x1, x);
      y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    const f = (v, lo, hi) => (hi > lo ? (v - lo) / (hi - lo) : 0.5);
    // A long curve is thinned to about one point per pixel.
    const stride = Math.max(1, Math.floor(s.pts.length / W));
    const out = [];
    for (let i = 0; i < s.pts.length; i += stride) {
      const [x, y] = s.pts[i];
      out.push((4 + (W - 8) * f(x, x0, x1)).toFixed(1) + "," + (H - 4 - (H - 8) * f(y, y0, y1)).toFixed(1));
    }
    s.line.setAttribute("points", out.join(" "));
    s.fig.dataset.n = String(s.pts.length);
    const last = s.pts[s.pts.length - 1][1];
    s.cap.replaceChildren();
    const b = document.createElement("b");
    b.textContent = s.name;
    s.cap.append(b, " · " + s.pts.length + " points · last " + String(Number(last.toPrecision(6))));
  }

  async function poll() {
    let running = true, more = false;
    try {
      const r = await fetch(url + "?after=" + after + "&attempt=" + attempt, { headers: { Accept: "application/json" } });
      if (r.ok) {
        const d = await r.json();
        if (d.attempt !== attempt) {
          reset();
          attempt = d.attempt;
        }
        const changed = new Set();
        for (const p of d.points) {
          if (typeof p.value !== "number") continue; // NaN and infinities are not drawn
          const s = series.get(p.name) || add(p.name);
          s.pts.push([p.step ?? s.pts.length, p.value]);
          changed.add(s);
        }
        for (const s of changed) draw(s);
        after = d.after;
        running = d.running;
        more = d.more;
        box.dataset.after = String(after);
      }
    } catch (e) {
      // The server went away for a moment: ask again at the next turn.
    }
    if (more) setTimeout(poll, 0);
    else if (running) setTimeout(poll, every);
    else box.dataset.done = "true";
  }
  poll();
})();

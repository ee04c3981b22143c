"""Time jikken.load on a large folder store: the final metrics of --trials trials into pandas.

    /usr/bin/python3 bench/reader/bench.py                     # 100,000 trials, 3 rounds
    /usr/bin/python3 bench/reader/bench.py --trials 10000 --rounds 5
    /usr/bin/python3 bench/reader/bench.py --reader /work/main/clients/python   # another checkout's reader

The store is written once under --dir (default /tmp/jikken-bench-reader) in the layout
'jikken run' leaves: a compact manifest (a plan above 1,000 trials), and per trial trial.json,
metrics.jsonl (--lines lines of two metrics) and result.json. Files are written without fsync.
The run is then ended as the runner ends one, by main.go beside this script (go run): the
run's summary.json, then the state.json that names it. Each round loads the run twice: as it
is (the reader takes the summary), and with summary.json moved aside (the reader opens each
trial's three files). The page cache is warm, as in a notebook that reads a run twice.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

RUN = "20261128-120000-bench"


def write_store(root, trials, lines):
    base = os.path.join(root, "runs", RUN)
    os.makedirs(base, exist_ok=True)
    manifest = {"run_id": RUN, "experiment": "bench", "created": "2026-11-28T12:00:00Z",
                "trials_expansion": {"count": trials, "sha256": "0" * 64}}
    with open(os.path.join(base, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    for i in range(trials):
        name = "t-%06d" % i
        d = os.path.join(base, "trials", name)
        os.makedirs(d)
        params = {"lr": [0.1, 0.01, 0.001][i % 3], "algo": ["a", "b", "c", "d"][i % 4]}
        rec = {"run": RUN, "name": name, "index": i, "status": "succeeded", "params": params, "seed": i,
               "attempts": [{"n": 1, "started": "2026-11-28T12:00:00Z", "finished": "2026-11-28T12:00:05Z", "exit_code": 0}],
               "backend": "local", "tool": "jikken v0.1.0"}
        with open(os.path.join(d, "trial.json"), "w") as f:
            json.dump(rec, f, indent=2)
        with open(os.path.join(d, "metrics.jsonl"), "w") as f:
            for s in range(lines):
                name_ = "loss" if s % 2 == 0 else "acc"
                f.write('{"name":"%s","value":%r,"step":%d,"ts":%d}\n' % (name_, 1.0 / (s + 1 + i % 7), s, 1767225600000 + s))
        with open(os.path.join(d, "result.json"), "w") as f:
            json.dump({"loss": 0.1 + (i % 100) / 1000, "eval": {"acc": 0.9}}, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--lines", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/jikken-bench-reader")
    ap.add_argument("--reader", default=os.path.join(HERE, "..", "..", "clients", "python"),
                    help="folder holding the jikken package to time")
    a = ap.parse_args()
    sys.path.insert(0, a.reader)
    import jikken

    root = os.path.join(a.dir, "%d-%d" % (a.trials, a.lines))
    summary = os.path.join(root, "runs", RUN, "summary.json")
    if not os.path.exists(os.path.join(root, "runs", RUN, "manifest.json")):
        t = time.perf_counter()
        write_store(root, a.trials, a.lines)
        print("wrote %d trials in %.1f s" % (a.trials, time.perf_counter() - t))
    if not os.path.exists(summary):
        subprocess.run(["go", "run", ".", "-store", root, "-run", RUN], cwd=HERE, check=True)
    for r in range(a.rounds):
        for mode in ("summary", "files"):
            if mode == "files":
                os.rename(summary, summary + ".aside")
            try:
                t, c = time.perf_counter(), _cpu()
                df = jikken.load(root, RUN)
                dt, dc = time.perf_counter() - t, _cpu() - c
            finally:
                if mode == "files":
                    os.rename(summary + ".aside", summary)
            print("round %d, %s: %d trials x %d columns in %.3f s, CPU %.3f s (%s); load average %s" % (
                r + 1, mode, len(df), len(df.columns), dt, dc, type(df).__name__, _loadavg()))


def _cpu():
    """User and system time of this process and its finished workers: what the load inflates
    less than the wall time."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


if __name__ == "__main__":
    main()

"""Time jikken.load on a large folder store: the final metrics of --trials trials into pandas.

    python3 bench/notebook/bench.py                     # 100,000 trials, 3 rounds
    python3 bench/notebook/bench.py --trials 10000 --rounds 5

The store is written once under --dir (default /tmp/jikken-bench-notebook) in the layout
'jikken run' leaves: a compact manifest (a plan above 1,000 trials), and per trial trial.json,
metrics.jsonl (--lines lines of two metrics) and result.json. Files are written without fsync;
the page cache is warm when reading, as in a notebook that reads a run twice.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
import jikken  # noqa: E402

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
    ap.add_argument("--dir", default="/tmp/jikken-bench-notebook")
    a = ap.parse_args()
    root = os.path.join(a.dir, "%d-%d" % (a.trials, a.lines))
    if not os.path.exists(os.path.join(root, "runs", RUN, "manifest.json")):
        t = time.perf_counter()
        write_store(root, a.trials, a.lines)
        print("wrote %d trials in %.1f s" % (a.trials, time.perf_counter() - t))
    for r in range(a.rounds):
        t = time.perf_counter()
        df = jikken.load(root, RUN)
        dt = time.perf_counter() - t
        print("round %d: %d trials x %d columns in %.3f s (%s)" % (r + 1, len(df), len(df.columns), dt, type(df).__name__))


if __name__ == "__main__":
    main()

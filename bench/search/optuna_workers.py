"""Optuna's answer to bench/search/overhead.sh: N trivial trials, each a process (`sh -c echo`,
as jikken's trials are), suggested by Optuna's TPE from WORKERS worker processes sharing a
SQLite storage (Optuna's way to run trials in parallel without a server). Prints the wall time.

    /usr/bin/python3 bench/search/optuna_workers.py [N] [WORKERS]      (defaults: 2000 2)

A reference only: jikken never depends on it.
"""
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial):
    x = trial.suggest_float("x", 0, 1)
    out = subprocess.run(["sh", "-c", "echo ::metric loss=%r" % x], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().split("=", 1)[1])


def work(storage, n):
    study = optuna.load_study(study_name="s", storage=storage, sampler=optuna.samplers.TPESampler(seed=os.getpid()))
    study.optimize(objective, n_trials=n)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    with tempfile.TemporaryDirectory() as d:
        storage = "sqlite:///" + os.path.join(d, "optuna.db")
        optuna.create_study(study_name="s", storage=storage, direction="minimize")
        t0 = time.monotonic()
        ps = [multiprocessing.Process(target=work, args=(storage, n // workers)) for _ in range(workers)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        wall = time.monotonic() - t0
        done = len(optuna.load_study(study_name="s", storage=storage).trials)
    print("optuna %s, %d trials (%d done), %d workers on SQLite: %.1fs" % (optuna.__version__, n, done, workers, wall))
    print("load: " + open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()

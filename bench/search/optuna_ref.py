"""Optuna reference for bench/search: the same problems, budget and seeds as `search-bench run`.

    python3 optuna_ref.py run --sampler tpe --problems sphere:2,rosenbrock:10 --seeds 30 --trials 200
    python3 optuna_ref.py latency --dims 10

Prints CSV rows impl,sampler,fn,dim,seed,best (run) or impl,sampler,dims,history,p50_ms,p99_ms
(latency). A reference only: jikken never depends on it.
"""
import argparse
import math
import statistics
import sys
import time

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def sphere(x):
    return sum(v * v for v in x)


def rastrigin(x):
    return 10.0 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)


def rosenbrock(x):
    return sum(100 * (x[i + 1] - x[i] * x[i]) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))


def ackley(x):
    n = len(x)
    s1 = sum(v * v for v in x)
    s2 = sum(math.cos(2 * math.pi * v) for v in x)
    return -20 * math.exp(-0.2 * math.sqrt(s1 / n)) - math.exp(s2 / n) + 20 + math.e


FUNCTIONS = {"sphere": sphere, "rastrigin": rastrigin, "rosenbrock": rosenbrock, "ackley": ackley}


def sampler(name, seed):
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "tpe-multivariate":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise SystemExit(f"unknown sampler {name}")


def run(args):
    for prob in args.problems.split(","):
        fn, dim = prob.split(":")
        f, dim = FUNCTIONS[fn], int(dim)
        for seed in range(args.seeds):
            study = optuna.create_study(sampler=sampler(args.sampler, seed))
            names = [f"x{i:02d}" for i in range(dim)]
            study.optimize(lambda t: f([t.suggest_float(n, -5, 5) for n in names]), n_trials=args.trials)
            print(f"optuna,{args.sampler},{fn},{dim},{seed},{study.best_value!r}", flush=True)


def latency(args):
    names = [f"x{i:02d}" for i in range(args.dims)]
    dist = {n: optuna.distributions.FloatDistribution(-5, 5) for n in names}
    import random

    rnd = random.Random(1)
    for finished in (1000, 10000):
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1, constant_liar=True))
        trials = []
        for _ in range(finished):
            p = {n: rnd.uniform(-5, 5) for n in names}
            trials.append(optuna.trial.create_trial(params=p, distributions=dist, value=sphere(list(p.values()))))
        study.add_trials(trials)
        for _ in range(64):  # running trials, as the constant liar sees them
            t = study.ask()
            for n in names:
                t.suggest_float(n, -5, 5)
        reps = args.reps if finished == 1000 else max(3, args.reps // 5)
        lat = []
        for _ in range(reps):
            start = time.perf_counter()
            t = study.ask()
            for n in names:
                t.suggest_float(n, -5, 5)
            lat.append((time.perf_counter() - start) * 1e3)
            study.tell(t, state=optuna.trial.TrialState.FAIL)  # keep the history as it was
        lat.sort()
        p99 = lat[min(len(lat) - 1, len(lat) * 99 // 100)]
        print(f"optuna,tpe,{args.dims},{finished},{statistics.median(lat):.3f},{p99:.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--sampler", default="tpe")
    r.add_argument("--problems", default="sphere:2")
    r.add_argument("--seeds", type=int, default=30)
    r.add_argument("--trials", type=int, default=200)
    lt = sub.add_parser("latency")
    lt.add_argument("--dims", type=int, default=10)
    lt.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    {"run": run, "latency": latency}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())

"""Optuna's pruners on the curves of `go run ./bench/prune -dump FILE`, replaying the same events.

    go run ./bench/prune -dump /tmp/curves.jsonl -seeds 100
    /usr/bin/python3 bench/prune/optuna_ref.py /tmp/curves.jsonl

With --golden it prints, as JSON, the step at which each configuration ended under the pruners
jikken's rules reproduce (median, and successive halving with a fixed min_resource), for
prune/curvesim/testdata/optuna.json:

    go run ./bench/prune -dump /tmp/curves3.jsonl -seeds 3
    /usr/bin/python3 bench/prune/optuna_ref.py --golden /tmp/curves3.jsonl > prune/curvesim/testdata/optuna.json

A reference only (Debian's python3-optuna); jikken does not depend on it. Each seed's
configurations are asked in order (trial number = configuration), run in the same slots, and
report their steps in the order the draws give, as prune/curvesim does for jikken's pruners.
"""

import json
import sys

import optuna
from optuna.trial import TrialState

optuna.logging.set_verbosity(optuna.logging.WARNING)

PRUNERS = [
    ("median", "defaults", lambda: optuna.pruners.MedianPruner()),
    ("median", "n_warmup_steps 10", lambda: optuna.pruners.MedianPruner(n_warmup_steps=10)),
    ("successive halving", "defaults", lambda: optuna.pruners.SuccessiveHalvingPruner()),
    ("successive halving", "min_resource 10, reduction_factor 3",
     lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=10, reduction_factor=3)),
    ("hyperband", "max_resource 100", lambda: optuna.pruners.HyperbandPruner(max_resource=100)),
    ("hyperband", "min_resource 10, max_resource 100",
     lambda: optuna.pruners.HyperbandPruner(min_resource=10, max_resource=100)),
]


def run(seed, make):
    loss, draws, slots, best = seed["loss"], seed["draws"], seed["slots"], seed["best"]
    n, steps_max = len(loss), len(loss[0])
    study = optuna.create_study(direction="minimize", pruner=make(),
                                sampler=optuna.samplers.RandomSampler(seed=seed["seed"]))
    running, started, steps, pruned, kept = [], 0, 0, 0, False
    ended = [0] * n
    while started < n or running:
        while len(running) < slots and started < n:
            running.append([study.ask(), started, 0])
            started += 1
        k = int(draws[steps] * len(running))
        trial, config, step = running[k]
        step += 1
        running[k][2] = step
        value = loss[config][step - 1]
        trial.report(value, step)
        steps += 1
        if step == steps_max:
            study.tell(trial, value)
            kept = kept or config == best
        elif trial.should_prune():
            study.tell(trial, state=TrialState.PRUNED)
            pruned += 1
        else:
            continue
        ended[config] = step
        running.pop(k)
    return kept, steps / (n * steps_max), pruned, ended

# The pruners whose decisions jikken's must equal, by jikken's name and options.
GOLDEN = [
    ("median", {}, lambda: optuna.pruners.MedianPruner()),
    ("median", {"warmup_steps": 10}, lambda: optuna.pruners.MedianPruner(n_warmup_steps=10)),
    ("percentile", {"percentile": 25, "min_trials": 3},
     lambda: optuna.pruners.PercentilePruner(25, n_min_trials=3)),
    ("asha", {"min_resource": 10, "reduction_factor": 3},
     lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=10, reduction_factor=3)),
    ("asha", {"min_resource": 4, "reduction_factor": 2},
     lambda: optuna.pruners.SuccessiveHalvingPruner(min_resource=4, reduction_factor=2)),
]


def golden(path):
    seeds = [json.loads(line) for line in open(path)]
    runs = [json.dumps({"pruner": name, "options": options, "seed": s["seed"], "ended": run(s, make)[3]})
            for name, options, make in GOLDEN for s in seeds]
    print('{"optuna": %s, "runs": [\n%s\n]}' % (json.dumps(optuna.__version__), ",\n".join(runs)))


def main(path):
    seeds = [json.loads(line) for line in open(path)]
    print("| pruner (Optuna %s) | options | best kept | steps run | pruned (of 81) |" % optuna.__version__)
    print("| --- | --- | ---: | ---: | ---: |")
    for name, options, make in PRUNERS:
        results = [run(s, make) for s in seeds]
        kept = sum(r[0] for r in results)
        print("| %s | %s | %d %% | %.1f %% | %.1f |" % (
            name, options, round(100 * kept / len(seeds)),
            100 * sum(r[1] for r in results) / len(seeds), sum(r[2] for r in results) / len(seeds)))


if __name__ == "__main__":
    if sys.argv[1] == "--golden":
        golden(sys.argv[2])
    else:
        main(sys.argv[1])

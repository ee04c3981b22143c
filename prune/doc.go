// Package prune decides whether a running trial should stop early, from the intermediate values
// (learning curves) of every trial of a search; each decision is a pure function of the curves.
//
// # Pruners and options
//
// New builds a pruner by name. Options come from the experiment's pruner block; whole-number
// options accept JSON numbers with no fraction. Defaults follow Optuna where the rule can stay a
// pure function of the curves, and differ (said below) where Optuna keeps state.
//
//   - "none": never prunes.
//   - "median": "percentile" with percentile 50 (Optuna's MedianPruner).
//   - "percentile": at the trial's latest step s, its best value so far is compared with the given
//     percentile of the values complete trials had at s (linear interpolation between order
//     statistics, as numpy); it stops when worse. For a minimised objective the percentile p keeps
//     trials at or below the p-th percentile; for a maximised one at or above the (100-p)-th.
//     Options: percentile (required for "percentile", 0-100), warmup_steps (0: no decision at a
//     step below it), startup_trials (5: no decision until that many trials are complete; Optuna's
//     n_startup_trials), min_trials (1: no decision unless that many complete trials reached s;
//     Optuna's n_min_trials). Only complete trials are compared, as in Optuna. A complete trial's
//     value at s is its last value at a step <= s, and it counts only if it reached s.
//   - "asha" (also "sha", "successive_halving"): asynchronous successive halving. The rungs are
//     the steps min_resource * eta^k (k = 0, 1, ...) below max_resource. A trial is judged at a
//     rung once, when its latest point is the first at or past the rung; its rung value is that
//     point's value. Every trial (running, complete or pruned) whose curve reached the rung
//     competes, with its own rung value. They are ranked best first; NaN ranks last and equal
//     values rank by Number, lower first. With n competitors the top max(1, floor(n/eta)) go on;
//     the others stop. So the first trial at a rung always goes on, and while fewer than eta
//     trials have reached it only the best does (Optuna's rule: it cannot pause a trial until the
//     rung fills). Options: min_resource (1; Optuna's default "auto" depends on which trial ends
//     first, so it is not used), reduction_factor (4, Optuna's default; "eta"), max_resource (0:
//     rungs without end), warmup_steps (0: rungs below it are not checked), min_trials (1: a
//     rung is not judged until that many other trials reached it).
//   - "hyperband": several "asha" brackets; bracket b has min_resource * eta^b as its first rung,
//     and a trial competes only with the trials of its own bracket. The bracket of a trial is a
//     fixed function of its Number: a 64-bit mix of the Number taken modulo the total of the
//     bracket weights, the weights being Optuna's (ceil(B * eta^(B-1-b) / (B-b)) for B brackets,
//     so the brackets that stop early get more trials). Options: max_resource (required: the step
//     a trial that is never pruned reaches; Optuna's "auto" reads it from the first complete trial,
//     which depends on timing), min_resource (1), reduction_factor (3, Optuna's default),
//     brackets (floor(log_eta(max_resource/min_resource)) + 1, Optuna's count; fewer may be
//     given), warmup_steps and min_trials as for "asha".
//
// Every answer comes with a sentence saying why, for the trial's record. A curve that is Done or
// Pruned is final and is never pruned. A trial with no points is never pruned.
package prune

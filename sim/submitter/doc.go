// Package submitter provides the stock pod sources of the simulator: trace replay (CSV, JSONL,
// Kubernetes Pod manifests), stochastic arrival processes (Poisson, uniform, binomial, per-user
// time-of-day profiles) with duration and size distributions, feedback submitters that react to
// cluster metrics, and the synthetic philly and gavel presets.
package submitter

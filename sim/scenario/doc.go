// Package scenario reads a simulation scenario (YAML: cluster, workload, scheduler, events,
// stop condition, seed), validates it with errors that name the offending field, and builds a
// ready-to-run engine from it.
package scenario

// Package curvesim is a synthetic learning-curve benchmark for pruners: a grid of configurations
// whose curves approach a known final value, run in parallel slots in a seeded order, so how often
// a pruner keeps the truly best configuration, and how many steps it saves, can be measured.
package curvesim

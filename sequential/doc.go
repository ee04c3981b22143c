// Package sequential decides when a comparison has seen enough seeds: a group-sequential design
// for comparing configurations over blocks (functions, data sets) and seeds, where after each
// batch of seeds the pairwise verdicts are tested against boundaries that spend the error rate
// over the planned looks, so that stopping as soon as the verdicts are settled keeps the
// family-wise error rate at alpha. It is pure: the decision is a function of the completed
// results, and the boundaries are computed by a seeded simulation. docs/sequential.md gives the
// method, its reference and its assumptions.
package sequential

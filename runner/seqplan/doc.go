// Package seqplan is the planner of sequential seeds: it grows the matrices whose seeds say
// until (experiment.Sequential) by a batch of seeds at a time, as package sequential decides
// from the results so far, and ends their plan once every pairwise verdict is settled.
package seqplan

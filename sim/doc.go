// Package sim is a deterministic discrete-event simulator of a Kubernetes-like cluster: pods
// with resource requests arrive from submitters, a scheduler places them on nodes, and the
// engine advances its own clock from event to event, so the same scenario and seed always
// produce the same records.
//
// The engine is a pure state machine in the style of etcd's raft: it owns its clock, starts no
// goroutines, never reads the wall clock, never depends on map iteration order, and draws all
// randomness from a seeded PCG generator handed in through Config. Events are ordered by
// (time, sequence), so ties break the same way on every run. Callers drive it with Step or Run
// and do all I/O (files, progress bars) themselves.
package sim

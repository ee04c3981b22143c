// Package record describes a trial's journal entry: its status, its attempts and where a running
// attempt is, as the runner's core writes it and the store keeps it (trial.json). It is plain
// data with no I/O, so that the core need not link the store; package store names these types
// again for its callers.
package record

// Package snapshot describes the exact code a run used, as jikken records it in a run's
// manifest: a repository's state (commits and trees) and the ghost branches that carry it to
// other machines. It is plain data with no I/O, so that the store keeps it without linking git;
// package ghost takes and materializes snapshots and names these types again for its callers.
package snapshot

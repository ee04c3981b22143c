package ghost

import "github.com/jikken-dev/jikken/snapshot"

// A snapshot's data lives in package snapshot, a leaf the store keeps in run manifests without
// linking git; these names keep ghost.Snapshot and its parts for ghost's callers.
type (
	Snapshot = snapshot.Snapshot
	Ghost    = snapshot.Ghost
	Kind     = snapshot.Kind
	Meta     = snapshot.Meta
)

// The kinds of ghost (see package snapshot).
const (
	KindDiff    = snapshot.KindDiff
	KindCommits = snapshot.KindCommits
)

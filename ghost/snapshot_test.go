package ghost

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTakeAndMaterializeLocally(t *testing.T) {
	w := newWorld(t)
	makeMess(t, w.sender)
	ctx := context.Background()
	before := stateOf(t, w.sender)
	statusBefore := git(t, w.sender, "status", "--porcelain")

	indexFile := filepath.Join(w.sender, ".git", "index")
	indexBefore, err := os.ReadFile(indexFile)
	must(t, err)
	snap, err := Take(ctx, filepath.Join(w.sender, "dir"), SnapshotOptions{})
	must(t, err)
	if indexAfter, err := os.ReadFile(indexFile); err != nil || !bytes.Equal(indexAfter, indexBefore) {
		t.Fatalf("Take rewrote the index file (%v)", err)
	}
	if !snap.Dirty || snap.Ref == "" || snap.GhostRepo != "" {
		t.Fatalf("snapshot = %+v, want a dirty local snapshot with a ref", snap)
	}
	if got := stateOf(t, w.sender); got != before {
		t.Fatalf("Take changed the repository: %v, want %v", got, before)
	}
	if s := git(t, w.sender, "status", "--porcelain"); s != statusBefore {
		t.Fatalf("Take changed the status:\n%s\nwant\n%s", s, statusBefore)
	}
	// The snapshot survives a round trip through JSON, as it does in a run manifest.
	b, err := json.Marshal(snap)
	must(t, err)
	var back Snapshot
	must(t, json.Unmarshal(b, &back))

	// The researcher keeps editing; the materialized copy keeps the snapshot's state.
	write(t, w.sender, "a.txt", "edited after the snapshot\n")
	dest := filepath.Join(w.root, "trial")
	must(t, Materialize(ctx, back, dest))
	if got := stateOf(t, dest); got != before {
		t.Fatalf("materialized state %v, want %v", got, before)
	}
	if s := git(t, dest, "status", "--porcelain"); s != statusBefore {
		t.Fatalf("materialized status:\n%s\nwant\n%s", s, statusBefore)
	}
	if _, err := os.Stat(filepath.Join(dest, "debug.log")); err == nil {
		t.Error("an ignored file was materialized")
	}
	// Nothing is registered in the researcher's repository: a runner killed now (before
	// Release) leaves a folder, not a worktree entry.
	if wt := git(t, w.sender, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Fatalf("the copy is registered in the repository:\n%s", wt)
	}
	must(t, Release(ctx, back, dest))
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("Release left %s", dest)
	}
}

func TestTakeCleanRepositoryNeedsNoRef(t *testing.T) {
	w := newWorld(t)
	snap, err := Take(context.Background(), w.sender, SnapshotOptions{})
	must(t, err)
	if snap.Dirty || snap.Ref != "" || snap.Commit != snap.Head || snap.Base != snap.Head {
		t.Fatalf("clean snapshot = %+v", snap)
	}
}

func TestTakeWithGhostRepoMaterializesElsewhere(t *testing.T) {
	w := newWorld(t)
	makeMess(t, w.sender)
	ctx := context.Background()
	before := stateOf(t, w.sender)
	snap, err := Take(ctx, w.sender, SnapshotOptions{GhostRepo: w.ghostURL})
	must(t, err)
	if snap.Commits == nil || snap.Diff == nil {
		t.Fatalf("snapshot = %+v, want commits and diff ghosts", snap)
	}
	// Another machine: the sender's repository is not there.
	snap.Repo = filepath.Join(w.root, "elsewhere")
	dest := filepath.Join(w.root, "remote-trial")
	must(t, Materialize(ctx, snap, dest))
	if got := stateOf(t, dest); got != before {
		t.Fatalf("materialized state %v, want %v", got, before)
	}
}

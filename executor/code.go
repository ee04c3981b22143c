package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jikken-dev/jikken/ghost"
)

// Install copies the running binary to dest, executable. An init container of the jikken image
// (FROM scratch: no cp, no shell) uses it to hand the executor to a trial's own image through a
// shared volume.
func Install(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: find own binary: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	tmp := dest + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("install: copy to %s: %w", dest, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return os.Rename(tmp, dest)
}

// Checkout puts the exact code of a run into dest: snapshotJSON is the run's code snapshot (a
// ghost.Snapshot as stored in the run manifest). The base commit is cloned from the snapshot's
// origin and the ghosts (unpushed commits, then the working-tree diff) are applied from its ghost
// repository, so a trial on a cluster node runs exactly the code its researcher launched. It
// needs the git binary: run it in an image that has git.
func Checkout(ctx context.Context, snapshotJSON []byte, dest string) error {
	var snap ghost.Snapshot
	if err := json.Unmarshal(snapshotJSON, &snap); err != nil {
		return fmt.Errorf("code snapshot: %w", err)
	}
	if snap.Origin == "" {
		return fmt.Errorf("code snapshot of %s has no remote to clone from; push the branch, or build an image that contains the code", snap.Repo)
	}
	if snap.Dirty && snap.GhostRepo == "" {
		return fmt.Errorf("code snapshot of %s has local changes that were not pushed to a ghost repository; run with a ghost repository configured, or commit and push", snap.Repo)
	}
	// A folder left by an earlier try of this init container is removed: Materialize wants an
	// empty destination.
	entries, _ := os.ReadDir(dest)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dest, e.Name())); err != nil {
			return fmt.Errorf("code snapshot: clear %s: %w", dest, err)
		}
	}
	if err := ghost.Materialize(ctx, snap, dest); err != nil {
		return fmt.Errorf("code snapshot: %w", err)
	}
	return nil
}

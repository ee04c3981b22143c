package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jikken-dev/jikken/ghost"
	"github.com/jikken-dev/jikken/ghost/gitexec"
	"github.com/jikken-dev/jikken/store"
)

// codeSnapshot pins the code of the repository holding dir: its commit and, when the working
// tree differs, a snapshot of it (pushed to ghostRepo when one is given). Outside a git
// repository there is nothing to pin.
func codeSnapshot(ctx context.Context, dir, ghostRepo string) (*ghost.Snapshot, error) {
	// The environment is git's for every call of jikken's (gitexec's): an inherited GIT_DIR or
	// GIT_CEILING_DIRECTORIES must not decide whether the code is recorded.
	if _, err := (gitexec.Client{Dir: dir}).Run(ctx, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return nil, nil // not a repository, or no commit yet
	}
	snap, err := ghost.Take(ctx, dir, ghost.SnapshotOptions{GhostRepo: ghostRepo})
	if err != nil {
		return nil, fmt.Errorf("record the code (or pass --in-place to run without a snapshot): %w", err)
	}
	return &snap, nil
}

// codeWorkdir returns where the trials of m run: a materialised copy of the run's code snapshot
// (so the researcher can keep editing), at the experiment file's place in it, and a function to
// call when the runner is done. Without a snapshot, or with in-place runs, it is the experiment
// file's folder.
//
// The copy belongs to the run, not to one runner: what its steps built there (a binary a build
// trial made, then used by the trials after it) is still there when a resumed runner starts the
// trials that had not run. done(true), once every trial has succeeded, removes it; otherwise it
// stays for resume, and 'jikken rm' removes it.
func codeWorkdir(ctx context.Context, m *store.Manifest, workRoot string) (string, func(finished bool), error) {
	expDir := filepath.Dir(m.File)
	if m.Code == nil || m.Options.InPlace {
		return expDir, func(bool) {}, nil
	}
	rel, err := filepath.Rel(m.Code.Repo, expDir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", nil, fmt.Errorf("the experiment %s is outside its code snapshot's repository %s", m.File, m.Code.Repo)
	}
	runDir := filepath.Join(workRoot, m.RunID)
	dest := filepath.Join(runDir, "code")
	// The marker is written once the copy is whole: a runner killed while materialising leaves
	// no marker, and the next one starts the copy again.
	marker := filepath.Join(runDir, "code.ok")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return "", nil, err
	}
	// Copies of runners of this run that were killed mid-copy, or of earlier versions (one per
	// runner, code-PID): this runner holds the run's lock, so no other runner uses them.
	if old, err := filepath.Glob(filepath.Join(runDir, "code-*")); err == nil {
		for _, dir := range old {
			_ = ghost.Release(ctx, *m.Code, dir)
		}
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != m.Code.Commit {
		_ = os.Remove(marker)
		if _, err := os.Stat(dest); err == nil {
			_ = ghost.Release(ctx, *m.Code, dest)
		}
		if err := ghost.Materialize(ctx, *m.Code, dest); err != nil {
			return "", nil, fmt.Errorf("materialise the run's code snapshot (or rerun with --in-place): %w", err)
		}
		if err := os.WriteFile(marker, []byte(m.Code.Commit), 0o644); err != nil {
			return "", nil, err
		}
	}
	done := func(finished bool) {
		if finished {
			_ = os.Remove(marker)
			_ = ghost.Release(context.WithoutCancel(ctx), *m.Code, dest)
		}
	}
	return filepath.Join(dest, rel), done, nil
}

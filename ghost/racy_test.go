package ghost_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/ghost"
)

// TestSnapshotSeesSameSizeEditInTheCommitSecond: an edit that keeps a file's size, made in the
// same second as the commit before it, is still part of the snapshot (git's racy-clean case).
func TestSnapshotSeesSameSizeEditInTheCommitSecond(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	file := filepath.Join(dir, "value.txt")
	for i := 0; i < 5; i++ { // several tries make hitting the same second near certain
		if err := os.WriteFile(file, []byte("41\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			run("init", "-q", "-b", "main")
		}
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", "v41")
		if err := os.WriteFile(file, []byte("42\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		snap, err := ghost.Take(context.Background(), dir, ghost.SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Dirty || len(snap.Files) != 1 || snap.Files[0] != "value.txt" {
			t.Fatalf("try %d: snapshot missed the edit: dirty=%v files=%v", i, snap.Dirty, snap.Files)
		}
	}
}

// cleanEnv drops variables that would point git at another repository.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

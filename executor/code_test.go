package executor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/ghost"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutRebuildsTheResearchersCode plays the code init container of a cluster pod: a
// researcher's clone has a pushed commit, an unpushed one, an unstaged edit and an untracked
// file; the run's snapshot (pushed to a ghost repository) is checked out from its JSON on
// "another machine" (the clone's path is not used), into a folder a failed try left files in.
func TestCheckoutRebuildsTheResearchersCode(t *testing.T) {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": t.TempDir()} {
		t.Setenv(k, v)
	}
	t.Setenv(ghost.CacheDirEnv, t.TempDir())
	root := t.TempDir()
	origin, ghosts, work := filepath.Join(root, "origin.git"), filepath.Join(root, "ghosts.git"), filepath.Join(root, "work")
	git(t, root, "init", "-q", "--bare", "-b", "main", origin)
	git(t, root, "init", "-q", "--bare", "-b", "main", ghosts)
	git(t, root, "clone", "-q", origin, work)
	write(t, filepath.Join(work, "train.py"), "lr = 0.1\n")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "pushed")
	git(t, work, "push", "-q", "origin", "HEAD:main")
	write(t, filepath.Join(work, "model.py"), "layers = 3\n")
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "not pushed")
	write(t, filepath.Join(work, "train.py"), "lr = 0.01  # edited, not committed\n")
	write(t, filepath.Join(work, "notes.txt"), "untracked\n")

	snap, err := ghost.Take(context.Background(), work, ghost.SnapshotOptions{GhostRepo: ghosts})
	if err != nil {
		t.Fatal(err)
	}
	snap.Repo = filepath.Join(root, "not-on-this-node")
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(root, "code")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dest, "stale"), "from a failed try\n")

	if err := Checkout(context.Background(), raw, dest); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"train.py": "lr = 0.01  # edited, not committed\n", "model.py": "layers = 3\n", "notes.txt": "untracked\n"} {
		if got, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "stale")); !os.IsNotExist(err) {
		t.Errorf("a file of the failed try is still there: %v", err)
	}
	if head := git(t, dest, "rev-parse", "HEAD"); head != snap.Head {
		t.Errorf("HEAD %s, want the researcher's unpushed commit %s", head, snap.Head)
	}
}

func TestCheckoutRefusesSnapshotsItCannotRebuild(t *testing.T) {
	for _, c := range []struct {
		snap ghost.Snapshot
		want string
	}{
		{ghost.Snapshot{Repo: "/home/me/p", Head: "abc"}, "has no remote to clone from"},
		{ghost.Snapshot{Repo: "/home/me/p", Origin: "https://example.com/p.git", Head: "abc", Dirty: true}, "not pushed to a ghost repository"},
	} {
		raw, _ := json.Marshal(c.snap)
		if err := Checkout(context.Background(), raw, t.TempDir()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Checkout(%+v) = %v, want %q", c.snap, err, c.want)
		}
	}
	if err := Checkout(context.Background(), []byte("{"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "code snapshot") {
		t.Errorf("bad JSON: %v", err)
	}
}

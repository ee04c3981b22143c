package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cli/ghostcmd"
)

// TestMain lets the test binary stand in for git-ghost: copied under that name into a
// directory on PATH, it is what `git ghost` runs.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "git-ghost" {
		os.Exit(ghostcmd.Main())
	}
	os.Exit(m.Run())
}

func TestRunsAsGitSubcommand(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "git-ghost"), self, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("JIKKEN_GHOST_CACHE", filepath.Join(root, "cache"))
	for _, kv := range []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"} {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	sh := func(dir, script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	sh(root, `mkdir -p "$HOME" && git init -q --bare origin.git && git init -q --bare ghost.git
git clone -q "file://$PWD/origin.git" sender 2>/dev/null && cd sender
echo a > a.txt && git add a.txt && git commit -q -m a && git push -q origin HEAD`)
	if v := sh(root, "git ghost version"); !strings.Contains(v, "git-ghost") {
		t.Fatalf("git ghost version = %q", v)
	}
	url := "file://" + filepath.Join(root, "ghost.git")
	t.Setenv("GIT_GHOST_REPO", url)
	out := sh(filepath.Join(root, "sender"), "echo b > a.txt && echo new > n.txt && git ghost push")
	_, hash, ok := strings.Cut(out, " ")
	if !ok {
		t.Fatalf("push printed %q, want \"<base> <hash>\"", out)
	}
	sh(root, `git clone -q "file://$PWD/origin.git" recv 2>/dev/null`)
	sh(filepath.Join(root, "recv"), "git ghost pull "+hash[:10]+` && test "$(cat a.txt)" = b && test "$(cat n.txt)" = new`)
}

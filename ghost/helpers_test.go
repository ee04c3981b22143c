package ghost

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// isolate points git and the ghost cache at temp dirs so tests never touch a real repository
// or the user's configuration.
func isolate(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for _, kv := range [][2]string{
		{"HOME", filepath.Join(root, "home")},
		{"XDG_CONFIG_HOME", filepath.Join(root, "home", ".config")},
		{"GIT_CONFIG_NOSYSTEM", "1"},
		{"GIT_AUTHOR_NAME", "Test"}, {"GIT_AUTHOR_EMAIL", "test@example.com"},
		{"GIT_COMMITTER_NAME", "Test"}, {"GIT_COMMITTER_EMAIL", "test@example.com"},
		{CacheDirEnv, filepath.Join(root, "cache")},
	} {
		t.Setenv(kv[0], kv[1])
	}
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"} {
		os.Unsetenv(v)
	}
	must(t, os.MkdirAll(filepath.Join(root, "home"), 0o755))
	run(t, root, "git", "config", "--global", "init.defaultBranch", "main")
	return root
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a command in dir and returns its trimmed stdout.
func run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, msg)
	}
	return strings.TrimSpace(string(out))
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return run(t, dir, "git", args...)
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}

// world is a bare origin, a bare ghost repository, and a sender cloned from origin.
type world struct {
	root, origin, ghostURL, sender string
}

func newWorld(t testing.TB) world {
	t.Helper()
	root := isolate(t)
	w := world{root: root, origin: filepath.Join(root, "origin.git"), sender: filepath.Join(root, "sender")}
	ghostDir := filepath.Join(root, "ghost.git")
	git(t, root, "init", "-q", "--bare", w.origin)
	git(t, root, "init", "-q", "--bare", ghostDir)
	w.ghostURL = "file://" + ghostDir
	git(t, root, "clone", "-q", "file://"+w.origin, w.sender)
	write(t, w.sender, "a.txt", "a\n")
	write(t, w.sender, "dir/b.txt", "b\n")
	write(t, w.sender, "old.txt", strings.Repeat("rename me\n", 20))
	write(t, w.sender, "gone.txt", "delete me\n")
	write(t, w.sender, "run.sh", "echo hi\n")
	write(t, w.sender, ".gitignore", "*.log\n")
	git(t, w.sender, "add", "-A")
	git(t, w.sender, "commit", "-q", "-m", "initial")
	git(t, w.sender, "push", "-q", "origin", "main")
	return w
}

// makeMess gives the sender every kind of change: unpushed commits, staged, unstaged,
// untracked, binary, mode, symlink, rename and delete.
func makeMess(t testing.TB, dir string) {
	t.Helper()
	write(t, dir, "a.txt", "a\nlocal commit 1\n")
	git(t, dir, "commit", "-q", "-am", "local 1")
	write(t, dir, "c.txt", "c\n")
	git(t, dir, "add", "c.txt")
	git(t, dir, "commit", "-q", "-m", "local 2")
	write(t, dir, "a.txt", "a\nlocal commit 1\nstaged\n")
	git(t, dir, "add", "a.txt")
	write(t, dir, "a.txt", "a\nlocal commit 1\nstaged\nunstaged\n")
	write(t, dir, "dir/b.txt", "b\nunstaged only\n")
	write(t, dir, "new/untracked.txt", "untracked\n")
	must(t, os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 255, 0, 10, 13, 0}, 0o644))
	git(t, dir, "add", "blob.bin")
	must(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	git(t, dir, "mv", "old.txt", "renamed.txt")
	git(t, dir, "rm", "-q", "gone.txt")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "staged-new.txt", "staged then removed\n")
	git(t, dir, "add", "staged-new.txt")
	must(t, os.Remove(filepath.Join(dir, "staged-new.txt")))
}

// stateOf returns HEAD, the index tree and the working-tree tree of dir.
func stateOf(t testing.TB, dir string) [3]string {
	t.Helper()
	w, err := openWorktree(context.Background(), dir)
	must(t, err)
	index, tree, err := w.trees(context.Background(), captureOptions{})
	must(t, err)
	if real := git(t, dir, "write-tree"); real != index {
		t.Fatalf("index tree %s from the copy, %s from the index itself", index, real)
	}
	return [3]string{git(t, dir, "rev-parse", "HEAD"), index, tree}
}

// emptyHash names the diff ghost of an unchanged working tree: the SHA-1 of an empty patch.
const emptyHash = "da39a3ee5e6b4b0d3255bfef95601890afd80709"

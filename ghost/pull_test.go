package ghost

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func receiver(t *testing.T, w world, name string) string {
	t.Helper()
	dir := filepath.Join(w.root, name)
	git(t, w.root, "clone", "-q", "file://"+w.origin, dir)
	return dir
}

func TestPushAllPullAllIntoFreshClone(t *testing.T) {
	w := newWorld(t)
	makeMess(t, w.sender)
	ctx := context.Background()
	want := stateOf(t, w.sender)
	wantStatus := git(t, w.sender, "status", "--porcelain")

	res, err := Push(ctx, PushOptions{Dir: filepath.Join(w.sender, "dir"), GhostRepo: w.ghostURL, Commits: true, Diff: true})
	must(t, err)
	if res.Commits == nil || res.Diff == nil {
		t.Fatalf("push result %+v, want both ghosts", res)
	}
	if res.Commits.From != git(t, w.sender, "rev-parse", "origin/main") {
		t.Errorf("commits start at %s, want origin/main", res.Commits.From)
	}

	recv := receiver(t, w, "recv")
	got, err := Pull(ctx, PullOptions{Dir: filepath.Join(recv, "dir"), GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash[:8]}, FindCommits: true})
	must(t, err)
	if got.Head != want[0] {
		t.Errorf("head after pull = %s, want the sender's %s", got.Head, want[0])
	}
	if s := stateOf(t, recv); s != want {
		t.Fatalf("receiver state %v, want %v", s, want)
	}
	if s := git(t, recv, "status", "--porcelain"); s != wantStatus {
		t.Fatalf("receiver status:\n%s\nwant\n%s", s, wantStatus)
	}
	if target := run(t, recv, "readlink", "link"); target != "a.txt" {
		t.Errorf("symlink points at %q", target)
	}

	// Commits first, then all: the commits are not applied twice.
	recv2 := receiver(t, w, "recv2")
	_, err = Pull(ctx, PullOptions{Dir: recv2, GhostRepo: w.ghostURL, Commits: &Selector{To: res.Commits.To}})
	must(t, err)
	_, err = Pull(ctx, PullOptions{Dir: recv2, GhostRepo: w.ghostURL, Commits: &Selector{}, Diff: &Selector{Hash: res.Diff.Hash}})
	must(t, err)
	if s := stateOf(t, recv2); s != want {
		t.Fatalf("state after pull commits, then pull all: %v, want %v", s, want)
	}

	// The same ghost again changes nothing.
	again, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, FindCommits: true})
	must(t, err)
	if !again.Unchanged {
		t.Errorf("second pull = %+v, want Unchanged", again)
	}
}

func TestPullRefusals(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	write(t, w.sender, "a.txt", "changed\n")
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)

	t.Run("dirty tree", func(t *testing.T) {
		recv := receiver(t, w, "dirty")
		write(t, recv, "other.txt", "local work\n")
		before := stateOf(t, recv)
		_, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}})
		if !errors.Is(err, ErrDirty) || !strings.Contains(err.Error(), "pass --force") {
			t.Fatalf("err = %v, want a dirty-tree refusal", err)
		}
		if stateOf(t, recv) != before {
			t.Fatal("a refused pull changed the repository")
		}
		write(t, recv, "dir/b.txt", "staged locally\n")
		git(t, recv, "add", "dir/b.txt")
		_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, Force: true})
		must(t, err)
		if got := run(t, recv, "cat", "a.txt"); got != "changed" {
			t.Errorf("a.txt = %q after a forced pull", got)
		}
		if got := git(t, recv, "status", "--porcelain"); got != "M a.txt\nM  dir/b.txt\n?? other.txt" { // the leading space of " M" is trimmed
			t.Errorf("status after a forced pull:\n%s", got)
		}
		// A ghost path with local changes: refused, and nothing changes.
		git(t, recv, "checkout", "-q", "--", "a.txt")
		write(t, recv, "a.txt", "mine\n")
		before = stateOf(t, recv)
		_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, Force: true})
		if err == nil || !strings.Contains(err.Error(), "a.txt") {
			t.Fatalf("forced pull over a local change to a ghost path = %v", err)
		}
		if stateOf(t, recv) != before {
			t.Fatal("a refused forced pull changed the repository")
		}
	})
	t.Run("head mismatch", func(t *testing.T) {
		recv := receiver(t, w, "mismatch")
		write(t, recv, "x.txt", "x\n")
		git(t, recv, "add", "x.txt")
		git(t, recv, "commit", "-q", "-m", "other")
		_, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}})
		if err == nil || !strings.Contains(err.Error(), "git checkout --detach "+res.Diff.From) {
			t.Fatalf("err = %v, want a mismatch naming the commit to check out", err)
		}
	})
	t.Run("short and ambiguous prefixes", func(t *testing.T) {
		recv := receiver(t, w, "prefix")
		_, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash[:4]}})
		if err == nil || !strings.Contains(err.Error(), "at least 7") {
			t.Fatalf("err = %v, want too short", err)
		}
		// A second ghost whose hash shares the first 7 characters cannot be made on purpose, so
		// the ghost repository gets a crafted branch next to the real one.
		fake := res.Diff.From + "/" + res.Diff.Hash[:7] + strings.Repeat("0", 33)
		git(t, w.root, "--git-dir", filepath.Join(w.root, "ghost.git"), "update-ref", "refs/heads/ghost/"+fake, res.Diff.Commit)
		_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash[:7]}})
		if err == nil || !strings.Contains(err.Error(), "ambiguous") {
			t.Fatalf("err = %v, want ambiguous", err)
		}
		git(t, w.root, "--git-dir", filepath.Join(w.root, "ghost.git"), "update-ref", "-d", "refs/heads/ghost/"+fake)
	})
	t.Run("patch that does not apply leaves the tree alone", func(t *testing.T) {
		recv := receiver(t, w, "noapply")
		// A ghost on the right base whose patch changes a file the base does not have.
		bad := "diff --git a/missing.txt b/missing.txt\nindex 0000000..1111111 100644\n--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-x\n+y\n"
		r, err := openRemote(ctx, w.ghostURL, "ghost", RemoteOptions{})
		must(t, err)
		commit, err := r.write(ctx, fallbackIdentity, []ghostFile{{diffFile, []byte(bad)}}, "Create ghost commit\n")
		must(t, err)
		g := Ghost{Kind: KindDiff, Prefix: "ghost", From: res.Diff.From, Hash: strings.Repeat("ab", 20)}
		must(t, r.push(ctx, map[string]string{g.Ref(): commit}))
		before := stateOf(t, recv)
		_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: "ababababab"}})
		if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
			t.Fatalf("err = %v, want a failed apply", err)
		}
		if stateOf(t, recv) != before {
			t.Fatal("a failed apply changed the repository")
		}
	})
}

func TestPushAllWithoutRemoteBaseFails(t *testing.T) {
	root := isolate(t)
	dir := filepath.Join(root, "lonely")
	git(t, root, "init", "-q", dir)
	write(t, dir, "a.txt", "a\n")
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "only local")
	ghostDir := filepath.Join(root, "ghost.git")
	git(t, root, "init", "-q", "--bare", ghostDir)
	_, err := Push(context.Background(), PushOptions{Dir: dir, GhostRepo: "file://" + ghostDir, Commits: true, Diff: true})
	if !errors.Is(err, ErrNoRemoteBase) || !strings.Contains(err.Error(), "--base") {
		t.Fatalf("err = %v, want ErrNoRemoteBase naming --base", err)
	}
}

func TestSubmoduleChangesAreRefused(t *testing.T) {
	w := newWorld(t)
	nested := filepath.Join(w.sender, "vendor", "lib")
	git(t, w.sender, "init", "-q", nested)
	write(t, nested, "x.txt", "x\n")
	git(t, nested, "add", "x.txt")
	git(t, nested, "commit", "-q", "-m", "nested")
	_, err := Push(context.Background(), PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	if err == nil || !strings.Contains(err.Error(), "submodule") {
		t.Fatalf("err = %v, want a submodule refusal", err)
	}
}

func TestUntrackedGuards(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	write(t, w.sender, ".env", "TOKEN=1\n")
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], ".env") {
		t.Errorf("warnings = %v, want one about .env", res.Warnings)
	}
	write(t, w.sender, "big.dat", strings.Repeat("x", 2048))
	_, err = Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true, MaxUntrackedSize: 1024})
	if err == nil || !strings.Contains(err.Error(), "big.dat") {
		t.Fatalf("err = %v, want the size guard to name big.dat", err)
	}
	res, err = Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true, NoUntracked: true})
	must(t, err)
	if res.Diff == nil || res.Diff.Hash != emptyHash || len(res.Files) != 0 {
		t.Errorf("push --no-untracked of untracked-only changes = %+v, want git-ghost's empty ghost", res.Diff)
	}
}

func TestRealSubmoduleChangesAreRefused(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	lib := filepath.Join(w.root, "lib")
	git(t, w.root, "init", "-q", lib)
	write(t, lib, "x.txt", "x\n")
	git(t, lib, "add", "x.txt")
	git(t, lib, "commit", "-q", "-m", "lib")
	git(t, w.sender, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "file://"+lib, "lib")
	git(t, w.sender, "commit", "-q", "-m", "add lib")

	write(t, filepath.Join(w.sender, "lib"), "x.txt", "edited inside\n")
	_, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	if err == nil || !strings.Contains(err.Error(), "submodule lib has uncommitted changes") {
		t.Fatalf("err = %v, want a refusal naming the dirty submodule", err)
	}
	git(t, filepath.Join(w.sender, "lib"), "commit", "-q", "-am", "move")
	_, err = Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	if err == nil || !strings.Contains(err.Error(), "submodule or nested repository lib changed") {
		t.Fatalf("err = %v, want a refusal naming the moved submodule", err)
	}
}

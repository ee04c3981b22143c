package ghost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jikken-dev/jikken/ghost/gitexec"
)

// SnapshotRefPrefix is where Snapshot keeps local snapshot commits in the user's repository.
const SnapshotRefPrefix = "refs/jikken/snapshots/"

// SnapshotOptions configure Take. The zero value takes a local snapshot.
type SnapshotOptions struct {
	// GhostRepo is the URL of a ghost repository. When set, local commits and the working state
	// are pushed there too, so Materialize works on other machines.
	GhostRepo string
	Prefix    string // ghost branch prefix (default "ghost")
	RemoteOptions
	// Base is the commit a receiver starts from (default: the newest commit of HEAD's history
	// on a remote). Only used with GhostRepo.
	Base             string
	NoUntracked      bool
	Include          []string
	MaxUntrackedSize int64 // 0: DefaultMaxUntrackedSize; negative: no limit
}

// Take records the state of the repository containing dir without changing the working
// tree, the index or HEAD. The state is always stored as commit objects under
// refs/jikken/snapshots/ in the repository itself; with opts.GhostRepo it is also pushed as
// ghosts (local commits since the remote base, then the working state). Like Push, it holds
// the repository's ghost lock.
func Take(ctx context.Context, dir string, opts SnapshotOptions) (Snapshot, error) {
	w, unlock, err := openLocked(ctx, dir)
	if err != nil {
		return Snapshot{}, fmt.Errorf("ghost snapshot: %w", err)
	}
	defer unlock()
	snap, err := takeSnapshot(ctx, w, opts)
	if err != nil {
		return snap, fmt.Errorf("ghost snapshot: %w", err)
	}
	return snap, nil
}

func takeSnapshot(ctx context.Context, w *worktree, opts SnapshotOptions) (Snapshot, error) {
	po := PushOptions{NoUntracked: opts.NoUntracked, Include: opts.Include, MaxUntrackedSize: opts.MaxUntrackedSize}
	co, err := po.capture(w)
	if err != nil {
		return Snapshot{}, err
	}
	st, err := w.capture(ctx, co)
	if err != nil {
		return Snapshot{}, err
	}
	headTree, err := w.git.Line(ctx, "rev-parse", st.Head+"^{tree}")
	if err != nil {
		return Snapshot{}, fmt.Errorf("read HEAD: %w", err)
	}
	m := w.baseMeta(ctx, KindDiff)
	id, err := w.identity(ctx, "")
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{
		Repo: w.root, Origin: m.Repo, Head: st.Head, Branch: m.Branch, Tree: st.Tree, Index: st.Index,
		Dirty: st.Tree != headTree || st.Index != headTree, Commit: st.Head, Files: st.Files, Warnings: st.Warnings,
	}
	if snap.Files == nil {
		snap.Files = []string{}
	}
	if snap.Dirty {
		m.Tree, m.Index, m.Files = st.Tree, st.Index, st.Files
		if snap.Commit, err = w.stashCommit(ctx, id, st, m); err != nil {
			return snap, err
		}
		snap.Ref = SnapshotRefPrefix + snap.Commit
		if _, err := w.git.Run(ctx, "update-ref", snap.Ref, snap.Commit); err != nil {
			return snap, fmt.Errorf("keep the snapshot commit: %w", err)
		}
	}
	if opts.GhostRepo == "" {
		snap.Base, _ = w.remoteBase(ctx, st.Head)
		return snap, nil
	}
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return snap, err
	}
	snap.GhostRepo = r.url
	if opts.Base != "" {
		snap.Base, err = w.resolve(ctx, opts.Base)
	} else {
		snap.Base, err = w.remoteBase(ctx, st.Head)
	}
	if err != nil {
		return snap, err
	}
	refs := map[string]string{}
	if snap.Base != st.Head {
		g, commit, err := w.commitsGhost(ctx, r, id, snap.Base, st.Head)
		if err != nil {
			return snap, err
		}
		refs[g.Ref()], snap.Commits = commit, &g
	}
	if snap.Dirty {
		g, commit, err := w.diffGhost(ctx, r, id, st.Head, st)
		if err != nil {
			return snap, err
		}
		refs[g.Ref()], snap.Diff = commit, &g
	}
	return snap, r.push(ctx, refs)
}

// stashCommit stores the state the way git stash does: a commit of the index on HEAD, and a
// commit of the working tree whose parents are HEAD and the index commit.
func (w *worktree) stashCommit(ctx context.Context, id identity, st state, m Meta) (string, error) {
	g := w.git.With(id.env()...)
	ic, err := g.Input(ctx, strings.NewReader("jikken snapshot: index\n"), "commit-tree", st.Index, "-p", st.Head)
	if err != nil {
		return "", fmt.Errorf("store the index: %w", err)
	}
	msg, err := FormatMessage(m)
	if err != nil {
		return "", err
	}
	msg = "jikken snapshot" + strings.TrimPrefix(msg, ghostSubject)
	wc, err := g.Input(ctx, strings.NewReader(msg), "commit-tree", st.Tree, "-p", st.Head, "-p", strings.TrimSpace(string(ic)))
	if err != nil {
		return "", fmt.Errorf("store the working tree: %w", err)
	}
	return strings.TrimSpace(string(wc)), nil
}

// Materialize creates destDir holding exactly the snapshot's state: HEAD at snap.Head
// (detached), the index and the working tree as they were, untracked files included. On the
// machine where the snapshot was taken it adds a git worktree of snap.Repo (cheap: objects are
// shared); elsewhere it clones snap.Origin and pulls the ghosts from snap.GhostRepo. destDir
// must not exist or be empty. Release removes it.
func Materialize(ctx context.Context, snap Snapshot, destDir string) error {
	if err := materialize(ctx, snap, destDir); err != nil {
		return fmt.Errorf("ghost materialize %s: %w", destDir, err)
	}
	return nil
}

func materialize(ctx context.Context, snap Snapshot, destDir string) error {
	if snap.Head == "" || snap.Tree == "" || snap.Index == "" {
		return errors.New("the snapshot has no head, tree or index; take it with ghost.Take")
	}
	dest, err := filepath.Abs(destDir)
	if err != nil {
		return err
	}
	if canUseLocal(ctx, snap) {
		// A clone that borrows the repository's objects (--shared) rather than a git worktree:
		// nothing is registered in the user's repository, so a runner killed before it removes
		// the copy leaves only a folder behind, never a worktree entry.
		parent := gitexec.Client{Dir: filepath.Dir(dest)}
		if _, err := parent.Run(ctx, "clone", "-q", "--shared", "--no-checkout", snap.Repo, dest); err != nil {
			return fmt.Errorf("copy %s: %w", snap.Repo, err)
		}
		c := gitexec.Client{Dir: dest}
		if url, err := (gitexec.Client{Dir: snap.Repo}).Run(ctx, "remote", "get-url", "origin"); err == nil {
			_, _ = c.Run(ctx, "remote", "set-url", "origin", strings.TrimSpace(string(url)))
		}
		if _, err := c.Run(ctx, "checkout", "-q", "--detach", snap.Head); err != nil {
			return fmt.Errorf("check out %s: %w", short(snap.Head), err)
		}
		w, unlock, err := openLocked(ctx, dest)
		if err != nil {
			return err
		}
		defer unlock()
		return w.switchTo(ctx, target{start: snap.Head, head: snap.Head, tree: snap.Tree, index: snap.Index}, nil)
	}
	if snap.Origin == "" || (snap.Head != snap.Base && snap.Commits == nil) || (snap.Dirty && snap.Diff == nil) {
		return fmt.Errorf("the snapshot's objects are not in %s and it was not pushed to a ghost repository; take snapshots with a ghost repository to use them on other machines", snap.Repo)
	}
	parent := gitexec.Client{Dir: filepath.Dir(dest)}
	if _, err := parent.Run(ctx, "clone", "-q", "--no-checkout", snap.Origin, dest); err != nil {
		return fmt.Errorf("clone %s: %w", snap.Origin, err)
	}
	if _, err := (gitexec.Client{Dir: dest}).Run(ctx, "checkout", "-q", "--detach", snap.Base); err != nil {
		return fmt.Errorf("check out base %s: %w", short(snap.Base), err)
	}
	prefix := DefaultPrefix
	for _, g := range []*Ghost{snap.Commits, snap.Diff} {
		if g != nil {
			prefix = g.Prefix
		}
	}
	r, err := openRemote(ctx, snap.GhostRepo, prefix, RemoteOptions{})
	if err != nil {
		return err
	}
	if snap.Commits == nil && snap.Diff == nil {
		return nil
	}
	w, unlock, err := openLocked(ctx, dest)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = apply(ctx, w, r, snap.Commits, snap.Diff, false)
	return err
}

// openLocked opens the repository at dir holding its ghost lock.
func openLocked(ctx context.Context, dir string) (*worktree, func(), error) {
	w, err := openWorktree(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := w.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	return w, unlock, nil
}

// canUseLocal reports whether the snapshot's repository is on this machine and has its objects.
func canUseLocal(ctx context.Context, snap Snapshot) bool {
	if snap.Repo == "" {
		return false
	}
	if _, err := os.Stat(snap.Repo); err != nil {
		return false
	}
	w := &worktree{git: gitexec.Client{Dir: snap.Repo}, root: snap.Repo}
	have := w.has(ctx, snap.Head, snap.Tree, snap.Index)
	return have[snap.Head] && have[snap.Tree] && have[snap.Index]
}

// Release removes a directory made by Materialize (unregistering it if an older jikken made it a
// git worktree).
func Release(ctx context.Context, snap Snapshot, destDir string) error {
	dest, err := filepath.Abs(destDir)
	if err != nil {
		return err
	}
	if snap.Repo != "" {
		src := gitexec.Client{Dir: snap.Repo}
		if _, err := src.Run(ctx, "worktree", "remove", "--force", "--force", dest); err == nil {
			return nil
		}
	}
	if err := os.RemoveAll(dest); err != nil {
		return fmt.Errorf("ghost release %s: %w", destDir, err)
	}
	if snap.Repo != "" {
		_, _ = gitexec.Client{Dir: snap.Repo}.Run(ctx, "worktree", "prune")
	}
	return nil
}

package ghost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// MinPrefixLen is the shortest hash prefix that names a ghost.
const MinPrefixLen = 7

// ErrDirty means the working tree has changes a pull would mix with the ghost's.
var ErrDirty = errors.New("working tree has changes")

// Selector picks ghosts by (prefixes of) their hashes. Empty fields match anything.
type Selector struct {
	From string // base commit
	To   string // last commit of a commits ghost
	Hash string // patch hash of a diff ghost
}

// PullOptions say which ghosts to apply where.
type PullOptions struct {
	Dir       string
	GhostRepo string
	Prefix    string
	// Commits and Diff select the ghosts; with both, the diff must apply on the commits' end.
	// With only Diff and FindCommits, the commits ghost ending at the diff's base is found and
	// applied first when HEAD is not that base yet.
	Commits     *Selector
	Diff        *Selector
	FindCommits bool
	// Force applies on a working tree with local changes; paths the ghost touches must still be
	// clean, or nothing is changed.
	Force bool
}

// PullResult says what a pull did.
type PullResult struct {
	Commits *Ghost `json:"commits,omitempty"`
	Diff    *Ghost `json:"diff,omitempty"`
	Head    string `json:"head"`
	// Unchanged is true when the repository already was in the ghost's state.
	Unchanged bool `json:"unchanged"`
	// Rewritten is true when commits came from a git-ghost patch (git am), so their hashes
	// differ from the sender's.
	Rewritten bool `json:"rewritten,omitempty"`
}

// Pull applies ghosts to the repository containing opts.Dir, at its top level.
func Pull(ctx context.Context, opts PullOptions) (PullResult, error) {
	w, err := openWorktree(ctx, opts.Dir)
	if err != nil {
		return PullResult{}, fmt.Errorf("ghost pull: %w", err)
	}
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix))
	if err != nil {
		return PullResult{}, fmt.Errorf("ghost pull: %w", err)
	}
	commits, diff, err := r.choose(ctx, w, opts)
	if err != nil {
		return PullResult{}, fmt.Errorf("ghost pull: %w", err)
	}
	res, err := apply(ctx, w, r, commits, diff, opts.Force)
	if err != nil {
		return res, fmt.Errorf("ghost pull: %w", err)
	}
	return res, nil
}

// choose resolves the selectors against the ghost repository's branches.
func (r *remote) choose(ctx context.Context, w *worktree, opts PullOptions) (commits, diff *Ghost, err error) {
	all, err := r.list(ctx)
	if err != nil {
		return nil, nil, err
	}
	if opts.Diff != nil {
		g, err := r.pick(ctx, w, all, KindDiff, *opts.Diff)
		if err != nil {
			return nil, nil, err
		}
		diff = &g
	}
	if opts.Commits != nil {
		sel := *opts.Commits
		if diff != nil && sel.To == "" {
			sel.To = diff.From
		}
		g, err := r.pick(ctx, w, all, KindCommits, sel)
		if err != nil {
			return nil, nil, err
		}
		commits = &g
	} else if opts.FindCommits && diff != nil {
		head, _ := w.head(ctx)
		if head != diff.From && !w.hasObject(ctx, diff.From+"^{commit}") {
			if g, err := r.pick(ctx, w, all, KindCommits, Selector{To: diff.From}); err == nil {
				commits = &g
			}
		}
	}
	if commits != nil && diff != nil && commits.To != diff.From {
		return nil, nil, fmt.Errorf("commits ghost ends at %s but diff ghost %s starts at %s; pick ghosts that belong together", short(commits.To), short(diff.Hash), short(diff.From))
	}
	return commits, diff, nil
}

// pick finds the one ghost of kind that sel matches.
func (r *remote) pick(ctx context.Context, w *worktree, all []Ghost, kind Kind, sel Selector) (Ghost, error) {
	key := sel.Hash
	if kind == KindCommits {
		key = sel.To
	}
	if key == "" {
		return Ghost{}, fmt.Errorf("no %s hash given; run 'list' to see the ghosts", kind)
	}
	if len(key) < MinPrefixLen && !isObjectName(key) {
		return Ghost{}, fmt.Errorf("hash %q is too short; give at least %d characters", key, MinPrefixLen)
	}
	key = strings.ToLower(key)
	from := strings.ToLower(sel.From)
	if from != "" && !isHex(from) {
		// git-ghost accepts a commit-ish (HEAD, a branch) as base.
		if h, err := w.resolve(ctx, from); err == nil {
			from = h
		}
	}
	var found []Ghost
	for _, g := range all {
		if g.Kind != kind {
			continue
		}
		v := g.Hash
		if kind == KindCommits {
			v = g.To
		}
		if strings.HasPrefix(v, key) && strings.HasPrefix(g.From, from) {
			found = append(found, g)
		}
	}
	switch len(found) {
	case 0:
		return Ghost{}, fmt.Errorf("no %s ghost matches %s under prefix %q in %s; run 'list' to see the ghosts", kind, key, r.prefix, r.url)
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, g := range found {
		names[i] = g.ID()
	}
	return Ghost{}, fmt.Errorf("hash %s is ambiguous: it matches %d ghosts (%s); give more characters", key, len(found), strings.Join(names, ", "))
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// target is the state a pull produces.
type target struct {
	start, head, tree, index string
}

func apply(ctx context.Context, w *worktree, r *remote, commits, diff *Ghost, force bool) (PullResult, error) {
	res := PullResult{Commits: commits, Diff: diff}
	var gs []Ghost
	for _, g := range []*Ghost{commits, diff} {
		if g != nil {
			gs = append(gs, *g)
		}
	}
	if len(gs) == 0 {
		return res, errors.New("nothing to pull")
	}
	if err := r.fetch(ctx, gs...); err != nil {
		return res, err
	}
	head, err := w.head(ctx)
	if err != nil {
		return res, err
	}
	res.Head = head
	if commits != nil && diff != nil && head == commits.To {
		// The commits are here already (an earlier pull, or a fetch): only the diff is left.
		gs = gs[1:]
		commits, res.Commits = nil, nil
	}
	t := target{start: gs[0].From}
	t.head = t.start
	var amPatch []byte
	if commits != nil {
		t.head = commits.To
		if !w.hasObject(ctx, commits.To+"^{commit}") {
			ok, patch, err := w.importCommits(ctx, r, *commits)
			if err != nil {
				return res, err
			}
			if !ok {
				amPatch = patch
			}
		}
	}
	if amPatch == nil {
		if err := w.buildTarget(ctx, r, diff, &t); err != nil {
			return res, err
		}
	}
	var dirty []string
	if head == t.start || head == t.head {
		if dirty, err = w.dirtyFiles(ctx); err != nil {
			return res, err
		}
	}
	if amPatch == nil && head == t.head {
		if same, err := w.alreadyApplied(ctx, t, dirty); err != nil || same {
			res.Unchanged = same
			return res, err
		}
	}
	if err := w.checkStart(ctx, head, t.start, force, dirty); err != nil {
		return res, err
	}
	if amPatch != nil {
		if t, err = w.applyMailbox(ctx, r, amPatch, diff); err != nil {
			return res, err
		}
		res.Rewritten = true
	}
	if err := w.checkout(ctx, t.start, t.head, t.tree, t.index); err != nil {
		return res, err
	}
	res.Head = t.head
	return res, nil
}

// alreadyApplied reports whether the repository, whose HEAD is t.head, already is in the target
// state. A clean tree is, only if the target is HEAD itself; a dirty one may be the result of
// pulling the same ghost before.
func (w *worktree) alreadyApplied(ctx context.Context, t target, dirty []string) (bool, error) {
	if len(dirty) == 0 {
		return t.tree == t.index && t.head == t.start && w.isTree(ctx, t.head, t.tree), nil
	}
	return w.inState(ctx, t)
}

// applyMailbox creates the commits of a git-ghost commits ghost with git am and returns the
// target on top of them: the diff (whose base was the sender's last commit) applies to the new
// HEAD instead.
func (w *worktree) applyMailbox(ctx context.Context, r *remote, patch []byte, diff *Ghost) (target, error) {
	newHead, err := w.am(ctx, patch)
	if err != nil {
		return target{}, err
	}
	t := target{start: newHead, head: newHead}
	var d *Ghost
	if diff != nil {
		moved := *diff
		moved.From = newHead
		d = &moved
	}
	return t, w.buildTarget(ctx, r, d, &t)
}

// checkStart refuses to apply unless HEAD is the ghost's base and (without force) the working
// tree is clean.
func (w *worktree) checkStart(ctx context.Context, head, start string, force bool, dirty []string) error {
	if head != start {
		if !w.hasObject(ctx, start+"^{commit}") {
			return fmt.Errorf("the ghost applies to commit %s, which this repository does not have; fetch it (git fetch origin) and check it out, or have the sender push with 'push all' so the commits travel too", short(start))
		}
		return fmt.Errorf("HEAD is %s but the ghost applies to %s; check that commit out first (git checkout --detach %s, or git switch -c <branch> %s) and pull again", short(head), short(start), start, start)
	}
	if len(dirty) > 0 && !force {
		return fmt.Errorf("%w in %d files (%s); commit or stash them, or pass --force", ErrDirty, len(dirty), listSome(dirty, 3))
	}
	return nil
}

func listSome(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", and %d more", len(s)-n)
}

// importCommits adds the commit objects of a commits ghost to the repository. It returns
// ok=false and the mailbox patch when the ghost has no pack (git-ghost wrote it).
func (w *worktree) importCommits(ctx context.Context, r *remote, g Ghost) (ok bool, patch []byte, err error) {
	commit, err := r.commitOf(ctx, g)
	if err != nil {
		return false, nil, err
	}
	if !w.hasObject(ctx, g.From+"^{commit}") {
		return false, nil, fmt.Errorf("the commits ghost starts after %s, which this repository does not have; fetch it from origin (git fetch origin)", short(g.From))
	}
	c, err := r.read(ctx, commit, commitsPack, commitsFile)
	if err != nil {
		return false, nil, err
	}
	pack, ok := c.files[commitsPack]
	if !ok {
		patch, ok := c.files[commitsFile]
		if !ok {
			return false, nil, fmt.Errorf("commits ghost %s has neither %s nor %s", g.ID(), commitsPack, commitsFile)
		}
		return false, patch, nil
	}
	if _, err := w.git.Input(ctx, bytes.NewReader(pack), "index-pack", "--stdin", "--fix-thin"); err != nil {
		return false, nil, fmt.Errorf("import the commits of ghost %s: %w", g.ID(), err)
	}
	if _, err := w.git.Run(ctx, "merge-base", "--is-ancestor", g.From, g.To); err != nil {
		return false, nil, fmt.Errorf("ghost %s did not bring commit %s on top of %s; the ghost may be damaged", g.ID(), short(g.To), short(g.From))
	}
	return true, nil, nil
}

// am applies a git-ghost mailbox patch; the commits get new hashes.
func (w *worktree) am(ctx context.Context, patch []byte) (string, error) {
	if _, err := w.git.With(identityEnv()[2:]...).Input(ctx, bytes.NewReader(patch), "am", "-q", "--keep-cr", "--committer-date-is-author-date"); err != nil {
		_, _ = w.git.Run(ctx, "am", "--abort")
		return "", fmt.Errorf("apply the commits with git am (aborted, nothing changed): %w", err)
	}
	return w.head(ctx)
}

// buildTarget rebuilds the working-tree and index trees of a diff ghost (or of t.head when
// there is no diff) in a temporary index: a patch that does not apply fails here, before any
// file is touched.
func (w *worktree) buildTarget(ctx context.Context, r *remote, diff *Ghost, t *target) error {
	headTree, err := w.git.Line(ctx, "rev-parse", t.head+"^{tree}")
	if err != nil {
		return fmt.Errorf("read commit %s: %w", short(t.head), err)
	}
	t.tree, t.index = headTree, headTree
	if diff == nil {
		return nil
	}
	commit, err := r.commitOf(ctx, *diff)
	if err != nil {
		return err
	}
	c, err := r.read(ctx, commit, diffFile, indexFile)
	if err != nil {
		return err
	}
	patch, ok := c.files[diffFile]
	if !ok {
		return fmt.Errorf("diff ghost %s has no %s", diff.ID(), diffFile)
	}
	if t.tree, err = w.applyToTree(ctx, t.head, patch); err != nil {
		return fmt.Errorf("ghost %s does not apply to %s (nothing was changed): %w", short(diff.Hash), short(t.head), err)
	}
	if ip, ok := c.files[indexFile]; ok {
		switch {
		case len(bytes.TrimSpace(ip)) == 0:
			// nothing staged: the index is the base commit's tree
		case bytes.Equal(ip, patch):
			t.index = t.tree
		default:
			if t.index, err = w.applyToTree(ctx, t.head, ip); err != nil {
				return fmt.Errorf("the staged part of ghost %s does not apply to %s (nothing was changed): %w", short(diff.Hash), short(t.head), err)
			}
		}
	}
	if m := c.meta; m != nil && diff.From == t.head {
		if m.Tree != "" && m.Tree != t.tree || m.Index != "" && m.Index != t.index {
			return fmt.Errorf("ghost %s rebuilt a different state than the sender recorded (tree %s, want %s); the ghost may be damaged", short(diff.Hash), short(t.tree), short(m.Tree))
		}
	}
	return nil
}

// applyToTree applies patch to commit's tree in a temporary index and returns the new tree.
func (w *worktree) applyToTree(ctx context.Context, commit string, patch []byte) (string, error) {
	g, _, done, err := w.tempIndex()
	if err != nil {
		return "", err
	}
	defer done()
	if _, err := g.Run(ctx, "read-tree", commit); err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(patch)) > 0 {
		if _, err := g.Input(ctx, bytes.NewReader(patch), "apply", "--cached", "--binary", "-"); err != nil {
			return "", err
		}
	}
	return g.Line(ctx, "write-tree")
}

// isTree reports whether commit's tree is tree.
func (w *worktree) isTree(ctx context.Context, commit, tree string) bool {
	t, err := w.git.Line(ctx, "rev-parse", commit+"^{tree}")
	return err == nil && t == tree
}

// inState reports whether the index and the working tree already are the target's.
func (w *worktree) inState(ctx context.Context, t target) (bool, error) {
	index, tree, err := w.trees(ctx, captureOptions{})
	if err != nil {
		return false, err
	}
	return index == t.index && tree == t.tree, nil
}

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

// Selector picks ghosts. Empty fields match anything. From and To are revisions: a name the
// repository resolves (HEAD, a branch or a tag, in its own case) stands for its commit, anything
// else is a prefix of a commit hash. Hash is a prefix of a diff ghost's patch hash.
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
	RemoteOptions
	// Commits and Diff select the ghosts; with both, the diff must apply on the commits' end.
	// With only Diff and FindCommits, when HEAD is not the diff's base, the commits ghost from
	// HEAD to that base (or, when the base commit is missing here, any commits ghost ending
	// there) is applied first.
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
	// Rewritten is true when commits came from a git-ghost patch (applied as git am would), so
	// their hashes differ from the sender's.
	Rewritten bool `json:"rewritten,omitempty"`
}

// Pull applies ghosts to the repository containing opts.Dir, at its top level. It holds the
// repository's ghost lock throughout, so pulls into one repository run one at a time, and it
// first finishes a pull that was killed while it switched the working tree (see switchTo).
func Pull(ctx context.Context, opts PullOptions) (PullResult, error) {
	res, err := pull(ctx, opts)
	if err != nil {
		return res, fmt.Errorf("ghost pull: %w", err)
	}
	return res, nil
}

func pull(ctx context.Context, opts PullOptions) (PullResult, error) {
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return PullResult{}, err
	}
	w, unlock, err := openLocked(ctx, opts.Dir)
	if err != nil {
		return PullResult{}, err
	}
	defer unlock()
	commits, diff, err := r.choose(ctx, w, opts)
	if err != nil {
		return PullResult{}, err
	}
	return apply(ctx, w, r, commits, diff, opts.Force)
}

// choose resolves the selectors against the ghost repository's branches. w may be nil (no
// repository), then only hashes select.
func (r *remote) choose(ctx context.Context, w *worktree, opts PullOptions) (commits, diff *Ghost, err error) {
	var all []Ghost
	if opts.Commits != nil || opts.Diff != nil {
		if all, err = r.list(ctx); err != nil {
			return nil, nil, err
		}
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
	} else if opts.FindCommits && diff != nil && w != nil && w.start != diff.From {
		// The commits that lead to the diff's base: those from HEAD when a ghost has them, else
		// (the base is not here) whichever ghost ends at the base.
		if g, err := r.pick(ctx, w, all, KindCommits, Selector{From: w.start, To: diff.From}); err == nil {
			commits = &g
		} else if !w.has(ctx, diff.From)[diff.From] {
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
	var key string
	var err error
	if kind == KindCommits {
		if sel.To == "" {
			return Ghost{}, errors.New("no commit given for the commits ghost; run 'list commits' to see the ghosts")
		}
		key, err = w.revision(ctx, sel.To)
	} else {
		key, err = hashPrefix(sel.Hash)
	}
	if err != nil {
		return Ghost{}, err
	}
	from, err := w.revision(ctx, sel.From)
	if err != nil {
		return Ghost{}, err
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
		based := ""
		if sel.From != "" {
			based = fmt.Sprintf(" on base %s (%s)", sel.From, short(from))
		}
		return Ghost{}, fmt.Errorf("no %s ghost matches %s%s under prefix %q in %s; run 'list' to see the ghosts", kind, key, based, r.prefix, r.url)
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, g := range found {
		names[i] = g.ID()
	}
	return Ghost{}, fmt.Errorf("hash %s is ambiguous: it matches %d ghosts (%s); give more characters", key, len(found), strings.Join(names, ", "))
}

// hashPrefix checks a diff hash argument: hexadecimal, at least MinPrefixLen characters.
func hashPrefix(s string) (string, error) {
	if s == "" {
		return "", errors.New("no diff hash given; run 'list' to see the ghosts")
	}
	h := strings.ToLower(s)
	if !isHex(h) {
		return "", fmt.Errorf("%q is not a hash; give the second column of 'list'", s)
	}
	if len(h) < MinPrefixLen {
		return "", fmt.Errorf("hash %q is too short; give at least %d characters", s, MinPrefixLen)
	}
	return h, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// target is the state a pull produces: HEAD moves from start to head, the working tree becomes
// tree and the index index. treeIndex, when set, is an index file holding tree.
type target struct {
	start, head, tree, index string
	treeIndex                string
}

func apply(ctx context.Context, w *worktree, r *remote, commits, diff *Ghost, force bool) (PullResult, error) {
	res := PullResult{Commits: commits, Diff: diff, Head: w.start}
	if w.start == "" {
		return res, errors.New("the repository has no commit yet; clone the repository the ghost was taken in")
	}
	if commits != nil && diff != nil && w.start == commits.To {
		// The commits are here already (an earlier pull, or a fetch): only the diff is left.
		commits, res.Commits = nil, nil
	}
	var gs []Ghost
	for _, g := range []*Ghost{commits, diff} {
		if g != nil {
			gs = append(gs, *g)
		}
	}
	if len(gs) == 0 {
		return res, errors.New("nothing to pull")
	}
	loaded, err := r.load(ctx, gs...)
	if err != nil {
		return res, err
	}
	t := target{start: gs[0].From, head: gs[0].From}
	var mailbox []byte
	if commits != nil {
		t.head = commits.To
		if mailbox, err = w.importCommits(ctx, *commits, loaded[commits.ID()]); err != nil {
			return res, err
		}
	}
	dirty, err := w.dirtyFiles(ctx)
	if err != nil {
		return res, err
	}
	scratch, err := w.scratch()
	if err != nil {
		return res, err
	}
	defer scratch.remove()
	var patches *contents
	if diff != nil {
		c := loaded[diff.ID()]
		patches = &c
	}
	if mailbox == nil {
		if err := w.buildTarget(ctx, scratch, patches, diff, len(dirty) == 0, &t); err != nil {
			return res, err
		}
		if w.start == t.head {
			if same, err := w.alreadyApplied(ctx, t, dirty); err != nil || same {
				res.Unchanged = same
				return res, err
			}
		}
	}
	if err := w.checkStart(ctx, t.start, force, dirty); err != nil {
		return res, err
	}
	if mailbox != nil {
		if t, err = w.applyMailbox(ctx, scratch, t.start, mailbox, patches, diff); err != nil {
			return res, err
		}
		res.Rewritten = true
	}
	if err := w.switchTo(ctx, t, dirty); err != nil {
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
		return t.tree == t.index && t.head == t.start && t.tree == w.startTree, nil
	}
	index, tree, err := w.trees(ctx, captureOptions{})
	if err != nil {
		return false, err
	}
	return index == t.index && tree == t.tree, nil
}

// checkStart refuses to apply unless HEAD is the ghost's base and (without force) the working
// tree is clean.
func (w *worktree) checkStart(ctx context.Context, start string, force bool, dirty []string) error {
	if w.start != start {
		if !w.has(ctx, start)[start] {
			return fmt.Errorf("the ghost applies to commit %s, which this repository does not have; fetch it (git fetch origin) and check it out, or have the sender push with 'push all' so the commits travel too", short(start))
		}
		return fmt.Errorf("HEAD is %s but the ghost applies to %s; check that commit out first (git checkout --detach %s, or git switch -c <branch> %s) and pull again", short(w.start), short(start), start, start)
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

// importCommits adds the commit objects of a commits ghost to the repository, unless it has
// them. It returns the mailbox patch instead when the ghost has no pack (git-ghost wrote it).
func (w *worktree) importCommits(ctx context.Context, g Ghost, c contents) (mailbox []byte, err error) {
	if g.From == g.To || w.start == g.To {
		return nil, nil
	}
	have := w.has(ctx, g.From, g.To)
	if have[g.To] {
		return nil, nil
	}
	if !have[g.From] {
		return nil, fmt.Errorf("the commits ghost starts after %s, which this repository does not have; fetch it from origin (git fetch origin)", short(g.From))
	}
	pack, ok := c.files[commitsPack]
	if !ok {
		patch, ok := c.files[commitsFile]
		if !ok {
			return nil, fmt.Errorf("commits ghost %s has neither %s nor %s", g.ID(), commitsPack, commitsFile)
		}
		return patch, nil
	}
	if _, err := w.git.Input(ctx, bytes.NewReader(pack), "index-pack", "--stdin", "--fix-thin"); err != nil {
		return nil, fmt.Errorf("import the commits of ghost %s: %w", g.ID(), err)
	}
	if _, err := w.git.Run(ctx, "merge-base", "--is-ancestor", g.From, g.To); err != nil {
		return nil, fmt.Errorf("ghost %s did not bring commit %s on top of %s; the ghost may be damaged", g.ID(), short(g.To), short(g.From))
	}
	return nil, nil
}

// applyMailbox creates the commits of a git-ghost commits ghost, as git am would, and returns
// the target on top of them: the diff (whose base was the sender's last commit) applies to the
// new last commit instead.
func (w *worktree) applyMailbox(ctx context.Context, s *scratch, start string, mailbox []byte, patches *contents, diff *Ghost) (target, error) {
	newHead, err := w.commitMailbox(ctx, s, start, mailbox)
	if err != nil {
		return target{}, err
	}
	t := target{start: start, head: newHead}
	var moved *Ghost
	if diff != nil {
		d := *diff
		d.From = newHead
		moved = &d
	}
	return t, w.buildTarget(ctx, s, patches, moved, false, &t)
}

// buildTarget computes the working-tree and index trees of a diff ghost (or of t.head when
// there is none) in a scratch index: a patch that does not apply fails here, before any file
// is touched. clean says the index equals HEAD, so a copy of it (with its stat data) can start
// the scratch index when HEAD stays.
func (w *worktree) buildTarget(ctx context.Context, s *scratch, patches *contents, diff *Ghost, clean bool, t *target) error {
	headTree, err := w.treeOf(ctx, t.head)
	if err != nil {
		return err
	}
	t.tree, t.index = headTree, headTree
	if diff == nil {
		return nil
	}
	patch, ok := patches.files[diffFile]
	if !ok {
		return fmt.Errorf("diff ghost %s has no %s", diff.ID(), diffFile)
	}
	base := ""
	if clean && t.head == w.start {
		base = w.indexFile()
	}
	if len(bytes.TrimSpace(patch)) > 0 {
		t.treeIndex = s.path("tree.index")
		if t.tree, err = w.applyToTree(ctx, t.treeIndex, base, t.head, patch); err != nil {
			return fmt.Errorf("ghost %s does not apply to %s (nothing was changed): %w", short(diff.Hash), short(t.head), err)
		}
	}
	if ip, ok := patches.files[indexFile]; ok {
		switch {
		case len(bytes.TrimSpace(ip)) == 0:
			// nothing staged: the index is the base commit's tree
		case bytes.Equal(ip, patch):
			t.index = t.tree
		default:
			if t.index, err = w.applyToTree(ctx, s.path("staged.index"), base, t.head, ip); err != nil {
				return fmt.Errorf("the staged part of ghost %s does not apply to %s (nothing was changed): %w", short(diff.Hash), short(t.head), err)
			}
		}
	}
	if m := patches.meta; m != nil && diff.From == t.head {
		if m.Tree != "" && m.Tree != t.tree || m.Index != "" && m.Index != t.index {
			return fmt.Errorf("ghost %s rebuilt a different state than the sender recorded (tree %s, want %s); the ghost may be damaged", short(diff.Hash), short(t.tree), short(m.Tree))
		}
	}
	return nil
}

// treeOf returns the tree of a commit, without a git call for HEAD's.
func (w *worktree) treeOf(ctx context.Context, commit string) (string, error) {
	if commit == w.start {
		return w.startTree, nil
	}
	tree, err := w.git.Line(ctx, "rev-parse", "--verify", "-q", commit+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("read commit %s: %w", short(commit), err)
	}
	return tree, nil
}

// applyToTree applies patch to commit's tree in the index file at path and returns the new
// tree. The index starts as a copy of base when given (an index file holding commit's tree),
// else it is read from commit.
func (w *worktree) applyToTree(ctx context.Context, path, base, commit string, patch []byte) (string, error) {
	g := w.git.With("GIT_INDEX_FILE=" + path)
	if base != "" {
		if err := copyIndex(base, path); err != nil {
			return "", fmt.Errorf("copy the index: %w", err)
		}
	} else if _, err := g.Run(ctx, "read-tree", commit); err != nil {
		return "", err
	}
	if _, err := g.Input(ctx, bytes.NewReader(patch), "apply", "--cached", "--binary", "-"); err != nil {
		return "", err
	}
	return g.Line(ctx, "write-tree")
}

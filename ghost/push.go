package ghost

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNoRemoteBase means no commit of HEAD's history is known to be on a remote, so a receiver
// that clones the origin could not start from any of them.
var ErrNoRemoteBase = errors.New("no commit of HEAD's history is on a remote")

// PushOptions say what to push where.
type PushOptions struct {
	Dir       string // any directory inside the repository (default: the current one)
	GhostRepo string // URL of the ghost repository
	Prefix    string // branch prefix in the ghost repository (default "ghost")
	RemoteOptions
	// Identity ("Name <email>") makes the ghost commits; empty means the user's git identity.
	Identity string

	// Commits pushes the local commits between From and To as a commits ghost.
	Commits bool
	// Diff pushes the working state relative to DiffFrom as a diff ghost.
	Diff bool
	// From is where the commits start (exclusive). Empty means the merge base of HEAD with what
	// the remotes have (see ErrNoRemoteBase).
	From string
	// To is the last commit of the range (default HEAD).
	To string
	// DiffFrom is the commit the diff is taken against (default HEAD).
	DiffFrom string

	Include          []string // files added even when untracked or ignored (git-ghost's -I)
	FollowSymlinks   bool     // with Include: also include the target of an included symlink
	NoUntracked      bool     // leave untracked files out (only tracked files and Include)
	MaxUntrackedSize int64    // 0: DefaultMaxUntrackedSize; negative: no limit
}

// PushResult names what was pushed. As in git-ghost, a push with nothing to push still pushes
// (and names) an empty ghost, whose hash is the SHA-1 of nothing, da39a3ee...
type PushResult struct {
	Commits  *Ghost   `json:"commits,omitempty"`
	Diff     *Ghost   `json:"diff,omitempty"`
	Files    []string `json:"files"`
	Warnings []string `json:"warnings,omitempty"`
}

func (o PushOptions) prefix() string {
	if o.Prefix == "" {
		return DefaultPrefix
	}
	return o.Prefix
}

// DefaultPrefix is git-ghost's default branch prefix.
const DefaultPrefix = "ghost"

func (o PushOptions) capture(w *worktree) (captureOptions, error) {
	co := captureOptions{NoUntracked: o.NoUntracked, MaxUntrackedSize: o.MaxUntrackedSize}
	if co.MaxUntrackedSize == 0 {
		co.MaxUntrackedSize = DefaultMaxUntrackedSize
	}
	for _, p := range o.Include {
		rel, err := w.relPath(p)
		if err != nil {
			return co, err
		}
		co.Include = append(co.Include, rel)
		if o.FollowSymlinks {
			target, err := filepath.EvalSymlinks(filepath.Join(w.root, rel))
			if err == nil {
				if t, err := w.relPath(target); err == nil && t != rel {
					co.Include = append(co.Include, t)
				}
			}
		}
	}
	return co, nil
}

// relPath returns p relative to the repository root, refusing paths outside it.
func (w *worktree) relPath(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		var err error
		if abs, err = filepath.Abs(p); err != nil {
			return "", err
		}
	}
	rel, err := filepath.Rel(w.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository %s; include only files inside it", p, w.root)
	}
	return filepath.ToSlash(rel), nil
}

// Push writes ghosts of the local commits and/or the working state to the ghost repository. It
// holds the repository's ghost lock, so it never captures a working tree a pull is switching.
func Push(ctx context.Context, opts PushOptions) (PushResult, error) {
	w, unlock, err := openLocked(ctx, opts.Dir)
	if err != nil {
		return PushResult{}, fmt.Errorf("ghost push: %w", err)
	}
	defer unlock()
	r, err := openRemote(ctx, opts.GhostRepo, opts.prefix(), opts.RemoteOptions)
	if err != nil {
		return PushResult{}, fmt.Errorf("ghost push: %w", err)
	}
	res, err := push(ctx, w, r, opts)
	if err != nil {
		return res, fmt.Errorf("ghost push: %w", err)
	}
	return res, nil
}

func push(ctx context.Context, w *worktree, r *remote, opts PushOptions) (PushResult, error) {
	var res PushResult
	id, err := w.identity(ctx, opts.Identity)
	if err != nil {
		return res, err
	}
	refs := map[string]string{}
	diffFrom := "HEAD"
	if opts.Commits {
		to, err := w.resolve(ctx, orDefault(opts.To, "HEAD"))
		if err != nil {
			return res, err
		}
		from := opts.From
		if from == "" {
			if from, err = w.remoteBase(ctx, to); err != nil {
				return res, err
			}
		} else if from, err = w.resolve(ctx, from); err != nil {
			return res, err
		}
		g, commit, err := w.commitsGhost(ctx, r, id, from, to)
		if err != nil {
			return res, err
		}
		refs[g.Ref()] = commit
		res.Commits = &g
		diffFrom = to
	}
	if opts.DiffFrom != "" {
		diffFrom = opts.DiffFrom
	}
	if opts.Diff {
		co, err := opts.capture(w)
		if err != nil {
			return res, err
		}
		st, err := w.capture(ctx, co)
		if err != nil {
			return res, err
		}
		base := st.Head
		if diffFrom != "HEAD" {
			if base, err = w.resolve(ctx, diffFrom); err != nil {
				return res, err
			}
		}
		res.Files, res.Warnings = st.Files, st.Warnings
		if !opts.Commits && !w.onRemote(ctx, base) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("base %s is not on any remote, so a clone of the origin cannot apply this ghost; use 'push all' to send the local commits too", short(base)))
		}
		g, commit, err := w.diffGhost(ctx, r, id, base, st)
		if err != nil {
			return res, err
		}
		refs[g.Ref()] = commit
		res.Diff = &g
	}
	if res.Files == nil {
		res.Files = []string{}
	}
	return res, r.push(ctx, refs)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// onRemote reports whether a remote-tracking branch contains commit (true when unsure).
func (w *worktree) onRemote(ctx context.Context, commit string) bool {
	out, err := w.git.Run(ctx, "rev-list", "-n", "1", commit, "--not", "--remotes")
	return err != nil || len(strings.TrimSpace(string(out))) == 0
}

// remoteBase returns the newest commit of rev's history that a remote-tracking branch
// contains: a fresh clone of the remote has it, so a receiver can start from it.
func (w *worktree) remoteBase(ctx context.Context, rev string) (string, error) {
	out, err := w.git.Run(ctx, "rev-list", "--boundary", rev, "--not", "--remotes")
	if err != nil {
		return "", fmt.Errorf("find local commits: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return rev, nil
	}
	var bounds []string
	for _, l := range lines {
		if b, ok := strings.CutPrefix(l, "-"); ok {
			bounds = append(bounds, b)
		}
	}
	switch len(bounds) {
	case 1:
		return bounds[0], nil
	case 0:
		return "", fmt.Errorf("%w; push a branch to a remote (git push origin HEAD) and fetch it, or pass --base <commit> that the receiver has", ErrNoRemoteBase)
	}
	if up, err := w.git.Line(ctx, "merge-base", rev, "@{upstream}"); err == nil && up != "" {
		return up, nil
	}
	return "", fmt.Errorf("the local commits start from %d different remote commits (merges); pass --base <commit> to choose the one the receiver has", len(bounds))
}

// diffOptions make patches independent of the user's diff configuration (prefixes, colour,
// external drivers), so a patch applies anywhere and its hash depends on content only. With
// --binary git writes full object names, as git-ghost's patches have.
var diffOptions = []string{"diff", "--binary", "--patience", "--no-color", "--no-ext-diff", "--no-textconv",
	"--no-relative", "--src-prefix=a/", "--dst-prefix=b/"}

// diffGhost writes the diff ghost of st against base into the cache (an empty one when the
// state equals base).
func (w *worktree) diffGhost(ctx context.Context, r *remote, id identity, base string, st state) (Ghost, string, error) {
	patch, err := w.git.Run(ctx, append(diffOptions, base, st.Tree)...)
	if err != nil {
		return Ghost{}, "", fmt.Errorf("diff the working tree against %s: %w", base, err)
	}
	indexPatch, err := w.git.Run(ctx, append(diffOptions, base, st.Index)...)
	if err != nil {
		return Ghost{}, "", fmt.Errorf("diff the index against %s: %w", base, err)
	}
	sum := sha1.Sum(patch)
	g := Ghost{Kind: KindDiff, Prefix: r.prefix, From: base, Hash: hex.EncodeToString(sum[:])}
	m := w.baseMeta(ctx, KindDiff)
	m.Tree, m.Index, m.Files = st.Tree, st.Index, st.Files
	msg, err := FormatMessage(m)
	if err != nil {
		return Ghost{}, "", err
	}
	commit, err := r.write(ctx, id, []ghostFile{{diffFile, patch}, {indexFile, indexPatch}}, msg)
	if err != nil {
		return Ghost{}, "", err
	}
	g.Commit, g.Meta = commit, &m
	return g, commit, nil
}

// commitsGhost writes the commits from..to into the cache: the mailbox patch git-ghost reads
// with git am, and a pack of the commit objects so a receiver gets the very same commits.
func (w *worktree) commitsGhost(ctx context.Context, r *remote, id identity, from, to string) (Ghost, string, error) {
	g := Ghost{Kind: KindCommits, Prefix: r.prefix, From: from, To: to}
	if _, err := w.git.Run(ctx, "merge-base", "--is-ancestor", from, to); err != nil {
		return g, "", fmt.Errorf("%s is not an ancestor of %s; pass the commit the range starts after", from, to)
	}
	patch, err := w.git.Run(ctx, "log", "-p", "--reverse", "--pretty=email", "--stat", "-m", "--first-parent",
		"--binary", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", from+".."+to)
	if err != nil {
		return g, "", fmt.Errorf("format commits %s..%s: %w", from, to, err)
	}
	pack, err := w.git.Input(ctx, strings.NewReader(to+"\n^"+from+"\n"), "pack-objects", "--revs", "--stdout", "-q")
	if err != nil {
		return g, "", fmt.Errorf("pack commits %s..%s: %w", from, to, err)
	}
	m := w.baseMeta(ctx, KindCommits)
	out, err := w.git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to)
	if err != nil {
		return g, "", fmt.Errorf("list files changed by %s..%s: %w", from, to, err)
	}
	m.Files = splitZ(out)
	msg, err := FormatMessage(m)
	if err != nil {
		return g, "", err
	}
	commit, err := r.write(ctx, id, []ghostFile{{commitsFile, patch}, {commitsPack, pack}}, msg)
	if err != nil {
		return g, "", err
	}
	g.Commit, g.Meta = commit, &m
	return g, commit, nil
}

package ghost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ListOptions select ghosts. Empty fields match everything.
type ListOptions struct {
	GhostRepo string
	Prefix    string
	RemoteOptions
	Kind Kind // KindDiff, KindCommits or "" for both
	// From and To are hash prefixes of the base commit and of the last commit (commits) or the
	// patch hash (diff). With Dir, a revision the repository there resolves (HEAD, a branch)
	// names its commit, as in git-ghost.
	From string
	To   string
	Dir  string
	// Meta fetches the ghost commits (into the cache) to fill Time and Meta. The filters and
	// sorting below need it and turn it on.
	Meta   bool
	User   string
	Host   string
	Branch string
	Since  time.Time
	// SortByTime lists the newest first instead of by branch name.
	SortByTime bool
}

func (o ListOptions) needsMeta() bool {
	return o.Meta || o.User != "" || o.Host != "" || o.Branch != "" || !o.Since.IsZero() || o.SortByTime
}

// List returns the ghosts in the ghost repository that match opts.
func List(ctx context.Context, opts ListOptions) ([]Ghost, error) {
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return nil, fmt.Errorf("ghost list: %w", err)
	}
	gs, err := r.find(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("ghost list: %w", err)
	}
	return gs, nil
}

func (r *remote) find(ctx context.Context, opts ListOptions) ([]Ghost, error) {
	var w *worktree
	if opts.Dir != "" && (opts.From != "" || opts.To != "") {
		w, _ = openWorktree(ctx, opts.Dir) // optional: only resolves names like HEAD
	}
	from, err := w.revision(ctx, opts.From)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	to, err := w.revision(ctx, opts.To)
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	all, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	var gs []Ghost
	for _, g := range all {
		if opts.Kind != "" && g.Kind != opts.Kind {
			continue
		}
		gto := g.Hash
		if g.Kind == KindCommits {
			gto = g.To
		}
		if !strings.HasPrefix(g.From, from) || !strings.HasPrefix(gto, to) {
			continue
		}
		gs = append(gs, g)
	}
	if !opts.needsMeta() || len(gs) == 0 {
		return gs, nil
	}
	if err := r.fillMeta(ctx, gs); err != nil {
		return nil, err
	}
	kept := gs[:0]
	for _, g := range gs {
		m := g.Meta
		if m == nil {
			m = &Meta{}
		}
		if opts.User != "" && m.User != opts.User || opts.Host != "" && m.Host != opts.Host ||
			opts.Branch != "" && m.Branch != opts.Branch || !opts.Since.IsZero() && g.Time.Before(opts.Since) {
			continue
		}
		kept = append(kept, g)
	}
	if opts.SortByTime {
		sort.SliceStable(kept, func(i, j int) bool { return kept[i].Time.After(kept[j].Time) })
	}
	return kept, nil
}

// fillMeta fetches the ghost commits and reads their times and metadata in one git call.
func (r *remote) fillMeta(ctx context.Context, gs []Ghost) error {
	var check strings.Builder
	for _, g := range gs {
		check.WriteString(g.Commit + "\n")
	}
	out, err := r.cache.Input(ctx, strings.NewReader(check.String()), "cat-file", "--batch-check")
	if err != nil {
		return fmt.Errorf("read the ghost cache: %w", err)
	}
	if strings.Contains(string(out), " missing\n") {
		// One wildcard refspec instead of one per ghost keeps the command short at any size;
		// objects already in the cache are not transferred again.
		if err := r.fetchRefspecs(ctx, "+"+branchRefRoot+r.prefix+"/*:refs/ghosts/"+r.prefix+"/*"); err != nil {
			return err
		}
	}
	var in strings.Builder
	for _, g := range gs {
		in.WriteString(g.Commit + "\n")
	}
	out, err = r.cache.Input(ctx, strings.NewReader(in.String()), "log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%ct%x00%B%x1e")
	if err != nil {
		return fmt.Errorf("read ghost commits: %w", err)
	}
	type info struct {
		t time.Time
		m *Meta
	}
	infos := map[string]info{}
	for _, rec := range strings.Split(string(out), "\x1e") {
		f := strings.SplitN(strings.TrimLeft(rec, "\n"), "\x00", 3)
		if len(f) != 3 {
			continue
		}
		var in info
		if secs, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			in.t = time.Unix(secs, 0).UTC()
		}
		if m, ok, err := ParseMessage(f[2]); err == nil && ok {
			in.m = &m
			in.t = m.Time
		}
		infos[f[0]] = in
	}
	for i := range gs {
		in := infos[gs[i].Commit]
		gs[i].Time, gs[i].Meta = in.t, in.m
	}
	return nil
}

// ShowOptions select the ghosts whose patches Show writes.
type ShowOptions struct {
	GhostRepo string
	Prefix    string
	RemoteOptions
	Commits *Selector
	Diff    *Selector
}

// Show writes the patches of the selected ghosts to out: commits first, then the diff. dir is
// a directory of the repository that resolves revisions such as HEAD in the selectors; it may
// be outside any repository when the selectors hold hashes only.
func Show(ctx context.Context, opts ShowOptions, dir string, out io.Writer) error {
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return fmt.Errorf("ghost show: %w", err)
	}
	w, _ := openWorktree(ctx, dir) // optional: only used to resolve names like HEAD
	commits, diff, err := r.choose(ctx, w, PullOptions{Commits: opts.Commits, Diff: opts.Diff})
	if err != nil {
		return fmt.Errorf("ghost show: %w", err)
	}
	var gs []Ghost
	for _, g := range []*Ghost{commits, diff} {
		if g != nil {
			gs = append(gs, *g)
		}
	}
	loaded, err := r.load(ctx, gs...)
	if err != nil {
		return fmt.Errorf("ghost show: %w", err)
	}
	for _, g := range gs {
		name := diffFile
		if g.Kind == KindCommits {
			name = commitsFile
		}
		data, ok := loaded[g.ID()].files[name]
		if !ok {
			return fmt.Errorf("ghost show: ghost %s has no %s", g.ID(), name)
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// DeleteOptions select the ghosts Delete removes: those matching the list filters and, when
// Hashes is not empty, named by one of the hash prefixes. With no filter at all, All or DryRun
// must be set, so a bare delete never empties a ghost repository.
type DeleteOptions struct {
	ListOptions
	Hashes []string
	All    bool
	DryRun bool // return what would be deleted, delete nothing
}

// Delete removes the selected ghosts and returns them.
func Delete(ctx context.Context, opts DeleteOptions) ([]Ghost, error) {
	hashes := opts.Hashes
	if len(hashes) == 0 && !opts.All && !opts.DryRun && opts.From == "" && opts.To == "" {
		return nil, errors.New("ghost delete: name the ghosts to delete (hash prefixes, --from/--to) or pass --all")
	}
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return nil, fmt.Errorf("ghost delete: %w", err)
	}
	gs, err := r.find(ctx, opts.ListOptions)
	if err != nil {
		return nil, fmt.Errorf("ghost delete: %w", err)
	}
	if len(hashes) > 0 {
		gs, err = matchHashes(gs, hashes)
		if err != nil {
			return nil, fmt.Errorf("ghost delete: %w", err)
		}
	}
	if opts.DryRun {
		return gs, nil
	}
	if err := r.remove(ctx, gs); err != nil {
		return nil, fmt.Errorf("ghost delete: %w", err)
	}
	return gs, nil
}

// matchHashes keeps the ghosts whose diff hash or last commit starts with one of hashes; each
// hash must name exactly one ghost.
func matchHashes(gs []Ghost, hashes []string) ([]Ghost, error) {
	var out []Ghost
	for _, h := range hashes {
		h = strings.ToLower(h)
		if len(h) < MinPrefixLen {
			return nil, fmt.Errorf("hash %q is too short; give at least %d characters", h, MinPrefixLen)
		}
		var found []Ghost
		for _, g := range gs {
			if g.Kind == KindDiff && strings.HasPrefix(g.Hash, h) || g.Kind == KindCommits && strings.HasPrefix(g.To, h) {
				found = append(found, g)
			}
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("no ghost matches %s; run 'list' to see the ghosts", h)
		case 1:
			out = append(out, found[0])
		default:
			return nil, fmt.Errorf("hash %s is ambiguous: it matches %d ghosts; give more characters", h, len(found))
		}
	}
	return out, nil
}

// GCOptions say which ghosts gc removes: those older than OlderThan, except the Keep newest.
type GCOptions struct {
	GhostRepo string
	Prefix    string
	RemoteOptions
	OlderThan time.Duration
	Keep      int
	DryRun    bool
}

// GC deletes old ghosts and returns them (or, with DryRun, what it would delete).
func GC(ctx context.Context, opts GCOptions) ([]Ghost, error) {
	if opts.OlderThan <= 0 && opts.Keep <= 0 {
		return nil, errors.New("ghost gc: pass --older-than and/or --keep to say which ghosts to delete")
	}
	r, err := openRemote(ctx, opts.GhostRepo, orDefault(opts.Prefix, DefaultPrefix), opts.RemoteOptions)
	if err != nil {
		return nil, fmt.Errorf("ghost gc: %w", err)
	}
	gs, err := r.find(ctx, ListOptions{SortByTime: true})
	if err != nil {
		return nil, fmt.Errorf("ghost gc: %w", err)
	}
	cutoff := now().Add(-opts.OlderThan)
	var doomed []Ghost
	for i, g := range gs {
		if i < opts.Keep {
			continue
		}
		if opts.OlderThan > 0 && !g.Time.Before(cutoff) {
			continue
		}
		doomed = append(doomed, g)
	}
	if opts.DryRun {
		return doomed, nil
	}
	if err := r.remove(ctx, doomed); err != nil {
		return nil, fmt.Errorf("ghost gc: %w", err)
	}
	return doomed, nil
}

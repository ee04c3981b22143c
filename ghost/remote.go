package ghost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jikken-dev/jikken/ghost/gitexec"
)

// remote is a ghost repository reached through git's transport, with a local bare cache
// repository that holds only the ghost commits fetched so far. Nothing ever clones the ghost
// repository: refs are read with ls-remote and single ghost branches are fetched into the
// cache, so the cost of an operation does not grow with the number of ghosts stored.
type remote struct {
	url    string
	prefix string
	cache  gitexec.Client
}

// CacheDirEnv names the variable that moves the cache repositories (default: the user cache
// directory, e.g. ~/.cache/jikken/ghost).
const CacheDirEnv = "JIKKEN_GHOST_CACHE"

func openRemote(ctx context.Context, url, prefix string) (*remote, error) {
	if url == "" {
		return nil, errors.New("no ghost repository is set; pass --ghost-repo or set GIT_GHOST_REPO to the URL of an (empty) git repository")
	}
	if err := CheckPrefix(prefix); err != nil {
		return nil, err
	}
	url = normalizeURL(url)
	root := os.Getenv(CacheDirEnv)
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("find a cache directory (set %s): %w", CacheDirEnv, err)
		}
		root = filepath.Join(base, "jikken", "ghost")
	}
	sum := sha256.Sum256([]byte(url))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8])+".git")
	c := gitexec.Client{Dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create ghost cache %s: %w", dir, err)
		}
		if _, err := c.Run(ctx, "init", "-q", "--bare"); err != nil {
			return nil, fmt.Errorf("create ghost cache %s: %w", dir, err)
		}
	}
	return &remote{url: url, prefix: strings.Trim(prefix, "/"), cache: c}, nil
}

// normalizeURL makes a local path absolute, since git runs in other directories.
func normalizeURL(url string) string {
	if strings.Contains(url, "://") || (strings.Contains(url, ":") && !filepath.IsAbs(url) && !strings.HasPrefix(url, ".")) {
		return url
	}
	if abs, err := filepath.Abs(url); err == nil {
		return abs
	}
	return url
}

// list returns the ghosts stored under the prefix, sorted by branch name.
func (r *remote) list(ctx context.Context) ([]Ghost, error) {
	out, err := r.cache.Run(ctx, "ls-remote", "--refs", r.url, branchRefRoot+r.prefix+"/*")
	if err != nil {
		return nil, fmt.Errorf("list ghosts in %s; check the URL and your access: %w", r.url, err)
	}
	var gs []Ghost
	for _, line := range strings.Split(string(out), "\n") {
		sha, ref, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if g, ok := ParseBranch(r.prefix, ref); ok {
			g.Commit = sha
			gs = append(gs, g)
		}
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Branch() < gs[j].Branch() })
	return gs, nil
}

// cacheRef is where the cache keeps a fetched ghost branch.
func cacheRef(g Ghost) string { return "refs/ghosts/" + g.Branch() }

// fetch brings the given ghost commits into the cache, skipping those already there.
func (r *remote) fetch(ctx context.Context, gs ...Ghost) error {
	args := []string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", "--depth=1", r.url}
	n := 0
	for _, g := range gs {
		if g.Commit != "" {
			if _, err := r.cache.Run(ctx, "cat-file", "-e", g.Commit+"^{commit}"); err == nil {
				continue
			}
		}
		args = append(args, "+"+g.Ref()+":"+cacheRef(g))
		n++
	}
	if n == 0 {
		return nil
	}
	if _, err := r.cache.Run(ctx, args...); err != nil {
		return fmt.Errorf("fetch ghost from %s: %w", r.url, err)
	}
	return nil
}

// commitOf returns the cached commit of g.
func (r *remote) commitOf(ctx context.Context, g Ghost) (string, error) {
	if g.Commit != "" {
		return g.Commit, nil
	}
	return r.cache.Line(ctx, "rev-parse", "--verify", cacheRef(g)+"^{commit}")
}

// contents is what a fetched ghost commit holds.
type contents struct {
	files map[string][]byte
	meta  *Meta // nil for git-ghost's ghosts
}

// read returns the named files of a fetched ghost commit (missing ones are absent from the
// map) and its metadata, in one git call.
func (r *remote) read(ctx context.Context, commit string, names ...string) (contents, error) {
	var in strings.Builder
	in.WriteString(commit + "\n")
	for _, n := range names {
		in.WriteString(commit + ":" + n + "\n")
	}
	out, err := r.cache.Input(ctx, strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return contents{}, fmt.Errorf("read ghost %s: %w", commit, err)
	}
	c := contents{files: map[string][]byte{}}
	for i := 0; i <= len(names); i++ {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return contents{}, fmt.Errorf("read ghost %s: truncated output", commit)
		}
		f := strings.Fields(string(header))
		if len(f) == 2 && f[1] == "missing" {
			if i == 0 {
				return contents{}, fmt.Errorf("ghost commit %s is not in the cache", commit)
			}
			out = rest
			continue
		}
		var size int
		if len(f) != 3 {
			return contents{}, fmt.Errorf("read ghost %s: unexpected line %q", commit, header)
		}
		if _, err := fmt.Sscan(f[2], &size); err != nil || size > len(rest) {
			return contents{}, fmt.Errorf("read ghost %s: unexpected line %q", commit, header)
		}
		data := rest[:size]
		out = rest[min(size+1, len(rest)):]
		if i == 0 {
			_, msg, _ := bytes.Cut(data, []byte("\n\n"))
			m, ok, err := ParseMessage(string(msg))
			if err != nil {
				return contents{}, fmt.Errorf("ghost %s: %w", commit, err)
			}
			if ok {
				c.meta = &m
			}
			continue
		}
		c.files[names[i-1]] = data
	}
	return c, nil
}

// ghostFile is one file of a ghost commit.
type ghostFile struct {
	name string
	data []byte
}

// write stores files as an orphan commit in the cache, the shape git-ghost gives its ghosts.
func (r *remote) write(ctx context.Context, files []ghostFile, msg string) (string, error) {
	var tree bytes.Buffer
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	for _, f := range files {
		sha, err := r.cache.Input(ctx, bytes.NewReader(f.data), "hash-object", "-w", "--stdin")
		if err != nil {
			return "", fmt.Errorf("store %s in the ghost cache: %w", f.name, err)
		}
		fmt.Fprintf(&tree, "100644 blob %s\t%s\n", strings.TrimSpace(string(sha)), f.name)
	}
	t, err := r.cache.Input(ctx, &tree, "mktree")
	if err != nil {
		return "", fmt.Errorf("write ghost tree: %w", err)
	}
	c, err := r.cache.With(identityEnv()...).Input(ctx, strings.NewReader(msg), "commit-tree", strings.TrimSpace(string(t)))
	if err != nil {
		return "", fmt.Errorf("write ghost commit: %w", err)
	}
	return strings.TrimSpace(string(c)), nil
}

// push sends ghost commits to their branches in one connection. A branch that exists is
// replaced: its name is a content hash, so only metadata can differ.
func (r *remote) push(ctx context.Context, commits map[string]string) error {
	if len(commits) == 0 {
		return nil
	}
	args := []string{"push", "-q", "--no-verify", r.url}
	refs := make([]string, 0, len(commits))
	for ref := range commits {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		args = append(args, "+"+commits[ref]+":"+ref)
	}
	if _, err := r.cache.Run(ctx, args...); err != nil {
		return fmt.Errorf("push ghost to %s; check the URL and that you may write there: %w", r.url, err)
	}
	return nil
}

// remove deletes ghost branches from the ghost repository and the cache.
func (r *remote) remove(ctx context.Context, gs []Ghost) error {
	if len(gs) == 0 {
		return nil
	}
	args := []string{"push", "-q", "--no-verify", r.url}
	for _, g := range gs {
		args = append(args, ":"+g.Ref())
	}
	if _, err := r.cache.Run(ctx, args...); err != nil {
		return fmt.Errorf("delete ghosts from %s: %w", r.url, err)
	}
	for _, g := range gs {
		_, _ = r.cache.Run(ctx, "update-ref", "-d", cacheRef(g))
	}
	return nil
}

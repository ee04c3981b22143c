package ghost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/ghost/gitexec"
)

// remote is a ghost repository reached through git's transport, with a local bare cache
// repository that holds only the ghost commits fetched so far. Nothing ever clones the ghost
// repository: refs are read with ls-remote and single ghost branches are fetched into the
// cache, so the cost of an operation does not grow with the number of ghosts stored.
//
// One user's processes share the cache, so everything that writes its refs or config (init,
// fetch, ref deletion) holds a flock on the cache directory; objects are written without it,
// as git writes them atomically.
type remote struct {
	url    string
	prefix string
	cache  gitexec.Client
	// net runs the commands that reach the ghost repository (ls-remote, fetch, push): the
	// cache client with the SSH connect timeout.
	net gitexec.Client
}

// CacheDirEnv names the variable that moves the cache repositories (default: the user cache
// directory, e.g. ~/.cache/jikken/ghost).
const CacheDirEnv = "JIKKEN_GHOST_CACHE"

// DefaultConnectTimeout bounds how long an SSH connection to the ghost repository may take to
// open before the command fails, so an unreachable host does not hang a job.
const DefaultConnectTimeout = 20 * time.Second

// RemoteOptions say how to reach a ghost repository.
type RemoteOptions struct {
	// ConnectTimeout applies to SSH URLs (0: DefaultConnectTimeout; negative: none). It is
	// passed to ssh as ConnectTimeout, which covers the TCP connection and the SSH handshake.
	// A GIT_SSH program, or a GIT_SSH_COMMAND or core.sshCommand that is not ssh, is left
	// alone.
	ConnectTimeout time.Duration
}

func openRemote(ctx context.Context, url, prefix string, ro RemoteOptions) (*remote, error) {
	if url == "" {
		return nil, errors.New("no ghost repository is set; pass --ghost-repo or set GIT_GHOST_REPO to the URL of an (empty) git repository")
	}
	if strings.HasPrefix(url, "-") {
		// git would read it as an option (--upload-pack=... runs a command).
		return nil, fmt.Errorf("ghost repository %q begins with '-', which git would take for an option; give a URL or a path (./%s for a directory of that name)", url, url)
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
	r := &remote{url: url, prefix: strings.Trim(prefix, "/"), cache: gitexec.Client{Dir: dir}}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if err := r.init(ctx, root); err != nil {
			return nil, err
		}
	}
	r.net = r.cache.With(sshEnv(ctx, r.cache, url, ro.ConnectTimeout)...)
	return r, nil
}

// init creates the cache repository with git init in a temporary directory renamed into place,
// so other processes see no repository or a whole one, never one half written. The flock on
// the cache root keeps two processes from doing it at once.
func (r *remote) init(ctx context.Context, root string) error {
	unlock, _, err := lockDir(ctx, root)
	if err != nil {
		return fmt.Errorf("ghost cache: %w", err)
	}
	defer unlock()
	dir := r.cache.Dir
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return nil // another process made it while this one waited
	}
	tmp, err := os.MkdirTemp(root, ".init-")
	if err != nil {
		return fmt.Errorf("create ghost cache in %s: %w", root, err)
	}
	defer os.RemoveAll(tmp)
	if _, err := (gitexec.Client{Dir: tmp}).Run(ctx, "init", "-q", "--bare"); err != nil {
		return fmt.Errorf("create ghost cache %s: %w", dir, err)
	}
	// A directory without HEAD is what an older version left when killed while it ran git init.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("create ghost cache %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("create ghost cache %s: %w", dir, err)
	}
	return nil
}

// locked runs fn holding the cache's flock. Holding it, no other git ghost process is writing
// the cache's refs, so a ref lock file there is the leftover of a killed process.
func (r *remote) locked(ctx context.Context, fn func() error) error {
	unlock, _, err := lockDir(ctx, r.cache.Dir)
	if err != nil {
		return fmt.Errorf("ghost cache: %w", err)
	}
	defer unlock()
	return fn()
}

// removeStaleLocks deletes the lock files a killed git left in the cache; the caller holds the
// cache's flock. It reports whether it found any.
func (r *remote) removeStaleLocks() bool {
	found := false
	_ = filepath.WalkDir(r.cache.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != r.cache.Dir && !strings.HasPrefix(p, filepath.Join(r.cache.Dir, "refs")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") {
			found = os.Remove(p) == nil || found
		}
		return nil
	})
	return found
}

// sshEnv returns the environment that gives ssh a connect timeout for an SSH URL.
func sshEnv(ctx context.Context, c gitexec.Client, url string, timeout time.Duration) []string {
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	if timeout < 0 || !isSSHURL(url) || os.Getenv("GIT_SSH") != "" && os.Getenv("GIT_SSH_COMMAND") == "" {
		return nil
	}
	cmd := os.Getenv("GIT_SSH_COMMAND")
	if cmd == "" {
		cmd, _ = c.Line(ctx, "config", "core.sshCommand")
	}
	if cmd == "" {
		cmd = "ssh"
	}
	if f := strings.Fields(cmd); len(f) == 0 || path.Base(f[0]) != "ssh" {
		return nil
	}
	secs := max(1, int((timeout+time.Second-1)/time.Second))
	return []string{fmt.Sprintf("GIT_SSH_COMMAND=%s -o ConnectTimeout=%d", cmd, secs)}
}

// isSSHURL reports whether git reaches url over SSH: ssh:// URLs and the scp-like host:path.
func isSSHURL(url string) bool {
	if scheme, _, ok := strings.Cut(url, "://"); ok {
		return scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git"
	}
	host, _, ok := strings.Cut(url, ":")
	return ok && host != "" && !strings.Contains(host, "/")
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
	out, err := r.net.Run(ctx, "ls-remote", "--refs", r.url, branchRefRoot+r.prefix+"/*")
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

// fetch brings ghost branches into the cache under cacheRef, in one connection. Ghost commits
// have no parents, so a plain fetch transfers exactly one commit and its files; git's shallow
// bookkeeping (and its shallow.lock, a point of contention) stays out of it.
func (r *remote) fetch(ctx context.Context, gs ...Ghost) error {
	specs := make([]string, len(gs))
	for i, g := range gs {
		specs[i] = "+" + g.Ref() + ":" + cacheRef(g)
	}
	return r.fetchRefspecs(ctx, specs...)
}

// fetchRefspecs fetches into the cache holding its flock; a failure caused by the lock files of
// a killed git is retried once without them.
func (r *remote) fetchRefspecs(ctx context.Context, specs ...string) error {
	if len(specs) == 0 {
		return nil
	}
	args := append([]string{"fetch", "-q", "--no-tags", "--no-write-fetch-head", r.url}, specs...)
	return r.locked(ctx, func() error {
		_, err := r.net.Run(ctx, args...)
		if err != nil && r.removeStaleLocks() {
			_, err = r.net.Run(ctx, args...)
		}
		if err != nil {
			return fmt.Errorf("fetch ghosts from %s: %w", r.url, err)
		}
		return nil
	})
}

// contents is what a fetched ghost commit holds.
type contents struct {
	files map[string][]byte
	meta  *Meta // nil for git-ghost's ghosts
}

// ghostFiles are the files load reads from every ghost commit.
var ghostFiles = []string{diffFile, indexFile, commitsFile, commitsPack}

// load returns what the given ghost commits hold, by ghost ID, read through the cache's refs:
// a fetch moves a ref only once every object is in place, while the objects themselves appear
// one by one, so another process reading by object name in the middle of a fetch could see a
// commit without its files. Ghosts the cache has no ref for are fetched first (for one this
// machine pushed, that transfers nothing); what is cached costs one git call and no connection.
func (r *remote) load(ctx context.Context, gs ...Ghost) (map[string]contents, error) {
	refs := make([]string, len(gs))
	var missing []Ghost
	for i, g := range gs {
		refs[i] = cacheRef(g)
		if !r.hasRef(refs[i]) {
			missing = append(missing, g)
		}
	}
	if err := r.fetch(ctx, missing...); err != nil {
		return nil, err
	}
	got, err := r.readAll(ctx, refs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]contents, len(gs))
	for i, g := range gs {
		c, ok := got[refs[i]]
		if !ok {
			return nil, fmt.Errorf("ghost %s is not in %s any more; run 'list' to see the ghosts", g.ID(), r.url)
		}
		out[g.ID()] = c
	}
	return out, nil
}

// hasRef reports whether the cache has ref, reading its ref files rather than starting git: a
// wrong "no" (a ref format this does not read) only costs a fetch that transfers nothing.
func (r *remote) hasRef(ref string) bool {
	if _, err := os.Stat(filepath.Join(r.cache.Dir, filepath.FromSlash(ref))); err == nil {
		return true
	}
	packed, err := os.ReadFile(filepath.Join(r.cache.Dir, "packed-refs"))
	return err == nil && bytes.Contains(packed, []byte(" "+ref+"\n"))
}

// readAll reads the ghost files and metadata of the named commits in one git call. Commits
// that are not in the cache are absent from the result.
func (r *remote) readAll(ctx context.Context, commits []string) (map[string]contents, error) {
	var in strings.Builder
	for _, c := range commits {
		in.WriteString(c + "\n")
		for _, n := range ghostFiles {
			in.WriteString(c + ":" + n + "\n")
		}
	}
	out, err := r.cache.Input(ctx, strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read ghosts in the cache %s: %w", r.cache.Dir, err)
	}
	res := map[string]contents{}
	for _, commit := range commits {
		c := contents{files: map[string][]byte{}}
		present := true
		for i := 0; i <= len(ghostFiles); i++ {
			var data []byte
			var ok bool
			if data, ok, out, err = nextObject(out); err != nil {
				return nil, fmt.Errorf("read ghost %s: %w", commit, err)
			}
			switch {
			case i == 0 && !ok:
				present = false
			case i == 0:
				_, msg, _ := bytes.Cut(data, []byte("\n\n"))
				m, has, err := ParseMessage(string(msg))
				if err != nil {
					return nil, fmt.Errorf("ghost %s: %w", commit, err)
				}
				if has {
					c.meta = &m
				}
			case ok:
				c.files[ghostFiles[i-1]] = data
			}
		}
		if present {
			res[commit] = c
		}
	}
	return res, nil
}

// nextObject reads one object of `git cat-file --batch` output; ok is false for a missing one.
func nextObject(out []byte) (data []byte, ok bool, rest []byte, err error) {
	header, rest, found := bytes.Cut(out, []byte("\n"))
	if !found {
		return nil, false, nil, errors.New("truncated output of git cat-file")
	}
	f := strings.Fields(string(header))
	if len(f) == 2 && f[1] == "missing" {
		return nil, false, rest, nil
	}
	var size int
	if len(f) != 3 {
		return nil, false, nil, fmt.Errorf("unexpected line %q from git cat-file", header)
	}
	if _, err := fmt.Sscan(f[2], &size); err != nil || size > len(rest) {
		return nil, false, nil, fmt.Errorf("unexpected line %q from git cat-file", header)
	}
	return rest[:size], true, rest[min(size+1, len(rest)):], nil
}

// ghostFile is one file of a ghost commit.
type ghostFile struct {
	name string
	data []byte
}

// write stores files as an orphan commit in the cache, the shape git-ghost gives its ghosts.
func (r *remote) write(ctx context.Context, id identity, files []ghostFile, msg string) (string, error) {
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
	c, err := r.cache.With(id.env()...).Input(ctx, strings.NewReader(msg), "commit-tree", strings.TrimSpace(string(t)))
	if err != nil {
		return "", fmt.Errorf("write ghost commit: %w", err)
	}
	return strings.TrimSpace(string(c)), nil
}

// push sends ghost commits to their branches in one connection. A branch that exists is
// replaced: its name is a content hash, so only metadata can differ. When another process
// pushed the same branches at the same moment, git refuses the second update; the ghost is
// there all the same, so that counts as success.
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
	_, err := r.net.Run(ctx, args...)
	if err != nil && r.haveRefs(ctx, refs) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("push ghost to %s; check the URL and that you may write there: %w", r.url, err)
	}
	return nil
}

// haveRefs reports whether the ghost repository has all the given refs.
func (r *remote) haveRefs(ctx context.Context, refs []string) bool {
	out, err := r.net.Run(ctx, append([]string{"ls-remote", "--refs", r.url}, refs...)...)
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if _, ref, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok {
			seen[ref] = true
		}
	}
	for _, ref := range refs {
		if !seen[ref] {
			return false
		}
	}
	return true
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
	if _, err := r.net.Run(ctx, args...); err != nil {
		return fmt.Errorf("delete ghosts from %s: %w", r.url, err)
	}
	var in strings.Builder
	for _, g := range gs {
		in.WriteString("delete " + cacheRef(g) + "\n")
	}
	return r.locked(ctx, func() error {
		_, _ = r.cache.Input(ctx, strings.NewReader(in.String()), "update-ref", "--stdin")
		return nil
	})
}

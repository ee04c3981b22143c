package ghost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jikken-dev/jikken/ghost/gitexec"
)

// worktree is the user's repository, always addressed at its top level: git-ghost ran patches
// relative to the current directory, which silently dropped changes outside it.
type worktree struct {
	git    gitexec.Client
	root   string
	gitDir string // absolute; found on first use when empty
	// start and startTree are HEAD and its tree when the worktree was opened (or after a
	// recovered pull); start is empty in a repository without commits.
	start, startTree string
}

// openWorktree finds the repository containing dir, its git directory and HEAD in one git call.
func openWorktree(ctx context.Context, dir string) (*worktree, error) {
	if dir == "" {
		dir = "."
	}
	c := gitexec.Client{Dir: dir}
	// Without a commit rev-parse fails after printing the two paths; HEAD is then left empty.
	out, err := c.Run(ctx, "rev-parse", "--show-toplevel", "--absolute-git-dir", "HEAD", "HEAD^{tree}", "--")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 || lines[0] == "" {
		if err == nil {
			err = errors.New("not a working tree")
		}
		return nil, fmt.Errorf("%s is not inside a git working tree; run the command in a repository or pass --src-dir: %w", dir, err)
	}
	w := &worktree{git: gitexec.Client{Dir: lines[0]}, root: lines[0], gitDir: lines[1]}
	if err == nil && len(lines) >= 4 && isObjectName(lines[2]) && isObjectName(lines[3]) {
		w.start, w.startTree = lines[2], lines[3]
	}
	return w, nil
}

// dir returns the worktree's git directory.
func (w *worktree) dir(ctx context.Context) (string, error) {
	if w.gitDir == "" {
		dir, err := w.git.Line(ctx, "rev-parse", "--absolute-git-dir")
		if err != nil {
			return "", fmt.Errorf("locate the repository: %w", err)
		}
		w.gitDir = dir
	}
	return w.gitDir, nil
}

// indexPath returns the path of the worktree's index file.
func (w *worktree) indexPath(ctx context.Context) (string, error) {
	dir, err := w.dir(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "index"), nil
}

// indexFile is indexPath for a worktree opened with openWorktree (its git directory known).
func (w *worktree) indexFile() string { return filepath.Join(w.gitDir, "index") }

// resolve returns the full commit name of rev.
func (w *worktree) resolve(ctx context.Context, rev string) (string, error) {
	h, err := w.git.Line(ctx, "rev-parse", "--verify", "-q", "--end-of-options", rev+"^{commit}")
	if err != nil || h == "" {
		return "", fmt.Errorf("%q is not a commit in %s; fetch it or check the name", rev, w.root)
	}
	return h, nil
}

// revision turns a revision argument into what ghost names are matched against, as git-ghost
// resolves it: the full commit name when the repository resolves it (HEAD, a branch or a tag,
// in the case the repository spells it), else the lower-cased hash prefix. w may be nil (no
// repository); then only hashes are accepted. An empty rev matches anything.
func (w *worktree) revision(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return "", nil
	}
	lower := strings.ToLower(rev)
	if isObjectName(lower) {
		return lower, nil
	}
	if w != nil {
		if h, err := w.resolve(ctx, rev); err == nil {
			return h, nil
		}
	}
	if isHex(lower) {
		return lower, nil
	}
	if w == nil {
		return "", fmt.Errorf("%q is not a commit hash, and there is no repository here to resolve it in; run the command in the repository or give the hash", rev)
	}
	return "", fmt.Errorf("%q is neither a commit of this repository nor a hash; check the name (branch and tag names are case-sensitive)", rev)
}

// has reports which of the named objects the repository has, in one git call.
func (w *worktree) has(ctx context.Context, names ...string) map[string]bool {
	var in strings.Builder
	for _, n := range names {
		in.WriteString(n + "\n")
	}
	out, _ := w.git.Input(ctx, strings.NewReader(in.String()), "cat-file", "--batch-check=%(objectname)")
	have := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if i < len(names) && !strings.HasSuffix(line, " missing") && line != "" {
			have[names[i]] = true
		}
	}
	return have
}

// tempIndex returns a client whose index is a temporary file (not yet created), the file's
// path, and a function removing it.
func (w *worktree) tempIndex() (gitexec.Client, string, func(), error) {
	s, err := w.scratch()
	if err != nil {
		return gitexec.Client{}, "", nil, err
	}
	name := s.path("index")
	return w.git.With("GIT_INDEX_FILE=" + name), name, s.remove, nil
}

// scratch is a temporary directory for index files that are not the user's. It lives in the
// repository's ghost state directory, which the next command clears when a killed one left it.
type scratch struct{ dir string }

func (w *worktree) scratch() (*scratch, error) {
	parent := os.TempDir()
	if w.gitDir != "" {
		parent = w.stateDir()
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("create a temporary directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, "tmp-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	return &scratch{dir: dir}, nil
}

func (s *scratch) path(name string) string { return filepath.Join(s.dir, name) }
func (s *scratch) remove()                 { os.RemoveAll(s.dir) }

// copyIndex copies an index file with its modification time: git trusts a cached stat only for
// files older than the index file, and a fresh mtime on the copy would hide a same-size edit
// made in the second the index was written.
func copyIndex(src, dst string) error {
	if err := copyFile(src, dst); err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// captureOptions says which files a capture takes beyond the tracked ones.
type captureOptions struct {
	NoUntracked      bool
	Include          []string // paths (relative to the root) added even when ignored
	MaxUntrackedSize int64    // 0 means no limit
}

// state is a working state captured as git objects, without touching the user's index.
type state struct {
	Head     string
	Tree     string // working tree: tracked and (unless excluded) untracked, not ignored
	Index    string // the index as it is
	Files    []string
	Warnings []string
}

// DefaultMaxUntrackedSize is the largest untracked file a ghost takes unless told otherwise:
// large untracked files are usually data sets or build output, not code.
const DefaultMaxUntrackedSize = 10 << 20

func (w *worktree) capture(ctx context.Context, opt captureOptions) (state, error) {
	head := w.start
	if head == "" {
		return state{}, errors.New("the repository has no commit yet; commit once before taking a ghost")
	}
	var untracked []string
	if !opt.NoUntracked {
		out, err := w.git.Run(ctx, "ls-files", "-z", "--others", "--exclude-standard")
		if err != nil {
			return state{}, fmt.Errorf("list untracked files: %w", err)
		}
		untracked = splitZ(out)
	}
	st := state{Head: head}
	for _, p := range untracked {
		fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		if opt.MaxUntrackedSize > 0 && fi.Mode().IsRegular() && fi.Size() > opt.MaxUntrackedSize {
			return state{}, fmt.Errorf("untracked file %s is %s (limit %s); add it to .gitignore, pass --no-untracked, or raise --max-untracked-size",
				p, humanSize(fi.Size()), humanSize(opt.MaxUntrackedSize))
		}
		if why := secretReason(filepath.Join(w.root, filepath.FromSlash(p)), p, fi); why != "" {
			st.Warnings = append(st.Warnings, fmt.Sprintf("untracked file %s %s and is included; add it to .gitignore or pass --no-untracked if it must not leave this machine", p, why))
		}
	}
	index, tree, err := w.trees(ctx, opt)
	if err != nil {
		return state{}, err
	}
	st.Index, st.Tree = index, tree
	changed, err := w.git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", head, tree)
	if err != nil {
		return state{}, fmt.Errorf("compare the working tree with HEAD: %w", err)
	}
	entries := parseRaw(changed)
	if err := w.refuseSubmoduleChanges(ctx, entries); err != nil {
		return state{}, err
	}
	files := map[string]bool{}
	for _, e := range entries {
		files[e.path] = true
	}
	if index != tree {
		out, err := w.git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", head, index)
		if err != nil {
			return state{}, fmt.Errorf("compare the index with HEAD: %w", err)
		}
		for _, p := range splitZ(out) {
			files[p] = true
		}
	}
	for p := range files {
		st.Files = append(st.Files, p)
	}
	sort.Strings(st.Files)
	return st, nil
}

// trees writes the index and the working tree as tree objects. Both go through a copy of the
// index: the user's index file is only read (even write-tree would rewrite it to cache the
// tree), and the copy's stat data lets add -A skip unchanged files.
func (w *worktree) trees(ctx context.Context, opt captureOptions) (index, tree string, err error) {
	g, tmp, done, err := w.tempIndex()
	if err != nil {
		return "", "", err
	}
	defer done()
	indexPath, err := w.indexPath(ctx)
	if err != nil {
		return "", "", err
	}
	if err := copyIndex(indexPath, tmp); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("copy the index: %w", err)
		}
		if _, err := g.Run(ctx, "read-tree", "HEAD"); err != nil {
			return "", "", fmt.Errorf("read HEAD into a temporary index: %w", err)
		}
	}
	if index, err = g.Line(ctx, "write-tree"); err != nil {
		return "", "", fmt.Errorf("the index has unresolved conflicts; resolve them and run git add: %w", err)
	}
	add := []string{"add", "-A"}
	if opt.NoUntracked {
		add = []string{"add", "-u"}
	}
	if _, err := g.Run(ctx, append(add, "--", ":/")...); err != nil {
		return "", "", fmt.Errorf("stage the working tree in a temporary index: %w", err)
	}
	if len(opt.Include) > 0 {
		if _, err := g.Run(ctx, append([]string{"add", "-f", "--"}, opt.Include...)...); err != nil {
			return "", "", fmt.Errorf("add included files: %w", err)
		}
	}
	if tree, err = g.Line(ctx, "write-tree"); err != nil {
		return "", "", fmt.Errorf("write the working tree: %w", err)
	}
	return index, tree, nil
}

// refuseSubmoduleChanges stops a capture that would lose submodule changes: a ghost carries
// the files of this repository only, and a moved or modified submodule cannot be reproduced
// from it.
func (w *worktree) refuseSubmoduleChanges(ctx context.Context, changed []rawEntry) error {
	for _, e := range changed {
		if e.srcMode == "160000" || e.dstMode == "160000" {
			return fmt.Errorf("submodule or nested repository %s changed; ghosts do not carry submodule changes: commit and push them in the submodule and record the new commit here, or undo them", e.path)
		}
	}
	if _, err := os.Stat(filepath.Join(w.root, ".gitmodules")); err != nil {
		return nil
	}
	// --no-optional-locks: status must not refresh (rewrite) the user's index during a capture.
	out, err := w.git.Run(ctx, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return fmt.Errorf("check submodules: %w", err)
	}
	for _, rec := range splitZ(out) {
		f := strings.SplitN(rec, " ", 9)
		if len(f) == 9 && f[0] == "1" && strings.HasPrefix(f[2], "S") && f[2] != "S..." {
			return fmt.Errorf("submodule %s has uncommitted changes; ghosts do not carry submodule changes: commit and push them in the submodule, or discard them", f[8])
		}
	}
	return nil
}

// rawEntry is one line of `git diff-tree -r -z` output.
type rawEntry struct {
	srcMode, dstMode, srcSHA, dstSHA, status, path string
}

func parseRaw(out []byte) []rawEntry {
	var entries []rawEntry
	fields := splitZ(out)
	for i := 0; i+1 < len(fields); i += 2 {
		head := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(head) < 5 {
			continue
		}
		entries = append(entries, rawEntry{head[0], head[1], head[2], head[3], head[4], fields[i+1]})
	}
	return entries
}

func splitZ(out []byte) []string {
	var s []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			s = append(s, string(p))
		}
	}
	return s
}

// dirtyFiles lists paths with staged, unstaged or untracked (not ignored) changes. It takes no
// lock: status would otherwise refresh the index, and a kill at that moment would leave
// index.lock behind.
func (w *worktree) dirtyFiles(ctx context.Context) ([]string, error) {
	out, err := w.git.Run(ctx, "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, fmt.Errorf("read the working tree status: %w", err)
	}
	var files []string
	for _, r := range splitZ(out) {
		if len(r) > 3 {
			files = append(files, r[3:])
		}
	}
	return files, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

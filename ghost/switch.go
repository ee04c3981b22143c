package ghost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// A pull switches the working tree, the index and HEAD so that a process killed at any moment
// (SIGKILL included, with every git it started) leaves the old state or the new one, and no
// lock file:
//
//  1. everything is prepared outside the working tree: the new files are written by git
//     checkout-index under the stage directory in the git directory, the new index is written
//     to a file of its own; a kill here leaves the working tree untouched, and the next ghost
//     command deletes the leftovers;
//  2. the journal, written in one rename, lists the files to delete and to move into place;
//  3. the files are moved (renames, no copying), then the new index is installed by a rename
//     through index.lock, then HEAD moves, then the journal is deleted.
//
// A kill during step 3, a window of milliseconds, leaves the journal; the next ghost command
// in the repository finishes the switch from it before doing anything else (recover). git's
// own lock files are only ever held inside that window and are recognised and finished too.
//
// Everything lives in <git dir>/jikken-ghost, whose flock also makes pulls into one repository
// run one at a time.
const (
	stateDirName = "jikken-ghost"
	journalName  = "journal.json"
	stageName    = "stage"
	newIndexName = "index.new"
)

// interruptSwitch, set by tests only, is asked before each step of finish (a removal, a move,
// the index, HEAD) whether to stop there as a killed process would.
var interruptSwitch func(step int) bool

var errInterrupted = errors.New("switch interrupted")

// journal is what a switch that is under way still has to do.
type journal struct {
	Version int      `json:"version"`
	Start   string   `json:"start"`            // HEAD before
	Head    string   `json:"head"`             // HEAD after
	Remove  []string `json:"remove,omitempty"` // paths to delete
	Write   []string `json:"write,omitempty"`  // paths staged under the stage directory
	Index   bool     `json:"index,omitempty"`  // index.new is to replace the index
}

func (w *worktree) stateDir() string { return filepath.Join(w.gitDir, stateDirName) }

// lock takes the repository's ghost lock and finishes a switch a killed process left. The
// returned function releases the lock.
func (w *worktree) lock(ctx context.Context) (func(), error) {
	unlock, waited, err := lockDir(ctx, w.stateDir())
	if err != nil {
		return nil, err
	}
	recovered, err := w.recover(ctx)
	if err != nil {
		unlock()
		return nil, err
	}
	if waited || recovered {
		// Another pull may have moved HEAD while this one waited.
		out, err := w.git.Run(ctx, "rev-parse", "HEAD", "HEAD^{tree}", "--")
		if f := strings.Fields(string(out)); err == nil && len(f) >= 2 {
			w.start, w.startTree = f[0], f[1]
		}
	}
	return unlock, nil
}

// recover finishes the switch of a killed pull, or removes what a pull killed before its
// switch left; the caller holds the lock. It reports whether it finished a switch.
func (w *worktree) recover(ctx context.Context) (bool, error) {
	dir := w.stateDir()
	b, err := os.ReadFile(filepath.Join(dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, w.clearState()
	}
	if err != nil {
		return false, fmt.Errorf("read the journal of an interrupted pull: %w", err)
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return false, fmt.Errorf("the journal of an interrupted pull (%s) is damaged: %w; check the working tree with git status, then delete the file", filepath.Join(dir, journalName), err)
	}
	if err := w.finish(ctx, j); err != nil {
		return false, fmt.Errorf("finish an interrupted pull: %w", err)
	}
	return true, w.clearState()
}

// clearState removes what killed ghost commands left in the state directory: staged files,
// scratch indexes and the lock files of the git commands that wrote them. The caller holds the
// lock and there is no journal.
func (w *worktree) clearState() error {
	entries, err := os.ReadDir(w.stateDir())
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(w.stateDir(), e.Name())); err != nil {
			return fmt.Errorf("clear %s: %w", w.stateDir(), err)
		}
	}
	return nil
}

// switchTo moves the repository from HEAD w.start to the target. dirty lists the paths with
// local changes: none of them may be one the switch changes.
func (w *worktree) switchTo(ctx context.Context, t target, dirty []string) error {
	if _, err := os.Lstat(filepath.Join(w.gitDir, "index.lock")); err == nil {
		return errors.New("another git process is using the repository (index.lock exists); wait for it, or remove .git/index.lock if no git command is running")
	}
	out, err := w.git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", w.start, t.tree)
	if err != nil {
		return fmt.Errorf("compare HEAD with the ghost's state: %w", err)
	}
	j := journal{Version: 1, Start: w.start, Head: t.head}
	var gitlinks []string
	added := map[string]bool{}
	for _, e := range parseRaw(out) {
		switch {
		case e.dstMode == "000000":
			j.Remove = append(j.Remove, e.path)
		case e.dstMode == "160000":
			gitlinks = append(gitlinks, e.path)
		default:
			j.Write = append(j.Write, e.path)
			added[e.path] = e.srcMode == "000000"
		}
	}
	if err := w.checkFree(ctx, j, t, dirty, added); err != nil {
		return err
	}
	dir := w.stateDir()
	stage := filepath.Join(dir, stageName)
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("clear %s: %w", stage, err)
	}
	if err := w.stage(ctx, stage, t, j.Write); err != nil {
		os.RemoveAll(stage)
		return err
	}
	if t.index != w.startTree {
		if err := w.prepareIndex(ctx, filepath.Join(dir, newIndexName), t.index); err != nil {
			os.RemoveAll(stage)
			return err
		}
		j.Index = true
	}
	b, err := json.Marshal(j)
	if err == nil {
		err = writeFileAtomic(filepath.Join(dir, journalName), b)
	}
	if err != nil {
		os.RemoveAll(stage)
		os.Remove(filepath.Join(dir, newIndexName))
		return fmt.Errorf("write the pull's journal: %w", err)
	}
	if err := w.finish(ctx, j); err != nil {
		return fmt.Errorf("%w (run the pull again to finish it)", err)
	}
	for _, p := range gitlinks {
		// git checks out a submodule as an empty directory until it is initialised.
		_ = os.MkdirAll(filepath.Join(w.root, filepath.FromSlash(p)), 0o755)
	}
	return nil
}

// checkFree refuses, before anything changes, a switch that would overwrite local work: a
// changed path with local changes, or an untracked or ignored file where the ghost puts one.
func (w *worktree) checkFree(ctx context.Context, j journal, t target, dirty []string, added map[string]bool) error {
	touched := map[string]bool{}
	for _, p := range append(append([]string(nil), j.Remove...), j.Write...) {
		touched[p] = true
	}
	if len(dirty) > 0 && t.index != w.startTree {
		// The index changes too: its paths must be as clean as the working tree's.
		out, err := w.git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", w.start, t.index)
		if err != nil {
			return fmt.Errorf("compare HEAD with the ghost's index: %w", err)
		}
		for _, p := range splitZ(out) {
			touched[p] = true
		}
	}
	dirtySet := map[string]bool{}
	for _, d := range dirty {
		dirtySet[d] = true
	}
	// A dirty path that is touched, or lies inside or above a touched one.
	refuse := func(d string) error {
		return fmt.Errorf("%s has local changes and the ghost changes it (nothing was changed); commit, stash or undo them", d)
	}
	for p := range touched {
		for q := p; q != ""; q = pathDir(q) {
			if dirtySet[q] {
				return refuse(q)
			}
		}
	}
	for _, d := range dirty {
		for q := pathDir(d); q != ""; q = pathDir(q) {
			if touched[q] {
				return refuse(d)
			}
		}
	}
	removed := map[string]bool{}
	for _, p := range j.Remove {
		removed[p] = true
	}
	dirs := map[string]bool{} // parent directories found to be directories
	for _, p := range j.Write {
		if err := w.inTheWay(p, added[p], removed, dirs); err != nil {
			return err
		}
	}
	return nil
}

// inTheWay reports a file that keeps the ghost's file p from being written: one of its parent
// directories that is a file the switch does not remove, or, when p is new (not tracked at
// HEAD), whatever is at p: an untracked or ignored file, or a directory of files the switch
// does not remove.
func (w *worktree) inTheWay(p string, isNew bool, removed, dirs map[string]bool) error {
	refuse := func(q string) error {
		return fmt.Errorf("untracked or ignored %s is in the way of the ghost's %s (nothing was changed); move it away and pull again", q, p)
	}
	for parent := pathDir(p); parent != "" && !dirs[parent]; parent = pathDir(parent) {
		fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(parent)))
		if err == nil && !fi.IsDir() && !removed[parent] {
			return refuse(parent)
		}
		dirs[parent] = err == nil && fi.IsDir()
	}
	fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(p)))
	if err != nil || !isNew {
		return nil // absent, or tracked (checkFree checked it is clean)
	}
	if !fi.IsDir() {
		return refuse(p)
	}
	// A directory where the ghost puts a file: it must hold only files the ghost removes.
	return filepath.WalkDir(filepath.Join(w.root, filepath.FromSlash(p)), func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(w.root, q)
		if !removed[filepath.ToSlash(rel)] {
			return refuse(filepath.ToSlash(rel))
		}
		return nil
	})
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// stage writes the files of the target tree at paths under dir, with git's filters and modes.
func (w *worktree) stage(ctx context.Context, dir string, t target, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	index := t.treeIndex
	if index == "" {
		s, err := w.scratch()
		if err != nil {
			return err
		}
		defer s.remove()
		index = s.path("tree.index")
		if _, err := w.git.With("GIT_INDEX_FILE="+index).Run(ctx, "read-tree", t.tree); err != nil {
			return fmt.Errorf("read the ghost's tree: %w", err)
		}
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	if _, err := w.git.With("GIT_INDEX_FILE="+index).Input(ctx, &in, "checkout-index", "-f", "-z", "--stdin", "--prefix="+dir+"/"); err != nil {
		return fmt.Errorf("write the ghost's files: %w", err)
	}
	return nil
}

// prepareIndex writes the index the switch installs: the current index (so staged changes on
// paths the ghost does not touch stay, and so does the stat data of unchanged files) moved from
// HEAD's tree to the target index tree, as a two-tree read-tree does. -i: the working tree
// was checked already (checkFree), and racily clean entries must not count as changes.
func (w *worktree) prepareIndex(ctx context.Context, path, tree string) error {
	if err := copyIndex(w.indexFile(), path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("copy the index: %w", err)
	}
	if _, err := w.git.With("GIT_INDEX_FILE="+path).Run(ctx, "read-tree", "-m", "-i", w.start, tree); err != nil {
		os.Remove(path)
		return fmt.Errorf("prepare the new index (nothing was changed): %w", err)
	}
	return nil
}

// finish carries out a journal; every step may have been done before by a killed process.
func (w *worktree) finish(ctx context.Context, j journal) error {
	dir := w.stateDir()
	stage := filepath.Join(dir, stageName)
	step := 0
	stop := func() bool {
		step++
		return interruptSwitch != nil && interruptSwitch(step-1)
	}
	// Deeper paths first, so directories empty before their parents are removed.
	remove := append([]string(nil), j.Remove...)
	sort.Slice(remove, func(a, b int) bool { return len(remove[a]) > len(remove[b]) })
	for _, p := range remove {
		if stop() {
			return errInterrupted
		}
		full := filepath.Join(w.root, filepath.FromSlash(p))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		w.removeEmptyParents(p)
	}
	for _, p := range j.Write {
		if stop() {
			return errInterrupted
		}
		src := filepath.Join(stage, filepath.FromSlash(p))
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue // moved before
		}
		dst := filepath.Join(w.root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("create the directory of %s: %w", p, err)
		}
		if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
			os.Remove(dst) // an emptied directory the ghost replaces with a file
		}
		if err := moveFile(src, dst); err != nil {
			return fmt.Errorf("move %s into place: %w", p, err)
		}
	}
	if stop() {
		return errInterrupted
	}
	if j.Index {
		if err := w.installIndex(filepath.Join(dir, newIndexName)); err != nil {
			return err
		}
	}
	if stop() {
		return errInterrupted
	}
	if j.Head != j.Start {
		if err := w.moveHead(ctx, j.Start, j.Head); err != nil {
			return err
		}
	}
	if err := os.Remove(filepath.Join(dir, journalName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the pull's journal: %w", err)
	}
	return os.RemoveAll(stage)
}

// moveFile renames src to dst; across file systems (a git directory mounted elsewhere) it
// copies src next to dst first, so dst still changes in one rename.
func moveFile(src, dst string) error {
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	tmp := dst + ".jikken-ghost-tmp"
	os.Remove(tmp)
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err == nil {
			err = os.Symlink(target, tmp)
		}
		if err != nil {
			return err
		}
	} else if err := copyFile(src, tmp); err != nil {
		return err
	} else if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return os.Remove(src)
}

func isDirErr(err error) bool {
	return errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// removeEmptyParents removes the directories above p that the removal of p left empty, as git
// does.
func (w *worktree) removeEmptyParents(p string) {
	for parent := pathDir(p); parent != ""; parent = pathDir(parent) {
		if os.Remove(filepath.Join(w.root, filepath.FromSlash(parent))) != nil {
			return
		}
	}
}

// installIndex replaces the index with the file at path through git's own lock, index.lock: a
// hard link there (which fails if a git command holds the lock), then a rename over the index.
// An index.lock that is the same file as path was left by an interrupted install.
func (w *worktree) installIndex(path string) error {
	lock := filepath.Join(w.gitDir, "index.lock")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if same(lock, path) || !exists(lock) {
			return nil // installed before
		}
	}
	if err := os.Link(path, lock); err != nil {
		if !errors.Is(err, fs.ErrExist) || !same(lock, path) {
			return fmt.Errorf("install the new index: %w; if no git command is running, remove %s and pull again", err, lock)
		}
	}
	if err := os.Rename(lock, filepath.Join(w.gitDir, "index")); err != nil {
		return fmt.Errorf("install the new index: %w", err)
	}
	return os.Remove(path)
}

func same(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	return err == nil && os.SameFile(fa, fb)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// moveHead moves HEAD (and the branch it is on) from start to head, unless it is there. A ref
// lock file naming one of the two commits is the leftover of a killed update and is removed.
func (w *worktree) moveHead(ctx context.Context, start, head string) error {
	for try := 0; ; try++ {
		cur, _ := w.git.Line(ctx, "rev-parse", "--verify", "-q", "HEAD")
		if cur == head {
			return nil
		}
		_, err := w.git.Run(ctx, "update-ref", "-m", "ghost pull", "HEAD", head, start)
		if err == nil {
			return nil
		}
		if lock := staleRefLock(err, start, head); try == 0 && lock != "" && os.Remove(lock) == nil {
			continue
		}
		return fmt.Errorf("move HEAD to %s: %w", short(head), err)
	}
}

// staleRefLock returns the lock file named in git's "Unable to create '...lock': File exists"
// when it holds one of the given commits.
func staleRefLock(err error, commits ...string) string {
	msg := err.Error()
	_, rest, ok := strings.Cut(msg, "Unable to create '")
	if !ok {
		return ""
	}
	lock, _, ok := strings.Cut(rest, "'")
	if !ok || !strings.HasSuffix(lock, ".lock") {
		return ""
	}
	b, rerr := os.ReadFile(lock)
	if rerr != nil {
		return ""
	}
	for _, c := range commits {
		if strings.TrimSpace(string(b)) == c {
			return lock
		}
	}
	return ""
}

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

package runner

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// folders keeps the emptied folders of collected attempts for the run's next attempts, which
// take one by renaming it instead of making two folders (the attempt's and its out/) and
// removing them again. For short trials that making and removing was most of the runner's
// file-system work, and on ext4 without a journal every new inode is also searched past the
// inodes deleted in the last seconds, so the cost grew with the run.
type folders struct {
	root string // the run's work folder

	mu   sync.Mutex
	free []string
	seq  int
}

// spareName is the prefix of a free folder's name; trial names cannot start with a dot.
const spareName = ".free-"

// take renames a free folder to dir and reports whether it did; dir then holds an empty out/.
func (f *folders) take(dir string) bool {
	f.mu.Lock()
	n := len(f.free)
	if n == 0 {
		f.mu.Unlock()
		return false
	}
	spare := f.free[n-1]
	f.free = f.free[:n-1]
	f.mu.Unlock()
	if err := os.Rename(spare, dir); err != nil {
		_ = os.RemoveAll(spare)
		return false
	}
	return true
}

// give keeps dir for a later attempt when it holds nothing but an empty out/ folder, and
// reports whether it did; the caller removes a folder it did not keep.
func (f *folders) give(dir string) bool {
	if !onlyEmptyOut(dir) {
		return false
	}
	f.mu.Lock()
	f.seq++
	spare := filepath.Join(f.root, spareName+strconv.Itoa(f.seq))
	f.mu.Unlock()
	if os.Rename(dir, spare) != nil {
		return false
	}
	f.mu.Lock()
	f.free = append(f.free, spare)
	f.mu.Unlock()
	return true
}

// drain removes the free folders: the run is over.
func (f *folders) drain() {
	f.mu.Lock()
	free := f.free
	f.free = nil
	f.mu.Unlock()
	for _, dir := range free {
		removeAttemptDir(dir)
	}
}

// onlyEmptyOut reports whether dir's only entry is an empty folder named out.
func onlyEmptyOut(dir string) bool {
	names, err := readNames(dir, 2)
	if err != nil || len(names) != 1 || names[0] != "out" {
		return false
	}
	names, err = readNames(filepath.Join(dir, "out"), 1)
	return err == nil && len(names) == 0
}

// readNames reads at most n names of dir's entries.
func readNames(dir string, n int) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(n)
	if err == io.EOF {
		err = nil
	}
	return names, err
}

// isSpare reports whether a name in a run's work folder is a free folder a runner left.
func isSpare(name string) bool { return strings.HasPrefix(name, spareName) }

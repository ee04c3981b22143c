package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Folder is a trial's checkpoint folder on the runner's host (local, docker and slurm with
// shared folders), which the trial writes in place: what it wrote is there for the next
// attempt even when the runner is killed. Its version counts the changes the runner has seen,
// kept in a small state file beside it.
type Folder struct {
	Dir string
}

// FolderFor is the checkpoint folder of trial in run under the runner's work root: beside the
// attempt folders (<trial>@<n>), under a name no trial's can take ("+" is not allowed in one).
func FolderFor(workRoot, run, trial string) Folder {
	return Folder{Dir: filepath.Join(workRoot, run, trial+"+checkpoint")}
}

// State is what a checkpoint holds at one moment.
type State struct {
	// Version counts the changes seen (0: empty, never written).
	Version int `json:"version"`
	// At is when the newest file was written.
	At time.Time `json:"at,omitzero"`
	// Size is the bytes of all its files; Files how many there are.
	Size  int64 `json:"size"`
	Files int   `json:"files"`
	// Sum identifies the folder's listing (names, sizes, modification times).
	Sum string `json:"sum,omitempty"`
}

// Prepare makes the folder if it is missing and returns its state: the trial resumes when
// Version > 0 and it holds files. A folder that a backend was replacing by two renames when its
// runner died (Dir missing, Dir+".old" whole) is put back first.
func (f Folder) Prepare() (State, error) {
	if _, err := os.Stat(f.Dir); errors.Is(err, fs.ErrNotExist) {
		_ = os.Rename(f.Dir+".old", f.Dir)
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return State{}, fmt.Errorf("checkpoint folder: %w", err)
	}
	return f.Observe()
}

// Observe returns the folder's state, counting a new version when its files changed since the
// last Observe (of any runner). A missing folder is empty.
func (f Folder) Observe() (State, error) {
	prev, _ := f.read()
	cur, err := scan(f.Dir)
	if err != nil {
		return prev, fmt.Errorf("checkpoint folder %s: %w", f.Dir, err)
	}
	cur.Version = prev.Version
	if cur.Sum != prev.Sum {
		if cur.Files > 0 || prev.Files > 0 {
			cur.Version++
		}
		if err := f.write(cur); err != nil {
			return cur, err
		}
	}
	return cur, nil
}

func (f Folder) statePath() string { return f.Dir + ".json" }

func (f Folder) read() (State, error) {
	var s State
	b, err := os.ReadFile(f.statePath())
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// write replaces the state file atomically, so a runner killed while writing it leaves the
// previous state.
func (f Folder) write(s State) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := f.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("checkpoint state: %w", err)
	}
	if err := os.Rename(tmp, f.statePath()); err != nil {
		return fmt.Errorf("checkpoint state: %w", err)
	}
	return nil
}

// scan sums up the regular files under dir (a missing dir is empty): the listing's hash, the
// bytes, the newest modification time. Files are visited in lexical order, so the sum does not
// depend on the file system's order.
func scan(dir string) (State, error) {
	var s State
	h := fnv.New64a()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we looked: the trial is writing
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		mt := info.ModTime()
		h.Write([]byte(rel + "\x00" + strconv.FormatInt(info.Size(), 10) + "\x00" + strconv.FormatInt(mt.UnixNano(), 10) + "\n"))
		s.Files++
		s.Size += info.Size()
		if mt.After(s.At) {
			s.At = mt
		}
		return nil
	})
	if s.Files > 0 {
		s.Sum = strconv.FormatUint(h.Sum64(), 16)
	}
	return s, err
}

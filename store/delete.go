package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Delete removes every object of run, everything under runs/<run>/, and returns how many it
// deleted. The manifest goes last: RunIDs lists a run as long as its manifest exists, so a
// Delete that stops midway (an error, Ctrl-C) leaves a run that 'jikken runs' still shows and a
// second Delete finishes. Deleting a run that is not there deletes nothing and is not an error.
//
// progress, when not nil, is called after each deleted object with the number deleted so far,
// never concurrently. Delete neither checks nor takes the run's lock: callers refuse runs with
// a live runner first.
func (r Runs) Delete(ctx context.Context, run string, progress func(deleted int)) (int, error) {
	// Checked before RunKey, whose path.Join would clean ".." away.
	prefix := "runs/" + run + "/"
	if strings.Contains(run, "/") || ValidKey(prefix+"manifest.json") != nil {
		return 0, fmt.Errorf("delete run %q: not a run id", run)
	}
	manifest := RunKey(run, "manifest.json")
	var keys []string
	hasManifest := false
	if err := r.Blob.List(ctx, prefix, func(in Info) error {
		if in.Key == manifest {
			hasManifest = true
		} else {
			keys = append(keys, in.Key)
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("delete run %s: %w", run, err)
	}
	var (
		mu      sync.Mutex
		deleted int
	)
	del := func(key string) error {
		if err := r.Blob.Delete(ctx, key); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		deleted++
		if progress != nil {
			progress(deleted)
		}
		return nil
	}
	err := inParallel(len(keys), func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return del(keys[i])
	})
	if err == nil && hasManifest {
		err = del(manifest)
	}
	if err != nil {
		return deleted, fmt.Errorf("delete run %s: %w (%d objects deleted; run the delete again to finish)", run, err, deleted)
	}
	// A writer killed midway leaves temporary files, which List does not show.
	_, _ = r.SweepTemp(ctx, run)
	if p, ok := r.Blob.(emptyDirPruner); ok {
		p.pruneEmptyDirs(prefix)
	}
	return deleted, nil
}

// emptyDirPruner is a blob that keeps folders (the folder store): Delete removes the files of a
// run, and pruneEmptyDirs the folders they leave, so 'ls runs/' shows only live runs.
type emptyDirPruner interface {
	pruneEmptyDirs(prefix string)
}

// pruneEmptyDirs removes the empty folders under prefix (a folder key ending in "/"), deepest
// first, and prefix itself when it ends up empty. A folder that is not empty stays: a writer
// that created a file in it meanwhile keeps its file. Failures are ignored; an empty folder
// holds no object.
func (f *Folder) pruneEmptyDirs(prefix string) {
	top, err := f.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return
	}
	var dirs []string
	_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		_ = os.Remove(d) // fails, as it should, on a folder that is not empty
	}
}

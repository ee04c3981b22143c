package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// reservedOutputs are the names of a trial folder that jikken writes itself (the record, the
// params, the logs, earlier attempts' logs, live metric chunks); a trial's own file or folder of one of these names
// is stored under artifacts/ instead, so it never replaces what jikken keeps there.
var reservedOutputs = map[string]bool{"trial.json": true, "params.json": true, "stdout.log": true, "stderr.log": true, "attempts": true, "live": true}

// OutputKey is the key of the trial output rel (slash-separated, relative to the trial's
// $JIKKEN_OUTPUT_DIR).
func OutputKey(run, trial, rel string) string {
	if first, _, _ := strings.Cut(rel, "/"); reservedOutputs[first] {
		rel = path.Join("artifacts", rel)
	}
	return TrialKey(run, trial, rel)
}

// PutOutputs stores the files a trial left in dir (its $JIKKEN_OUTPUT_DIR) under its trial
// folder: the trial output contract, the same whether the runner collects an attempt folder or
// jikken trial-exec uploads from next to the trial. Regular files are stored (moved into a
// folder store when move is set, else copied, so the trial's files stay where it wrote them);
// anything else (a symbolic link, a pipe) is left out with a note saying so. A missing dir is
// no output at all. It returns the notes and the errors of what did not reach the store.
func PutOutputs(ctx context.Context, b Blob, run, trial, dir string, move bool) ([]string, error) {
	var notes []string
	var errs []error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			notes = append(notes, fmt.Sprintf("output %s not stored: %s", rel, kindOf(p, d)))
			return nil
		}
		key := OutputKey(run, trial, rel)
		if err := ValidKey(key); err != nil {
			errs = append(errs, fmt.Errorf("output %s: %w", rel, err))
			return nil
		}
		put := PutFile
		if !move {
			put = PutCopy
		}
		if err := put(ctx, b, key, p); err != nil {
			errs = append(errs, fmt.Errorf("output %s: %w", rel, err))
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return notes, errors.Join(errs...)
}

// PutCopy stores the file at p under key as it is now, without letting the blob move it (a
// folder store renames the files it is given): a file still growing is stored as long as it
// was when opened.
func PutCopy(ctx context.Context, b Blob, key, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// A section of the file, not a LimitReader: a store that may retry reads it again in place
	// instead of copying it aside first (the S3 store does for bodies it cannot seek).
	return b.Put(ctx, key, io.NewSectionReader(f, 0, st.Size()), st.Size())
}

// kindOf says what a non-regular output file is, for the trial's notes.
func kindOf(p string, d fs.DirEntry) string {
	switch t := d.Type(); {
	case t&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return fmt.Sprintf("a symbolic link (to %s); write the file itself into the output folder", target)
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

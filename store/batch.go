package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Object is a key and the bytes to store under it.
type Object struct {
	Key  string
	Data []byte
}

// Batcher is implemented by blobs that can store several objects for less than the price of
// storing them one by one: the folder store makes a whole batch durable with one sync. Each
// object is replaced atomically, as by Put; the objects of a batch are independent (some may
// fail while others are stored). errs has one entry per object.
type Batcher interface {
	PutBatch(ctx context.Context, objs []Object) (errs []error)
}

// Mover is implemented by blobs that can give an object a new key without copying it.
type Mover interface {
	Move(ctx context.Context, from, to string) error
}

// TempSweeper is implemented by blobs that leave temporary files behind when a writer dies
// midway (the folder store's .tmp-* files): RemoveTemp removes those under prefix.
type TempSweeper interface {
	RemoveTemp(ctx context.Context, prefix string) (int, error)
}

// IsNoSpace reports whether err comes from a full disk.
func IsNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// Move gives the object at from the key to, with the blob's Mover when it has one, else by
// copying it and deleting the original.
func Move(ctx context.Context, b Blob, from, to string) error {
	if m, ok := b.(Mover); ok {
		return m.Move(ctx, from, to)
	}
	r, err := b.Get(ctx, from)
	if err != nil {
		return err
	}
	defer r.Close()
	st, err := b.Stat(ctx, from)
	if err != nil {
		return err
	}
	if err := b.Put(ctx, to, r, st.Size); err != nil {
		return err
	}
	return b.Delete(ctx, from)
}

// PutBatch stores objs with b's Batcher, or one by one.
func PutBatch(ctx context.Context, b Blob, objs []Object) []error {
	if bt, ok := b.(Batcher); ok {
		return bt.PutBatch(ctx, objs)
	}
	errs := make([]error, len(objs))
	for i, o := range objs {
		errs[i] = b.Put(ctx, o.Key, bytes.NewReader(o.Data), int64(len(o.Data)))
	}
	return errs
}

// WriteTrials stores several trial records at once (a group commit), each stamped as
// WriteTrial stamps it; errs has one entry per record.
func (r Runs) WriteTrials(ctx context.Context, recs []*TrialRecord) []error {
	objs := make([]Object, 0, len(recs))
	errs := make([]error, len(recs))
	idx := make([]int, 0, len(recs))
	for i, rec := range recs {
		b, err := json.MarshalIndent(stamped(rec), "", "  ")
		if err != nil {
			errs[i] = err
			continue
		}
		objs = append(objs, Object{Key: TrialKey(rec.Run, rec.Name, "trial.json"), Data: append(b, '\n')})
		idx = append(idx, i)
	}
	for k, err := range PutBatch(ctx, r.Blob, objs) {
		errs[idx[k]] = err
	}
	return errs
}

// SweepTemp removes the temporary files a killed writer left under run (folder stores).
func (r Runs) SweepTemp(ctx context.Context, run string) (int, error) {
	if s, ok := r.Blob.(TempSweeper); ok {
		return s.RemoveTemp(ctx, "runs/"+run+"/")
	}
	return 0, nil
}

// PutBatch implements Batcher: every object is written to a temporary file, all of them are
// made durable together, then each is renamed over its key.
func (f *Folder) PutBatch(ctx context.Context, objs []Object) []error {
	errs := make([]error, len(objs))
	type pending struct {
		i         int
		tmp, path string
	}
	var ps []pending
	var files []*os.File
	for i, o := range objs {
		p, err := f.path(o.Key)
		if err != nil {
			errs[i] = fmt.Errorf("put: %w", err)
			continue
		}
		tmp, err := createTemp(p)
		if err == nil {
			_, err = tmp.Write(o.Data)
			if err != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}
		if err != nil {
			errs[i] = fmt.Errorf("put %s: %w", o.Key, err)
			continue
		}
		files = append(files, tmp)
		ps = append(ps, pending{i: i, tmp: tmp.Name(), path: p})
	}
	syncErrs := syncFiles(files)
	for k, pe := range ps {
		err := syncErrs[k]
		if cerr := files[k].Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = rename(pe.tmp, pe.path)
		}
		if err != nil {
			os.Remove(pe.tmp)
			errs[pe.i] = fmt.Errorf("put %s: %w", objs[pe.i].Key, err)
		}
	}
	return errs
}

// createTemp creates a temporary file beside dst, creating dst's folder when needed.
func createTemp(dst string) (*os.File, error) {
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			tmp, err = os.CreateTemp(dir, tmpPrefix+"*")
		}
	}
	return tmp, err
}

// Move implements Mover with a rename.
func (f *Folder) Move(ctx context.Context, from, to string) error {
	src, err := f.path(from)
	if err != nil {
		return fmt.Errorf("move: %w", err)
	}
	dst, err := f.path(to)
	if err != nil {
		return fmt.Errorf("move: %w", err)
	}
	err = rename(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(src); serr == nil {
			if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
				err = rename(src, dst)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", from, to, notFound(err))
	}
	return nil
}

// RemoveTemp implements TempSweeper.
func (f *Folder) RemoveTemp(ctx context.Context, prefix string) (int, error) {
	top, err := f.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return 0, fmt.Errorf("remove temporary files: %w", err)
	}
	n := 0
	err = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), tmpPrefix) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("remove temporary files under %s: %w", prefix, err)
	}
	return n, nil
}

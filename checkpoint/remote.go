package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/store"
)

// Remote is a trial's checkpoint in a run's store, under Prefix (Key gives it): its versions'
// files under files/<id>/ and their manifests under manifests/<id>.json, where a version's id is
// its number and the attempt that saved it.
type Remote struct {
	Blob   store.Blob
	Prefix string
	// Workers is how many files move at once (default 16).
	Workers int
}

// Key is the prefix of trial's checkpoint in run.
func Key(run, trial string) string { return store.TrialKey(run, trial, "checkpoint") }

// Manifest is one complete version of a checkpoint: every file it holds and where.
type Manifest struct {
	Version int       `json:"version"`
	Attempt int       `json:"attempt"`
	Saved   time.Time `json:"saved"`
	Size    int64     `json:"size"`
	Files   []File    `json:"files"`
}

// File is one file of a version. Key is relative to the checkpoint's prefix, and may be in an
// older version's folder when the file did not change since.
type File struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Key     string    `json:"key"`
}

// id names a version's files and manifest; ids sort as (version, attempt).
func (m *Manifest) id() string { return versionID(m.Version, m.Attempt) }

func versionID(v, attempt int) string { return fmt.Sprintf("%010d-%d", v, attempt) }

// parseID reads an id; ok is false for anything else.
func parseID(s string) (v, attempt int, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	v, err1 := strconv.Atoi(a)
	attempt, err2 := strconv.Atoi(b)
	return v, attempt, err1 == nil && err2 == nil && v > 0
}

// TooLargeError is returned by Save for a folder over its cap: nothing was uploaded, and the
// last version saved stays the newest.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("checkpoint is %d bytes, over its cap of %d (checkpoint.max_size); not saved, the last good checkpoint is kept", e.Size, e.Max)
}

// Stats say what a Save moved.
type Stats struct {
	Files, Uploaded int
	Bytes, Sent     int64
}

func (r Remote) key(rel string) string { return r.Prefix + "/" + rel }

func (r Remote) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return 16
}

// Latest returns the newest complete version, or nil when there is none. A manifest that cannot
// be read or parsed is passed over for the one before it.
func (r Remote) Latest(ctx context.Context) (*Manifest, error) {
	var ids []string
	err := r.Blob.List(ctx, r.key("manifests/"), func(in store.Info) error {
		name, ok := strings.CutSuffix(path.Base(in.Key), ".json")
		if _, _, valid := parseID(name); ok && valid {
			ids = append(ids, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	slices.SortFunc(ids, compareIDs)
	for _, id := range slices.Backward(ids) {
		b, err := store.ReadAll(ctx, r.Blob, r.key("manifests/"+id+".json"))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
		}
		var m Manifest
		if json.Unmarshal(b, &m) != nil || m.id() != id {
			continue
		}
		return &m, nil
	}
	return nil, nil
}

func compareIDs(a, b string) int {
	va, aa, _ := parseID(a)
	vb, ab, _ := parseID(b)
	return cmp.Or(cmp.Compare(va, vb), cmp.Compare(aa, ab))
}

// Save uploads dir as the version after prev (nil: the first), for attempt, and returns its
// manifest. Files whose path, size and modification time are as prev has them are not sent
// again; when nothing changed at all, no version is made and prev is returned. The manifest
// goes last, so a Save cut short leaves prev the newest; versions older than prev are pruned.
// A folder over max bytes (max > 0) is not saved: *TooLargeError.
func (r Remote) Save(ctx context.Context, dir string, prev *Manifest, attempt int, max int64) (*Manifest, Stats, error) {
	files, err := list(dir)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("checkpoint folder %s: %w", dir, err)
	}
	var st Stats
	for _, f := range files {
		st.Files++
		st.Bytes += f.Size
	}
	if max > 0 && st.Bytes > max {
		return nil, st, &TooLargeError{Size: st.Bytes, Max: max}
	}
	m := &Manifest{Version: 1, Attempt: attempt, Size: st.Bytes, Files: files}
	old := map[string]File{}
	if prev != nil {
		m.Version = prev.Version + 1
		for _, f := range prev.Files {
			old[f.Path] = f
		}
	}
	var send []int
	for i := range m.Files {
		f := &m.Files[i]
		if o, ok := old[f.Path]; ok && o.Size == f.Size && o.ModTime.Equal(f.ModTime) {
			f.Key = o.Key
			continue
		}
		f.Key = "files/" + m.id() + "/" + f.Path
		if err := store.ValidKey(r.key(f.Key)); err != nil {
			return nil, st, fmt.Errorf("checkpoint file %s: %w", f.Path, err)
		}
		send = append(send, i)
	}
	if prev != nil && len(send) == 0 && len(prev.Files) == len(m.Files) {
		return prev, st, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.workers())
	for _, i := range send {
		f := &m.Files[i]
		g.Go(func() error {
			if err := r.upload(gctx, f, filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
				return fmt.Errorf("upload checkpoint file %s: %w", f.Path, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, st, err
	}
	m.Size = 0
	for _, f := range m.Files {
		m.Size += f.Size
	}
	for _, i := range send {
		st.Uploaded++
		st.Sent += m.Files[i].Size
	}
	m.Saved = time.Now().UTC()
	b, err := json.Marshal(m)
	if err != nil {
		return nil, st, err
	}
	if err := r.Blob.Put(ctx, r.key("manifests/"+m.id()+".json"), bytes.NewReader(b), int64(len(b))); err != nil {
		return nil, st, fmt.Errorf("write checkpoint manifest: %w", err)
	}
	r.prune(ctx, m, prev)
	return m, st, nil
}

// upload stores the file at p as f.Key, and sets f's size and time to those of what it
// stored: a file the trial replaced since it was listed is stored as it is now.
func (r Remote) upload(ctx context.Context, f *File, p string) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	f.Size, f.ModTime = info.Size(), info.ModTime().UTC()
	// A section of the file, not a LimitReader: a store that may retry reads it again in
	// place rather than copying it aside first.
	return r.Blob.Put(ctx, r.key(f.Key), io.NewSectionReader(in, 0, f.Size), f.Size)
}

// prune removes the manifests and files of versions older than prev that neither m nor prev
// uses, and the files of uploads cut short before m. Newer ids than m's are left alone: another
// attempt may be saving. Failures are harmless (the next Save tries again), so they are ignored.
func (r Remote) prune(ctx context.Context, m, prev *Manifest) {
	used := map[string]bool{}
	keep := map[string]bool{m.id(): true}
	for _, x := range []*Manifest{m, prev} {
		if x == nil {
			continue
		}
		keep[x.id()] = true
		for _, f := range x.Files {
			used[f.Key] = true
		}
	}
	var doomed []string
	_ = r.Blob.List(ctx, r.Prefix+"/", func(in store.Info) error {
		rel := strings.TrimPrefix(in.Key, r.Prefix+"/")
		var id string
		switch {
		case strings.HasPrefix(rel, "manifests/"):
			id = strings.TrimSuffix(strings.TrimPrefix(rel, "manifests/"), ".json")
		case strings.HasPrefix(rel, "files/"):
			id, _, _ = strings.Cut(strings.TrimPrefix(rel, "files/"), "/")
		default:
			return nil
		}
		if _, _, ok := parseID(id); !ok || compareIDs(id, m.id()) > 0 || keep[id] && !strings.HasPrefix(rel, "files/") || used[rel] {
			return nil
		}
		doomed = append(doomed, in.Key)
		return nil
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.workers())
	for _, k := range doomed {
		g.Go(func() error { return r.Blob.Delete(gctx, k) })
	}
	_ = g.Wait()
}

// Restore writes version m into dir, which it empties first, each file with its saved
// modification time, so that the next Save sends only what the trial changes.
func (r Remote) Restore(ctx context.Context, m *Manifest, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("restore checkpoint: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("restore checkpoint: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.workers())
	for _, f := range m.Files {
		g.Go(func() error {
			if err := r.fetch(gctx, f, dir); err != nil {
				return fmt.Errorf("restore checkpoint file %s: %w", f.Path, err)
			}
			return nil
		})
	}
	return g.Wait()
}

func (r Remote) fetch(ctx context.Context, f File, dir string) error {
	if !fs.ValidPath(f.Path) {
		return fmt.Errorf("the manifest names a path outside the folder")
	}
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	rc, err := r.Blob.Get(ctx, r.key(f.Key))
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.Create(p)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, rc)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != f.Size {
		err = fmt.Errorf("got %d bytes of %d", n, f.Size)
	}
	if err != nil {
		return err
	}
	return os.Chtimes(p, f.ModTime, f.ModTime)
}

// list returns the regular files under dir, in lexical order of their paths (a missing dir
// holds none). A file removed while it is listed is left out: the trial is writing.
func list(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if p == dir {
					return fs.SkipAll
				}
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, File{Path: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime().UTC()})
		return nil
	})
	return out, err
}

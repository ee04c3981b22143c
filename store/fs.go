package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// tmpPrefix marks files being written; List never shows them.
const tmpPrefix = ".tmp-"

// Folder is a Blob in a local directory. Objects are files; Put writes a temporary file in the
// same directory, syncs it and renames it over the key, so a reader never sees half an object and
// a crash never leaves one.
type Folder struct {
	root string
}

// OpenFolder returns the folder store at dir, creating dir if needed.
func OpenFolder(dir string) (*Folder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	// A store inside a git repository must not end up in the code snapshots taken there.
	ignore := filepath.Join(abs, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		_ = os.WriteFile(ignore, []byte("# jikken store: not code\n*\n"), 0o644)
	}
	return &Folder{root: abs}, nil
}

// Root is the absolute directory of the store.
func (f *Folder) Root() string { return f.root }

// Location implements Blob.
func (f *Folder) Location() string { return f.root }

func (f *Folder) path(key string) (string, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// writeTemp writes r to a temporary file beside dst and returns its name.
func writeTemp(dst string, r io.Reader) (string, error) {
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, tmpPrefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			tmp, err = os.CreateTemp(dir, tmpPrefix+"*")
		}
	}
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// Put implements Blob.
func (f *Folder) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := f.path(key)
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	tmp, err := writeTemp(p, r)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Create implements Blob: a hard link of a complete temporary file, which the kernel refuses
// when the name exists, so the object appears whole and only once.
func (f *Folder) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := f.path(key)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	tmp, err := writeTemp(p, r)
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", key, ErrExists)
		}
		return fmt.Errorf("create %s: %w", key, err)
	}
	return nil
}

// PutFile implements FileUploader: the file is renamed into place when it is on the same file
// system, else copied.
func (f *Folder) PutFile(ctx context.Context, key, path string) error {
	p, err := f.path(key)
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	err = rename(path, p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(path); serr == nil {
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = rename(path, p)
			}
		}
	}
	if err == nil {
		return nil
	}
	var le *os.LinkError
	if errors.As(err, &le) && errors.Is(le.Err, syscall.EXDEV) {
		src, oerr := os.Open(path)
		if oerr != nil {
			return fmt.Errorf("put %s: %w", key, oerr)
		}
		defer src.Close()
		return f.Put(ctx, key, src, -1)
	}
	return fmt.Errorf("put %s: %w", key, err)
}

// Get implements Blob.
func (f *Folder) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	r, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, notFound(err))
	}
	return r, nil
}

// Stat implements Blob.
func (f *Folder) Stat(ctx context.Context, key string) (Info, error) {
	p, err := f.path(key)
	if err != nil {
		return Info{}, fmt.Errorf("stat: %w", err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return Info{}, fmt.Errorf("stat %s: %w", key, notFound(err))
	}
	if st.IsDir() {
		return Info{}, fmt.Errorf("stat %s: %w", key, ErrNotFound)
	}
	return Info{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// List implements Blob.
func (f *Folder) List(ctx context.Context, prefix string, fn func(Info) error) error {
	// Walk only the deepest folder the prefix names.
	dir := f.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir = filepath.Join(f.root, filepath.FromSlash(prefix[:i]))
	}
	var infos []Info
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if p != dir && p == filepath.Join(f.root, ".work") {
				return filepath.SkipDir // attempts in progress, not objects
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), tmpPrefix) || p == filepath.Join(f.root, ".gitignore") {
			return nil
		}
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		infos = append(infos, Info{Key: key, Size: st.Size(), ModTime: st.ModTime()})
		return nil
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	for _, in := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	return nil
}

// ListDirs implements DirLister with one read of the folder prefix names. Like List, it hides the
// store's own entries at its top (.work, where attempts run) and follows no symbolic link.
func (f *Folder) ListDirs(ctx context.Context, prefix string, fn func(name string) error) error {
	if err := ValidDirPrefix(prefix); err != nil {
		return fmt.Errorf("list folders: %w", err)
	}
	ents, err := os.ReadDir(filepath.Join(f.root, filepath.FromSlash(prefix)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil // nothing under prefix, or prefix names an object
		}
		return fmt.Errorf("list folders %s: %w", prefix, err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() || (prefix == "" && e.Name() == ".work") || ValidKey(prefix+e.Name()) != nil {
			continue
		}
		names = append(names, e.Name())
	}
	// The order of the keys below them: "a-b/" before "a/".
	sort.Slice(names, func(i, j int) bool { return names[i]+"/" < names[j]+"/" })
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements Blob.
func (f *Folder) Delete(ctx context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

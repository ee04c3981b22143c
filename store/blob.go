// Package store keeps runs: a small blob contract that a local folder and S3 both satisfy, and the
// run/trial layout written once on top of it.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrNotFound is returned (wrapped) by Blob methods when a key does not exist.
var ErrNotFound = errors.New("not found")

// ErrExists is returned (wrapped) by Blob.Create when the key already exists.
var ErrExists = errors.New("already exists")

// Info describes one stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Blob is a flat object store addressed by slash-separated keys (see ValidKey).
//
// Contract, checked for every implementation by storetest.Run:
//   - Put replaces the object atomically: a concurrent or later reader sees the old object or the
//     whole new one, never a part. size is the length of r, or -1 when unknown.
//   - Create is Put that fails with ErrExists when the key exists; exactly one of many concurrent
//     Creates of a key succeeds. It backs the run lock.
//   - Get and Stat return an error wrapping ErrNotFound for a missing key.
//   - List calls fn for every key under prefix (a key prefix, not only a folder) in lexical
//     order; an error from fn stops the listing and is returned.
//   - Delete is idempotent: deleting a missing key is not an error.
//   - Transient failures are retried inside the implementation; an error that comes out is final.
type Blob interface {
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	Create(ctx context.Context, key string, r io.Reader, size int64) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Stat(ctx context.Context, key string) (Info, error)
	List(ctx context.Context, prefix string, fn func(Info) error) error
	Delete(ctx context.Context, key string) error
	// Location is the store's URL as the user wrote it, without credentials.
	Location() string
}

// FileUploader is implemented by blobs that can take a finished local file more cheaply than
// through a reader (the folder store renames it when it is on the same file system).
// PutFile may consume (move) the file at path.
type FileUploader interface {
	PutFile(ctx context.Context, key, path string) error
}

// DirLister is implemented by blobs that can list the immediate sub-folders of a prefix without
// visiting the keys below them, as S3's ListObjectsV2 with delimiter "/" does. Runs uses it to
// find runs and trials without listing every artifact; a Blob without it is scanned with List.
//
// Contract, checked for every implementation by storetest.Run:
//   - prefix is "" (the top of the store) or a valid key followed by "/" (see ValidDirPrefix);
//     any other prefix is an error.
//   - ListDirs calls fn once with every name N such that some key starts with prefix+N+"/". N is
//     one key segment: never empty, never holding "/". Keys directly under prefix (prefix+N with
//     no "/" after it) are not folders and are not reported. Names that cannot be part of a valid
//     key (ValidKey(prefix+N) fails, e.g. a folder marker written by another tool) are skipped.
//   - Names come in lexical order of prefix+N+"/", the order in which List gives the keys under
//     them: "a-b" comes before "a", because '-' sorts before '/'.
//   - A prefix with nothing under it is not an error: fn is not called (as for List).
//   - An error from fn stops the listing and is returned.
//   - A name is a hint, not a promise that an object exists under it: an implementation may also
//     report a folder that holds no object (the folder store keeps directories emptied by Delete
//     or holding only a file being written), and a key may go away before the caller reads it.
//     Callers read the keys they expect in it and treat ErrNotFound as "not there".
type DirLister interface {
	ListDirs(ctx context.Context, prefix string, fn func(name string) error) error
}

// AfterLister is implemented by blobs that can start a listing after a key without visiting the
// keys before it, as S3's ListObjectsV2 with start-after does. LiveAfter uses it so that a reader
// polling a long attempt's live points lists only the chunks it has not seen.
//
// Contract, checked for every implementation by storetest.Run: ListAfter is List of prefix
// restricted to the keys greater than after (in List's order); after need not exist.
type AfterLister interface {
	ListAfter(ctx context.Context, prefix, after string, fn func(Info) error) error
}

// ListAfter lists the keys under prefix that sort after after, with the blob's ListAfter when it
// has one, else by skipping the first keys of a List.
func ListAfter(ctx context.Context, b Blob, prefix, after string, fn func(Info) error) error {
	if al, ok := b.(AfterLister); ok {
		return al.ListAfter(ctx, prefix, after, fn)
	}
	return b.List(ctx, prefix, func(in Info) error {
		if in.Key <= after {
			return nil
		}
		return fn(in)
	})
}

// ValidDirPrefix reports why prefix cannot be passed to DirLister.ListDirs, or nil.
func ValidDirPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if !strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("folder prefix %q does not end in /", prefix)
	}
	return ValidKey(strings.TrimSuffix(prefix, "/"))
}

// ListDirs lists the folders directly under prefix as DirLister does, with the blob's ListDirs
// when it has one, else from a List of every key under prefix.
func ListDirs(ctx context.Context, b Blob, prefix string, fn func(name string) error) error {
	if dl, ok := b.(DirLister); ok {
		return dl.ListDirs(ctx, prefix, fn)
	}
	if err := ValidDirPrefix(prefix); err != nil {
		return fmt.Errorf("list folders: %w", err)
	}
	// Keys under one folder are contiguous in List's order, so a folder repeats only back to back.
	last := ""
	return b.List(ctx, prefix, func(in Info) error {
		name, _, ok := strings.Cut(strings.TrimPrefix(in.Key, prefix), "/")
		if !ok || name == last || ValidKey(prefix+name) != nil {
			return nil
		}
		last = name
		return fn(name)
	})
}

// PutFile stores the file at path under key, moving it when the blob can.
func PutFile(ctx context.Context, b Blob, key, path string) error {
	if fu, ok := b.(FileUploader); ok {
		return fu.PutFile(ctx, key, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return b.Put(ctx, key, f, size)
}

// ValidKey reports why key cannot be stored, or nil. Keys are relative, slash-separated, valid
// UTF-8, with no empty, "." or ".." segments and no control characters, so that a trial name or an
// artifact path can never escape its prefix in a folder or a bucket.
func ValidKey(key string) error {
	if key == "" {
		return fmt.Errorf("empty key")
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("key %q is not valid UTF-8", key)
	}
	if strings.HasPrefix(key, "/") {
		return fmt.Errorf("key %q is absolute", key)
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("key %q has an empty path segment", key)
		case ".", "..":
			return fmt.Errorf("key %q has a %q segment", key, seg)
		}
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("key %q has a control character or backslash", key)
		}
	}
	return nil
}

// ReadAll reads the whole object at key.
func ReadAll(ctx context.Context, b Blob, key string) ([]byte, error) {
	rc, err := b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

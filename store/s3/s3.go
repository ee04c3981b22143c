package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/jikken-dev/jikken/store"
)

func init() {
	store.RegisterScheme("s3", func(ctx context.Context, url string) (store.Blob, error) {
		return Open(ctx, url)
	})
}

// partSize is the size of one part of a multipart upload: objects above it are streamed in
// parts, four at a time, so a large artifact never sits in memory whole.
const partSize = 16 << 20

// spoolLimit is how much of a reader of unknown length is kept in memory to be able to send it
// again; a longer one is copied to a temporary file first.
const spoolLimit = 16 << 20

// openBudget bounds the retries of the first request, so that a mistyped endpoint fails in
// seconds rather than after the full retry budget.
const openBudget = 15 * time.Second

// Store is a store.Blob in a bucket, under an optional key prefix.
//
// Put is one PUT (or one completed multipart upload), which S3 makes visible whole or not at
// all. Create adds If-None-Match: * so the server refuses it when the key exists. Every request
// is retried with backoff on network errors, 5xx and throttling for Config.RetryFor; the body
// is rewound (or re-read from a spool file) for each attempt, and a Get whose connection drops
// resumes where it stopped, pinned to the object's ETag.
type Store struct {
	client   *minio.Client
	core     minio.Core
	loc      Location
	url      string
	endpoint string
	budget   time.Duration
}

// Open opens the store at url (s3://bucket/prefix) with the configuration from the environment
// and the config file, and checks that the bucket is reachable with those credentials.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redactURL(url), err)
	}
	return New(ctx, url, cfg)
}

// New opens the store at url with cfg, checking that the bucket exists and the credentials are
// accepted.
func New(ctx context.Context, url string, cfg Config) (*Store, error) {
	s, err := newStore(url, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redactURL(url), err)
	}
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("open store %s: %w", url, err)
	}
	return s, nil
}

func newStore(url string, cfg Config) (*Store, error) {
	loc, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	host, secure, err := cfg.endpoint()
	if err != nil {
		return nil, err
	}
	budget, err := cfg.retryFor()
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle != nil {
		lookup = minio.BucketLookupDNS
		if *cfg.PathStyle {
			lookup = minio.BucketLookupPath
		}
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentialChain(cfg),
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		// Retries happen in this package, which knows how to rewind bodies and how to tell a
		// lost Create response from a lost race.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	scheme := "https://"
	if !secure {
		scheme = "http://"
	}
	return &Store{client: client, core: minio.Core{Client: client}, loc: loc, url: url, endpoint: scheme + host, budget: budget}, nil
}

// credentialChain takes an explicit key first, then a profile of the shared credentials file,
// then the pod's or task's identity when the environment offers one.
func credentialChain(cfg Config) *credentials.Credentials {
	var chain []credentials.Provider
	if cfg.AccessKeyID != "" {
		chain = append(chain, &credentials.Static{Value: credentials.Value{
			AccessKeyID: cfg.AccessKeyID, SecretAccessKey: string(cfg.SecretAccessKey),
			SessionToken: string(cfg.SessionToken), SignerType: credentials.SignatureV4,
		}})
	}
	chain = append(chain, &credentials.FileAWSCredentials{Profile: cfg.Profile})
	for _, v := range []string{"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		if os.Getenv(v) != "" {
			chain = append(chain, &credentials.IAM{})
			break
		}
	}
	return credentials.NewChainCredentials(chain)
}

// check makes one request that needs the bucket and valid credentials.
func (s *Store) check(ctx context.Context) error {
	var ok bool
	err := s.retry(ctx, min(s.budget, openBudget), func(int) error {
		var err error
		ok, err = s.client.BucketExists(ctx, s.loc.Bucket)
		return err
	})
	if err != nil {
		return fmt.Errorf("reach bucket %q: %w", s.loc.Bucket, s.describe(err))
	}
	if !ok {
		return fmt.Errorf("bucket %q does not exist at %s; create it first (for example 'mc mb ALIAS/%s')", s.loc.Bucket, s.endpoint, s.loc.Bucket)
	}
	return nil
}

// Location implements store.Blob.
func (s *Store) Location() string { return s.url }

// object returns the object name of a valid key.
func (s *Store) object(key string) (string, error) {
	if err := store.ValidKey(key); err != nil {
		return "", err
	}
	return s.base() + key, nil
}

// base is what every object name of this store starts with.
func (s *Store) base() string {
	if s.loc.Prefix == "" {
		return ""
	}
	return s.loc.Prefix + "/"
}

// Put implements store.Blob.
//
// An empty body is sent unsigned: over plain HTTP minio-go would otherwise stream-sign it with
// chunked encoding and no Content-Length, which some S3 servers refuse (MissingContentLength).
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	obj, err := s.object(key)
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	body, cleanup, err := replayable(r, size)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	defer cleanup()
	opts := minio.PutObjectOptions{PartSize: partSize, DisableContentSha256: body.Size() == 0}
	err = s.retry(ctx, s.budget, func(int) error {
		if _, err := body.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := s.client.PutObject(ctx, s.loc.Bucket, obj, body, body.Size(), opts)
		return err
	})
	if err != nil {
		return fmt.Errorf("put %s in %s: %w", key, s.url, s.describe(err))
	}
	return nil
}

// Create implements store.Blob with a conditional PUT (If-None-Match: *), which the server
// applies atomically: of many concurrent Creates exactly one gets 200, the others 412.
//
// A retry after a lost response may meet its own earlier, successful attempt; the object is then
// read back and compared with the body, and an identical one counts as this Create's success.
func (s *Store) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	obj, err := s.object(key)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	body, cleanup, err := replayable(r, size)
	if err != nil {
		return fmt.Errorf("create %s: %w", key, err)
	}
	defer cleanup()
	opts := minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: body.Size() == 0}
	opts.SetMatchETagExcept("*")
	ambiguous := false
	err = s.retry(ctx, s.budget, func(attempt int) error {
		if _, err := body.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := s.client.PutObject(ctx, s.loc.Bucket, obj, body, body.Size(), opts)
		if err != nil && transient(err) {
			ambiguous = true
		}
		return err
	})
	if err == nil {
		return nil
	}
	if resp := minio.ToErrorResponse(err); resp.Code == "PreconditionFailed" || resp.StatusCode == 412 {
		if ambiguous && s.sameAs(ctx, key, body) {
			return nil
		}
		return fmt.Errorf("create %s: %w", key, store.ErrExists)
	}
	return fmt.Errorf("create %s in %s: %w", key, s.url, s.describe(err))
}

// sameAs reports whether the object at key holds exactly body.
func (s *Store) sameAs(ctx context.Context, key string, body *io.SectionReader) bool {
	want, err := io.ReadAll(io.NewSectionReader(body, 0, body.Size()))
	if err != nil {
		return false
	}
	got, err := store.ReadAll(ctx, s, key)
	return err == nil && bytes.Equal(got, want)
}

// replayable returns r as a reader that can be rewound for another attempt, and a function
// that releases what that took. Readers that can seek are used in place; others are kept in
// memory up to spoolLimit, beyond that in a temporary file.
func replayable(r io.Reader, size int64) (*io.SectionReader, func(), error) {
	nothing := func() {}
	if rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		start, err := rs.Seek(0, io.SeekCurrent)
		if err == nil && size < 0 {
			var end int64
			if end, err = rs.Seek(0, io.SeekEnd); err == nil {
				size = end - start
			}
		}
		if err == nil {
			return io.NewSectionReader(rs, start, size), nothing, nil
		}
	}
	if size >= 0 && size <= spoolLimit {
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, nil, fmt.Errorf("read body: %w", err)
		}
		return io.NewSectionReader(bytes.NewReader(buf), 0, size), nothing, nil
	}
	head, err := io.ReadAll(io.LimitReader(r, spoolLimit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read body: %w", err)
	}
	if len(head) <= spoolLimit {
		return io.NewSectionReader(bytes.NewReader(head), 0, int64(len(head))), nothing, nil
	}
	f, err := os.CreateTemp("", "jikken-s3-spool-*")
	if err != nil {
		return nil, nil, fmt.Errorf("spool body: %w", err)
	}
	cleanup := func() { f.Close(); os.Remove(f.Name()) }
	_, err = f.Write(head)
	var n int64
	if err == nil {
		n, err = io.Copy(f, r)
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("spool body: %w", err)
	}
	return io.NewSectionReader(f, 0, int64(len(head))+n), cleanup, nil
}

// Get implements store.Blob. The reader resumes after a dropped connection.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	obj, err := s.object(key)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	or := &objectReader{s: s, ctx: ctx, obj: obj}
	if err := or.open(); err != nil {
		return nil, fmt.Errorf("get %s: %w", key, s.describe(err))
	}
	return or, nil
}

// objectReader reads one version of an object, reopening it at the current offset (and only if
// its ETag is unchanged) when the connection fails.
type objectReader struct {
	s    *Store
	ctx  context.Context
	obj  string
	etag string
	size int64
	off  int64
	body io.ReadCloser
}

func (o *objectReader) open() error {
	return o.s.retry(o.ctx, o.s.budget, func(int) error {
		var opts minio.GetObjectOptions
		if o.etag != "" {
			if err := opts.SetMatchETag(o.etag); err != nil {
				return err
			}
		}
		if o.off > 0 {
			if err := opts.SetRange(o.off, 0); err != nil {
				return err
			}
		}
		body, info, _, err := o.s.core.GetObject(o.ctx, o.s.loc.Bucket, o.obj, opts)
		if err != nil {
			return err
		}
		if o.etag == "" {
			o.etag, o.size = info.ETag, info.Size
		}
		o.body = body
		return nil
	})
}

// Read implements io.Reader.
func (o *objectReader) Read(p []byte) (int, error) {
	for {
		if o.body == nil {
			if o.off >= o.size {
				return 0, io.EOF
			}
			if err := o.open(); err != nil {
				return 0, fmt.Errorf("read %s: %w", o.obj, o.s.describe(err))
			}
		}
		n, err := o.body.Read(p)
		o.off += int64(n)
		if errors.Is(err, io.EOF) && o.off < o.size {
			err = io.ErrUnexpectedEOF
		}
		if err == nil || errors.Is(err, io.EOF) || !transient(err) || o.ctx.Err() != nil {
			return n, err
		}
		o.body.Close()
		o.body = nil
		if n > 0 {
			return n, nil
		}
	}
}

// Close implements io.Closer.
func (o *objectReader) Close() error {
	if o.body == nil {
		return nil
	}
	err := o.body.Close()
	o.body = nil
	return err
}

// Stat implements store.Blob.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	obj, err := s.object(key)
	if err != nil {
		return store.Info{}, fmt.Errorf("stat: %w", err)
	}
	var info minio.ObjectInfo
	err = s.retry(ctx, s.budget, func(int) error {
		info, err = s.client.StatObject(ctx, s.loc.Bucket, obj, minio.StatObjectOptions{})
		return err
	})
	if err != nil {
		return store.Info{}, fmt.Errorf("stat %s: %w", key, s.describe(err))
	}
	return store.Info{Key: key, Size: info.Size, ModTime: info.LastModified}, nil
}

// fnError carries an error of List's callback through the retry loop untouched.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// List implements store.Blob. S3 lists keys in UTF-8 byte order, which is Go's string order. A
// listing that fails part way resumes after the last key it delivered.
func (s *Store) List(ctx context.Context, prefix string, fn func(store.Info) error) error {
	return s.ListAfter(ctx, prefix, "", fn)
}

// ListAfter implements store.AfterLister with ListObjectsV2's start-after: the keys up to after
// cost no request.
func (s *Store) ListAfter(ctx context.Context, prefix, start string, fn func(store.Info) error) error {
	base := s.base()
	after := ""
	if start != "" {
		after = base + start
	}
	err := s.retry(ctx, s.budget, func(int) error {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		opts := minio.ListObjectsOptions{Prefix: base + prefix, Recursive: true, StartAfter: after}
		for o := range s.client.ListObjects(lctx, s.loc.Bucket, opts) {
			if o.Err != nil {
				return o.Err
			}
			after = o.Key
			key := strings.TrimPrefix(o.Key, base)
			if store.ValidKey(key) != nil {
				continue // a folder marker or a key written by another tool
			}
			if err := fn(store.Info{Key: key, Size: o.Size, ModTime: o.LastModified}); err != nil {
				return fnError{err}
			}
		}
		return ctx.Err()
	})
	return s.listResult(err, "list "+prefix)
}

// listResult is a listing's outcome: the callback's own error as it returned it, else the
// store's error with what was listed.
func (s *Store) listResult(err error, what string) error {
	var fe fnError
	if errors.As(err, &fe) {
		return fe.err
	}
	if err != nil {
		return fmt.Errorf("%s in %s: %w", what, s.url, s.describe(err))
	}
	return nil
}

// ListDirs implements store.DirLister with ListObjectsV2 and delimiter "/": the server rolls all
// keys under a folder into one common prefix, so a page of up to 1,000 folders costs one request
// however many objects they hold. A listing that fails part way resumes after the last folder it
// delivered.
func (s *Store) ListDirs(ctx context.Context, prefix string, fn func(name string) error) error {
	if err := store.ValidDirPrefix(prefix); err != nil {
		return fmt.Errorf("list folders: %w", err)
	}
	full := s.base() + prefix
	last := "" // the common prefix of the last folder delivered
	err := s.retry(ctx, s.budget, func(int) error {
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Recursive: false is delimiter "/"; minio-go yields each common prefix as an ObjectInfo
		// whose Key is the prefix, ending in "/", after the page's plain objects.
		opts := minio.ListObjectsOptions{Prefix: full, Recursive: false, StartAfter: last}
		for o := range s.client.ListObjects(lctx, s.loc.Bucket, opts) {
			if o.Err != nil {
				return o.Err
			}
			// Only common prefixes end in "/" (besides a marker object named full itself); after a
			// resume the server repeats the folder StartAfter points into.
			if !strings.HasSuffix(o.Key, "/") || o.Key <= last {
				continue
			}
			last = o.Key
			name := strings.TrimSuffix(strings.TrimPrefix(o.Key, full), "/")
			if name == "" || strings.Contains(name, "/") || store.ValidKey(prefix+name) != nil {
				continue
			}
			if err := fn(name); err != nil {
				return fnError{err}
			}
		}
		return ctx.Err()
	})
	return s.listResult(err, "list folders "+prefix)
}

// Delete implements store.Blob.
func (s *Store) Delete(ctx context.Context, key string) error {
	obj, err := s.object(key)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	err = s.retry(ctx, s.budget, func(int) error {
		return s.client.RemoveObject(ctx, s.loc.Bucket, obj, minio.RemoveObjectOptions{})
	})
	if err != nil {
		if errors.Is(s.describe(err), store.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("delete %s in %s: %w", key, s.url, s.describe(err))
	}
	return nil
}

package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Opener opens a blob store from a URL of its scheme.
type Opener func(ctx context.Context, url string) (Blob, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// RegisterScheme makes Open handle URLs that start with scheme + "://". Store implementations
// with heavy dependencies (S3) register themselves so that the core does not import them.
func RegisterScheme(scheme string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = o
}

// Open opens the store at url: a registered scheme (s3://bucket/prefix), a file:// URL, or a
// plain folder path.
func Open(ctx context.Context, url string) (Blob, error) {
	if scheme, _, ok := strings.Cut(url, "://"); ok {
		if scheme == "file" {
			return OpenFolder(strings.TrimPrefix(url, "file://"))
		}
		openersMu.Lock()
		o := openers[scheme]
		openersMu.Unlock()
		if o == nil {
			return nil, fmt.Errorf("open store %s: unknown scheme %q; use a folder path or s3://bucket/prefix", url, scheme)
		}
		return o(ctx, url)
	}
	return OpenFolder(url)
}

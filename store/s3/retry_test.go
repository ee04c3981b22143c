package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// faults wraps a server: each rule decides, per request, whether to fail it and how.
type faults struct {
	mu    sync.Mutex
	rules []func(w http.ResponseWriter, r *http.Request, next http.Handler) bool
	seen  []string
}

func (f *faults) add(rule func(w http.ResponseWriter, r *http.Request, next http.Handler) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, rule)
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.Path)
		rules := append([]func(http.ResponseWriter, *http.Request, http.Handler) bool(nil), f.rules...)
		f.mu.Unlock()
		for _, rule := range rules {
			if rule(w, r, next) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// times makes a rule apply to the first n requests it matches.
func times(n int, match func(*http.Request) bool, act func(w http.ResponseWriter, r *http.Request, next http.Handler)) func(http.ResponseWriter, *http.Request, http.Handler) bool {
	var mu sync.Mutex
	return func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		mu.Lock()
		hit := n > 0 && match(r)
		if hit {
			n--
		}
		mu.Unlock()
		if hit {
			act(w, r, next)
		}
		return hit
	}
}

func unavailable(w http.ResponseWriter, r *http.Request, _ http.Handler) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>busy</Message></Error>`)
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter, r *http.Request, _ http.Handler) {
	io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func isObject(method string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == method && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
	}
}

func open(t *testing.T, f *faults) store.Blob {
	t.Helper()
	srv := s3test.FakeWith(t, f.wrap)
	cfg := srv.Config()
	cfg.RetryFor = "20s"
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/p", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRetriesTransientFailures(t *testing.T) {
	f := &faults{}
	b := open(t, f)
	ctx := context.Background()
	f.add(times(2, isObject("PUT"), unavailable))
	f.add(times(1, isObject("PUT"), hangUp))
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, sent again on each attempt
	if err := b.Put(ctx, "k/big", bytes.NewReader(big), int64(len(big))); err != nil {
		t.Fatalf("put through 3 failures: %v", err)
	}
	// A reader that cannot seek is kept so that it too can be sent again.
	f.add(times(1, isObject("PUT"), hangUp))
	if err := b.Put(ctx, "k/stream", io.MultiReader(strings.NewReader("stre"), strings.NewReader("am")), -1); err != nil {
		t.Fatal(err)
	}
	f.add(times(2, isObject("GET"), unavailable))
	f.add(times(1, isObject("HEAD"), hangUp))
	if got, err := store.ReadAll(ctx, b, "k/big"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("get through failures: %d bytes, %v", len(got), err)
	}
	if in, err := b.Stat(ctx, "k/stream"); err != nil || in.Size != 6 {
		t.Fatalf("stat through failure: %+v, %v", in, err)
	}
	f.add(times(2, func(r *http.Request) bool { return r.Method == "GET" && r.URL.Query().Has("list-type") }, unavailable))
	var keys []string
	if err := b.List(ctx, "k/", func(in store.Info) error { keys = append(keys, in.Key); return nil }); err != nil || len(keys) != 2 {
		t.Fatalf("list through failures: %v, %v", keys, err)
	}
}

// TestGetResumesCutBody: a GET whose body stops half way is resumed with a range request.
func TestGetResumesCutBody(t *testing.T) {
	f := &faults{}
	b := open(t, f)
	ctx := context.Background()
	data := bytes.Repeat([]byte("abcdefghij"), 100_000)
	if err := b.Put(ctx, "cut", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	ranges := 0
	f.add(func(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
		if r.Header.Get("Range") != "" {
			ranges++
		}
		return false
	})
	f.add(times(1, isObject("GET"), func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		rec := &cutWriter{ResponseWriter: w, left: 300_000}
		next.ServeHTTP(rec, r)
	}))
	got, err := store.ReadAll(ctx, b, "cut")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d of %d bytes: %v", len(got), len(data), err)
	}
	if ranges != 1 {
		t.Errorf("%d range requests, want 1", ranges)
	}
}

// cutWriter passes on the first left bytes of a body, then drops the connection.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errors.New("cut")
	}
	if len(p) > c.left {
		n, _ := c.ResponseWriter.Write(p[:c.left])
		c.left = 0
		c.ResponseWriter.(http.Flusher).Flush()
		if conn, _, err := c.ResponseWriter.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return n, errors.New("cut")
	}
	n, err := c.ResponseWriter.Write(p)
	c.left -= n
	return n, err
}

// TestCreateLostResponse: the server stores a Create but the answer is lost; the retry meets
// 412, finds its own body, and reports success, while a real loser still gets ErrExists.
func TestCreateLostResponse(t *testing.T) {
	f := &faults{}
	b := open(t, f)
	ctx := context.Background()
	f.add(times(1, isObject("PUT"), func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		next.ServeHTTP(discard{w.Header()}, r)
		hangUp(w, r, next)
	}))
	if err := b.Create(ctx, "lock", strings.NewReader("mine"), 4); err != nil {
		t.Fatalf("create with a lost response: %v", err)
	}
	if err := b.Create(ctx, "lock", strings.NewReader("other"), 5); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
}

// discard is a ResponseWriter that throws the answer away.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

// TestPermanentErrorsAreNotRetried: a refused request comes back at once, saying what to do.
func TestPermanentErrorsAreNotRetried(t *testing.T) {
	f := &faults{}
	b := open(t, f)
	f.add(func(w http.ResponseWriter, r *http.Request, _ http.Handler) bool {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`)
		return true
	})
	f.mu.Lock()
	f.seen = nil
	f.mu.Unlock()
	err := b.Put(context.Background(), "x", strings.NewReader("x"), 1)
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("put: %v", err)
	}
	if len(f.seen) != 1 {
		t.Errorf("%d requests, want 1: %v", len(f.seen), f.seen)
	}
}

// TestListDirsResumes: a folder listing whose second page fails resumes after the last folder
// it delivered, without repeating or losing one.
func TestListDirsResumes(t *testing.T) {
	f := &faults{}
	b := open(t, f)
	ctx := context.Background()
	const n = 1005 // two pages of common prefixes
	for i := range n {
		for _, file := range []string{"a", "b"} {
			if err := b.Put(ctx, fmt.Sprintf("d/%04d/%s", i, file), strings.NewReader("x"), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.add(times(2, func(r *http.Request) bool {
		return r.Method == "GET" && r.URL.Query().Has("continuation-token")
	}, unavailable))
	var got []string
	if err := b.(store.DirLister).ListDirs(ctx, "d/", func(name string) error { got = append(got, name); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("ListDirs through failures: %d folders, want %d", len(got), n)
	}
	for i, name := range got {
		if want := fmt.Sprintf("%04d", i); name != want {
			t.Fatalf("folder %d is %q, want %q", i, name, want)
		}
	}
}

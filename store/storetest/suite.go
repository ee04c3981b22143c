// Package storetest is the conformance suite every store.Blob implementation runs.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// Run checks b against the store.Blob contract. b must be empty.
func Run(t *testing.T, b store.Blob) {
	ctx := context.Background()
	put := func(key, val string) {
		t.Helper()
		if err := b.Put(ctx, key, strings.NewReader(val), int64(len(val))); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	get := func(key string) string {
		t.Helper()
		data, err := store.ReadAll(ctx, b, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		return string(data)
	}

	t.Run("PutGetReplace", func(t *testing.T) {
		put("a/one.json", "first")
		put("a/one.json", "second")
		if got := get("a/one.json"); got != "second" {
			t.Fatalf("get after replace = %q, want %q", got, "second")
		}
		in, err := b.Stat(ctx, "a/one.json")
		if err != nil || in.Size != 6 || in.Key != "a/one.json" {
			t.Fatalf("stat = %+v, %v; want size 6", in, err)
		}
	})
	t.Run("UnknownSize", func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), 3<<20)
		if err := b.Put(ctx, "big/blob", bytes.NewReader(big), -1); err != nil {
			t.Fatal(err)
		}
		if got := get("big/blob"); len(got) != len(big) {
			t.Fatalf("size %d, want %d", len(got), len(big))
		}
	})
	t.Run("Empty", func(t *testing.T) {
		// Empty logs and result files are common; both known and unknown sizes must work.
		for _, size := range []int64{0, -1} {
			if err := b.Put(ctx, "e/empty", strings.NewReader(""), size); err != nil {
				t.Fatalf("put empty (size %d): %v", size, err)
			}
			if got := get("e/empty"); got != "" {
				t.Fatalf("get empty = %q", got)
			}
			if in, err := b.Stat(ctx, "e/empty"); err != nil || in.Size != 0 {
				t.Fatalf("stat empty = %+v, %v", in, err)
			}
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		if _, err := b.Get(ctx, "missing/key"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get missing: %v, want ErrNotFound", err)
		}
		if _, err := b.Stat(ctx, "missing/key"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("stat missing: %v, want ErrNotFound", err)
		}
		if err := b.Delete(ctx, "missing/key"); err != nil {
			t.Fatalf("delete missing: %v, want nil", err)
		}
	})
	t.Run("ListOrderAndPrefix", func(t *testing.T) {
		for _, k := range []string{"l/b", "l/a/x", "l/a-y", "l/c", "m/z", "l/ü nicode"} {
			put(k, k)
		}
		var got []string
		if err := b.List(ctx, "l/", func(in store.Info) error { got = append(got, in.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		want := []string{"l/a-y", "l/a/x", "l/b", "l/c", "l/ü nicode"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("list l/ = %q, want %q", got, want)
		}
		got = nil
		if err := b.List(ctx, "l/a", func(in store.Info) error { got = append(got, in.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint([]string{"l/a-y", "l/a/x"}) {
			t.Fatalf("list l/a = %q", got)
		}
		stop := errors.New("stop")
		n := 0
		err := b.List(ctx, "l/", func(store.Info) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("list with stopping fn: n=%d err=%v", n, err)
		}
	})
	t.Run("ListAfter", func(t *testing.T) {
		for _, k := range []string{"la/000000000002.jsonl", "la/000000000005.jsonl", "la/000000000009.jsonl", "la-x/1", "lb/0"} {
			put(k, k)
		}
		for _, c := range []struct{ after, want string }{
			{"", "[la/000000000002.jsonl la/000000000005.jsonl la/000000000009.jsonl]"},
			{"la/000000000002.jsonl", "[la/000000000005.jsonl la/000000000009.jsonl]"},
			{"la/000000000003.jsonl", "[la/000000000005.jsonl la/000000000009.jsonl]"},
			{"la/000000000009.jsonl", "[]"},
			{"lz", "[]"},
		} {
			got := []string{}
			if err := store.ListAfter(ctx, b, "la/", c.after, func(in store.Info) error { got = append(got, in.Key); return nil }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("ListAfter(la/, %q) = %q, want %s", c.after, got, c.want)
			}
		}
	})
	t.Run("ListDirs", func(t *testing.T) {
		dl, ok := b.(store.DirLister)
		if !ok {
			t.Skipf("%T does not implement store.DirLister", b)
		}
		for _, k := range []string{"ld/b/x", "ld/a/x/y", "ld/a-b/z", "ld/file", "ld/ü nicode/k", "ld/c/d/e", "ld/k=v/trial.json", "ldx/q/r"} {
			put(k, k)
		}
		dirs := func(prefix string) []string {
			t.Helper()
			got := []string{}
			if err := dl.ListDirs(ctx, prefix, func(name string) error { got = append(got, name); return nil }); err != nil {
				t.Fatalf("ListDirs(%q): %v", prefix, err)
			}
			return got
		}
		// The order of the keys below the folders: "a-b/" sorts before "a/".
		cases := map[string][]string{
			"ld/":          {"a-b", "a", "b", "c", "k=v", "ü nicode"},
			"ld/a/":        {"x"},
			"ld/a/x/":      {},
			"ld/c/":        {"d"},
			"ld/file/":     {}, // an object, not a folder
			"missing/":     {},
			"ld/ü nicode/": {},
		}
		for prefix, want := range cases {
			got := dirs(prefix)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ListDirs(%q) = %q, want %q", prefix, got, want)
			}
			// The same folders as derived from a full List.
			var fromList []string
			if err := store.ListDirs(ctx, listOnly{b}, prefix, func(name string) error { fromList = append(fromList, name); return nil }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(fromList) != fmt.Sprint(want) {
				t.Errorf("ListDirs(%q) from List = %q, want %q", prefix, fromList, want)
			}
		}
		top := dirs("")
		if !slices.Contains(top, "ld") || !slices.Contains(top, "ldx") {
			t.Errorf("ListDirs(\"\") = %q; want ld and ldx among them", top)
		}
		for _, n := range top {
			if n == "" || strings.Contains(n, "/") || store.ValidKey(n) != nil {
				t.Errorf("ListDirs(\"\") gave %q", n)
			}
		}
		if !slices.IsSortedFunc(top, func(a, b string) int { return strings.Compare(a+"/", b+"/") }) {
			t.Errorf("ListDirs(\"\") = %q: not in key order", top)
		}
		for _, bad := range []string{"ld", "/ld/", "ld//", "ld/../", "ld/./"} {
			if err := dl.ListDirs(ctx, bad, func(string) error { return nil }); err == nil {
				t.Errorf("ListDirs(%q) succeeded; want an error", bad)
			}
		}
		stop := errors.New("stop")
		n := 0
		if err := dl.ListDirs(ctx, "ld/", func(string) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Fatalf("ListDirs with stopping fn: n=%d err=%v", n, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		put("d/x", "x")
		if err := b.Delete(ctx, "d/x"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Get(ctx, "d/x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get deleted: %v", err)
		}
	})
	t.Run("CreateOnce", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, exists := 0, 0
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := fmt.Sprint(i)
				err := b.Create(ctx, "lock/key", strings.NewReader(v), int64(len(v)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrExists):
					exists++
				default:
					t.Errorf("create: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || exists != n-1 {
			t.Fatalf("concurrent create: %d won, %d saw ErrExists; want 1 and %d", wins, exists, n-1)
		}
	})
	t.Run("OddKeys", func(t *testing.T) {
		// Characters that URLs and S3 signatures treat specially must round-trip unchanged.
		keys := []string{"o/a b", "o/ü nicode/файл", "o/plus+sign", "o/100%25 and %", "o/q?x=1&y=2", "o/hash#frag", "o/semi;colon,comma", "o/tilde~'quote'"}
		for _, k := range keys {
			put(k, "v:"+k)
		}
		for _, k := range keys {
			if got := get(k); got != "v:"+k {
				t.Errorf("get %q = %q", k, got)
			}
		}
		var got []string
		if err := b.List(ctx, "o/", func(in store.Info) error { got = append(got, in.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		want := append([]string(nil), keys...)
		sort.Strings(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("list o/ = %q, want %q", got, want)
		}
	})
	t.Run("BadKeys", func(t *testing.T) {
		for _, k := range []string{"", "/abs", "a/../b", "../x", "a//b", "a/./b", "tab\tkey"} {
			if err := b.Put(ctx, k, strings.NewReader("x"), 1); err == nil {
				t.Errorf("put %q succeeded; want an error", k)
			}
		}
	})
	t.Run("PutFile", func(t *testing.T) {
		dir := t.TempDir()
		p := dir + "/f.txt"
		if err := os.WriteFile(p, []byte("from file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := store.PutFile(ctx, b, "pf/f.txt", p); err != nil {
			t.Fatal(err)
		}
		if got := get("pf/f.txt"); got != "from file" {
			t.Fatalf("got %q", got)
		}
	})
}

// listOnly hides every method of a Blob but the Blob interface's, so store.ListDirs takes its
// List fallback.
type listOnly struct{ store.Blob }

package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/storetest"
)

func TestFolderConformance(t *testing.T) {
	f, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, f)
}

func TestFolderLive(t *testing.T) {
	f, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunLive(t, f)
}

func TestFolderListing(t *testing.T) {
	f, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunListing(t, f)
	storetest.RunSummary(t, f)
}

// TestFolderListDirsHidesOwnEntries: attempts in progress under .work are not objects, so they
// are no folder either; an object beside folders is not one.
func TestFolderListDirsHidesOwnEntries(t *testing.T) {
	ctx := context.Background()
	f, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".work/r1/t1/out", "runs/r1/manifest.json", "top"} {
		full := filepath.Join(f.Root(), filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := f.ListDirs(ctx, "", func(n string) error { got = append(got, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[runs]" {
		t.Fatalf("ListDirs(\"\") = %q, want [runs]", got)
	}
}

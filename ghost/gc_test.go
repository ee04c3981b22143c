package ghost

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestGCUsesMetadataTimeAndKeep(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	defer func() { now = time.Now }()
	ages := []int{90, 45, 40, 1} // days
	var hashes []string
	for i, days := range ages {
		at := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
		now = func() time.Time { return at }
		write(t, w.sender, "a.txt", strings.Repeat("x", i+1)+"\n")
		res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
		must(t, err)
		hashes = append(hashes, res.Diff.Hash)
	}
	now = time.Now

	gs, err := List(ctx, ListOptions{GhostRepo: w.ghostURL, SortByTime: true})
	must(t, err)
	if len(gs) != 4 || gs[0].Hash != hashes[3] || gs[3].Hash != hashes[0] || gs[0].Meta == nil {
		t.Fatalf("list by time = %+v", gs)
	}

	doomed, err := GC(ctx, GCOptions{GhostRepo: w.ghostURL, OlderThan: 30 * 24 * time.Hour, Keep: 2, DryRun: true})
	must(t, err)
	if len(doomed) != 2 || doomed[0].Hash != hashes[1] || doomed[1].Hash != hashes[0] {
		t.Fatalf("dry run would delete %+v, want the 45- and 90-day-old ghosts", doomed)
	}
	if gs, _ := List(ctx, ListOptions{GhostRepo: w.ghostURL}); len(gs) != 4 {
		t.Fatalf("dry run deleted ghosts: %d left", len(gs))
	}
	_, err = GC(ctx, GCOptions{GhostRepo: w.ghostURL, OlderThan: 30 * 24 * time.Hour, Keep: 2})
	must(t, err)
	gs, err = List(ctx, ListOptions{GhostRepo: w.ghostURL})
	must(t, err)
	if len(gs) != 2 {
		t.Fatalf("after gc %d ghosts are left, want 2", len(gs))
	}
	recent, err := List(ctx, ListOptions{GhostRepo: w.ghostURL, Since: time.Now().Add(-7 * 24 * time.Hour)})
	must(t, err)
	if len(recent) != 1 || recent[0].Hash != hashes[3] {
		t.Fatalf("--since 7d = %+v", recent)
	}
}

func TestDelete(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var hashes []string
	for i := 0; i < 3; i++ {
		write(t, w.sender, "a.txt", strings.Repeat("y", i+1)+"\n")
		res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
		must(t, err)
		hashes = append(hashes, res.Diff.Hash)
	}
	list := ListOptions{GhostRepo: w.ghostURL}
	if _, err := Delete(ctx, DeleteOptions{ListOptions: list}); err == nil || !strings.Contains(err.Error(), "--all") {
		t.Fatalf("a bare delete = %v, want a refusal naming --all", err)
	}
	gone, err := Delete(ctx, DeleteOptions{ListOptions: list, Hashes: []string{hashes[0][:9]}, DryRun: true})
	must(t, err)
	if len(gone) != 1 || gone[0].Hash != hashes[0] {
		t.Fatalf("dry run = %+v", gone)
	}
	gone, err = Delete(ctx, DeleteOptions{ListOptions: list, Hashes: []string{hashes[0][:9]}})
	must(t, err)
	left, err := List(ctx, list)
	must(t, err)
	if len(gone) != 1 || len(left) != 2 {
		t.Fatalf("deleted %d, %d left; want 1 and 2", len(gone), len(left))
	}
	gone, err = Delete(ctx, DeleteOptions{ListOptions: list, All: true})
	must(t, err)
	if left, _ := List(ctx, list); len(gone) != 2 || len(left) != 0 {
		t.Fatalf("--all deleted %d, %d left", len(gone), len(left))
	}
}

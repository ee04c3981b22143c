package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// RunLive checks the live-metrics contract of store.Runs on b: chunks appended in order are read
// back after any sequence number without a point lost or repeated, attempts are kept apart, the
// cursor of the last chunk comes back to a writer taking over, and values JSON cannot hold
// survive. b must be empty.
func RunLive(t *testing.T, b store.Blob) {
	ctx := context.Background()
	runs := store.Runs{Blob: b}
	const run, trial = "20261128-120000-live", "lr=0.1"
	point := func(seq int64) store.LivePoint {
		step := seq * 10
		return store.LivePoint{Seq: seq, Metric: track.Metric{Name: "loss", Value: 1 / float64(seq), Step: &step, TS: 1767225600000 + seq}}
	}
	chunk := func(first, last int64) []store.LivePoint {
		var out []store.LivePoint
		for s := first; s <= last; s++ {
			out = append(out, point(s))
		}
		return out
	}
	read := func(attempt int, after int64) []int64 {
		t.Helper()
		var got []int64
		end, err := runs.LiveAfter(ctx, run, trial, attempt, after, func(p store.LivePoint) error {
			if want := point(p.Seq); p.Value != want.Value || *p.Step != *want.Step || p.TS != want.TS || p.Name != "loss" {
				t.Errorf("point %d read back as %+v", p.Seq, p)
			}
			got = append(got, p.Seq)
			return nil
		})
		if err != nil {
			t.Fatalf("LiveAfter(%d): %v", after, err)
		}
		if len(got) > 0 && end != got[len(got)-1] || len(got) == 0 && end != after {
			t.Errorf("LiveAfter(%d) returned %d after giving %v", after, end, got)
		}
		return got
	}
	seqs := func(first, last int64) string {
		var out []int64
		for s := first; s <= last; s++ {
			out = append(out, s)
		}
		return fmt.Sprint(out)
	}

	t.Run("Empty", func(t *testing.T) {
		if got := read(1, 0); len(got) != 0 {
			t.Fatalf("an attempt without chunks gave %v", got)
		}
		if end, cur, err := runs.LiveEnd(ctx, run, trial, 1); err != nil || end != 0 || cur != nil {
			t.Fatalf("LiveEnd of nothing = %d, %s, %v", end, cur, err)
		}
	})
	t.Run("AppendAndReadAfter", func(t *testing.T) {
		// Chunk ends around the 12-digit names' interesting places: 9 -> 10, 99 -> 100.
		bounds := [][2]int64{{1, 1}, {2, 9}, {10, 10}, {11, 99}, {100, 130}}
		for i, bd := range bounds {
			cur := json.RawMessage(fmt.Sprintf(`{"chunk":%d}`, i))
			if err := runs.AppendLive(ctx, run, trial, 1, chunk(bd[0], bd[1]), cur); err != nil {
				t.Fatal(err)
			}
		}
		for _, after := range []int64{0, 1, 5, 9, 10, 11, 98, 99, 100, 129} {
			if got := read(1, after); fmt.Sprint(got) != seqs(after+1, 130) {
				t.Errorf("after %d: got %v", after, got)
			}
		}
		if got := read(1, 130); len(got) != 0 {
			t.Errorf("after the last point: got %v", got)
		}
		end, cur, err := runs.LiveEnd(ctx, run, trial, 1)
		if err != nil || end != 130 || string(cur) != `{"chunk":4}` {
			t.Errorf("LiveEnd = %d, %s, %v; want 130 and the last chunk's cursor", end, cur, err)
		}
	})
	t.Run("Latest", func(t *testing.T) {
		if err := runs.AppendLive(ctx, run, "latest", 1, []store.LivePoint{
			{Seq: 1, Metric: track.Metric{Name: "loss", Value: 3}}, {Seq: 2, Metric: track.Metric{Name: "acc", Value: 0.1}}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := runs.AppendLive(ctx, run, "latest", 1, []store.LivePoint{
			{Seq: 3, Metric: track.Metric{Name: "loss", Value: 2}}, {Seq: 4, Metric: track.Metric{Name: "acc", Value: 0.2}}}, nil); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]float64{"": 2, "loss": 2, "acc": 0.2} {
			p, ok, err := runs.LiveLatest(ctx, run, "latest", 1, name)
			if err != nil || !ok || p.Value != want {
				t.Errorf("LiveLatest(%q) = %+v, %v, %v; want %g", name, p, ok, err, want)
			}
		}
		if _, ok, err := runs.LiveLatest(ctx, run, "latest", 1, "none"); ok || err != nil {
			t.Errorf("LiveLatest of a metric never logged: %v, %v", ok, err)
		}
	})
	t.Run("RetriedAppend", func(t *testing.T) {
		// A writer that did not learn whether its append went through sends it again.
		if err := runs.AppendLive(ctx, run, trial, 1, chunk(131, 140), nil); err != nil {
			t.Fatal(err)
		}
		if err := runs.AppendLive(ctx, run, trial, 1, chunk(131, 140), nil); err != nil {
			t.Fatal(err)
		}
		if got := read(1, 125); fmt.Sprint(got) != seqs(126, 140) {
			t.Errorf("after a repeated append: %v", got)
		}
	})
	t.Run("AttemptsApart", func(t *testing.T) {
		if err := runs.AppendLive(ctx, run, trial, 2, chunk(1, 3), nil); err != nil {
			t.Fatal(err)
		}
		if got := read(2, 0); fmt.Sprint(got) != seqs(1, 3) {
			t.Errorf("attempt 2: %v", got)
		}
		if got := read(1, 138); fmt.Sprint(got) != seqs(139, 140) {
			t.Errorf("attempt 1 after attempt 2 wrote: %v", got)
		}
		atts, err := runs.LiveAttempts(ctx, run, trial)
		if err != nil || fmt.Sprint(atts) != "[1 2]" {
			t.Errorf("LiveAttempts = %v, %v", atts, err)
		}
	})
	t.Run("Gap", func(t *testing.T) {
		// A chunk past a gap is not given: a reader asking again after what it got would skip
		// the missing points for good.
		if err := runs.AppendLive(ctx, run, trial, 2, chunk(6, 7), nil); err != nil {
			t.Fatal(err)
		}
		if got := read(2, 0); fmt.Sprint(got) != seqs(1, 3) {
			t.Errorf("across a gap: %v", got)
		}
		if err := runs.AppendLive(ctx, run, trial, 2, chunk(4, 5), nil); err != nil {
			t.Fatal(err)
		}
		if got := read(2, 3); fmt.Sprint(got) != seqs(4, 7) {
			t.Errorf("once the gap is filled: %v", got)
		}
	})
	t.Run("Clear", func(t *testing.T) {
		if err := runs.ClearLive(ctx, run, trial, 2); err != nil {
			t.Fatal(err)
		}
		if got := read(2, 0); len(got) != 0 {
			t.Errorf("after ClearLive: %v", got)
		}
		if got := read(1, 139); fmt.Sprint(got) != "[140]" {
			t.Errorf("ClearLive of attempt 2 touched attempt 1: %v", got)
		}
	})
	t.Run("OddValues", func(t *testing.T) {
		pts := []store.LivePoint{
			{Seq: 1, Metric: track.Metric{Name: "nan", Value: math.NaN()}},
			{Seq: 2, Metric: track.Metric{Name: "inf", Value: math.Inf(-1)}},
			{Seq: 3, Metric: track.Metric{Name: "ünï code/x", Value: 1e-300}},
		}
		if err := runs.AppendLive(ctx, run, "odd", 1, pts, nil); err != nil {
			t.Fatal(err)
		}
		var got []store.LivePoint
		if _, err := runs.LiveAfter(ctx, run, "odd", 1, 0, func(p store.LivePoint) error { got = append(got, p); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || !math.IsNaN(got[0].Value) || !math.IsInf(got[1].Value, -1) || got[2].Name != "ünï code/x" || got[2].Value != 1e-300 {
			t.Errorf("read back %+v", got)
		}
	})
	t.Run("BadChunks", func(t *testing.T) {
		for _, pts := range [][]store.LivePoint{nil, chunk(0, 2), {point(1), point(3)}} {
			if err := runs.AppendLive(ctx, run, "bad", 1, pts, nil); err == nil {
				t.Errorf("AppendLive of %d points numbered %v succeeded", len(pts), pts)
			}
		}
	})
}

package live_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/live"
	"github.com/jikken-dev/jikken/store"
)

const run, trial = "20261128-170000-live", "t"

func setup(t *testing.T) (store.Runs, string, []live.Source) {
	t.Helper()
	b, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return store.Runs{Blob: b}, dir, []live.Source{
		{Name: "metrics.jsonl", Path: filepath.Join(dir, "metrics.jsonl"), Kind: live.Metrics},
		{Name: "stdout", Path: filepath.Join(dir, "stdout.log"), Kind: live.Stdout},
	}
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, runs store.Runs, attempt int) []store.LivePoint {
	t.Helper()
	var out []store.LivePoint
	if _, err := runs.LiveAfter(context.Background(), run, trial, attempt, 0, func(p store.LivePoint) error {
		out = append(out, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func names(pts []store.LivePoint) string {
	var s []string
	for _, p := range pts {
		s = append(s, fmt.Sprintf("%d:%s=%g", p.Seq, p.Name, p.Value))
	}
	return strings.Join(s, " ")
}

// TestBadLines: a malformed line, a bare NaN (what Python's json.dumps writes), a 1 MB line and a
// non-UTF-8 line are each noted once with their line number; the lines around them are kept.
func TestBadLines(t *testing.T) {
	runs, _, srcs := setup(t)
	var m strings.Builder
	m.WriteString(`{"name":"a","value":1}` + "\n")
	m.WriteString(`{"name":"a","value":` + "\n")
	m.WriteString(`{"name":"a","value":NaN}` + "\n")
	m.WriteString(`{"name":"a","value":"NaN"}` + "\n")
	m.WriteString(`{"name":"a","value":2,"pad":"` + strings.Repeat("x", 1<<20) + `"}` + "\n")
	m.WriteString("{\"name\":\"a\xff\",\"value\":3}\n")
	m.WriteString("\n")
	m.WriteString(`{"name":"a","value":4}` + "\n")
	appendFile(t, srcs[0].Path, m.String())
	appendFile(t, srcs[1].Path, "epoch 1 \xff\n::metric loss=0.5 step=1\n::metric loss=oops\n"+strings.Repeat("y", 2<<20)+"\n::metric loss=0.25")

	f, err := live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs, Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	notes, err := f.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pts := stored(t, runs, 1)
	if got, want := names(pts), "1:a=1 2:a=NaN 3:a=4 4:loss=0.5 5:loss=0.25"; got != want {
		t.Errorf("points %s, want %s", got, want)
	}
	if !math.IsNaN(pts[1].Value) {
		t.Errorf("the string \"NaN\" is a NaN: %v", pts[1].Value)
	}
	wantNotes := []string{"metrics.jsonl line 2:", "metrics.jsonl line 3:", "metrics.jsonl line 5: longer than 64 KiB", "metrics.jsonl line 6: not valid UTF-8", "stdout line 3:", "stdout line 4: longer than 64 KiB"}
	if len(notes) != len(wantNotes) {
		t.Fatalf("notes %q, want one for each of %q", notes, wantNotes)
	}
	for i, w := range wantNotes {
		if !strings.HasPrefix(notes[i], w) {
			t.Errorf("note %d = %q, want %q...", i, notes[i], w)
		}
	}
}

// TestGrowingFile: points are appended while the file grows; a line without its newline yet is
// read once it is complete, never as two halves.
func TestGrowingFile(t *testing.T) {
	runs, _, srcs := setup(t)
	reported := make(chan int64, 100)
	f, err := live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 2, Sources: srcs,
		Every: 5 * time.Millisecond, Reported: func(up int64) { reported <- up }})
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, srcs[0].Path, `{"name":"a","value":1}`+"\n"+`{"name":"a",`)
	if up := <-reported; up != 1 {
		t.Fatalf("first report up to %d, want 1", up)
	}
	appendFile(t, srcs[0].Path, `"value":2}`+"\n")
	if up := <-reported; up != 2 {
		t.Fatalf("second report up to %d, want 2", up)
	}
	appendFile(t, srcs[0].Path, `{"name":"a","value":3}`+"\n"+`{"name":"torn"`)
	if _, err := f.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := names(stored(t, runs, 2)), "1:a=1 2:a=2 3:a=3"; got != want {
		t.Errorf("points %s, want %s (a torn last line left out, as ReadMetrics does)", got, want)
	}
}

// TestResume: a feeder that stops without its final read (its runner was killed) and one that
// takes over the attempt store every point once, in order; a feeder starting the attempt afresh
// clears what was there.
func TestResume(t *testing.T) {
	runs, _, srcs := setup(t)
	ctx, kill := context.WithCancel(context.Background())
	reported := make(chan int64, 100)
	f, err := live.Start(ctx, live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs,
		Every: 5 * time.Millisecond, Reported: func(up int64) { reported <- up }})
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, srcs[0].Path, `{"name":"a","value":1}`+"\n"+`{"name":"a","value":2}`+"\n")
	appendFile(t, srcs[1].Path, "::metric b=1\n")
	for up := int64(0); up < 3; up = <-reported {
	}
	kill()
	_, _ = f.Stop(ctx)
	appendFile(t, srcs[0].Path, `{"name":"a","value":3}`+"\n")
	appendFile(t, srcs[1].Path, "::metric b=2\n")
	f, err = live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs, Every: time.Hour, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := names(stored(t, runs, 1)), "1:a=1 2:a=2 3:b=1 4:a=3 5:b=2"; got != want {
		t.Errorf("points %s, want %s", got, want)
	}
	f, err = live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs[:1], Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := names(stored(t, runs, 1)), "1:a=1 2:a=2 3:a=3"; got != want {
		t.Errorf("after a fresh start: %s, want %s", got, want)
	}
}

// TestBatches: 100,000 points written at once take one append per ChunkBytes of lines, not one
// a point, and all arrive in order.
func TestBatches(t *testing.T) {
	runs, _, srcs := setup(t)
	var buf bytes.Buffer
	const n = 100_000
	for i := range n {
		fmt.Fprintf(&buf, `{"name":"loss","value":%d,"step":%d,"ts":1767225600123}`+"\n", i, i)
	}
	appendFile(t, srcs[0].Path, buf.String())
	appends := 0
	f, err := live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs,
		Every: time.Hour, Reported: func(int64) { appends++ }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := buf.Len()/live.ChunkBytes + 1; appends != want {
		t.Errorf("%d appends for %d bytes of lines, want %d", appends, buf.Len(), want)
	}
	pts := stored(t, runs, 1)
	if len(pts) != n {
		t.Fatalf("%d points stored, want %d", len(pts), n)
	}
	for i, p := range pts {
		if p.Seq != int64(i+1) || p.Value != float64(i) || *p.Step != int64(i) {
			t.Fatalf("point %d = %+v", i, p)
		}
	}
}

// TestSmallLogSmallBuffer: a trial that prints a few lines costs its feeder a few KiB, not a
// chunk's budget (a run of 2,000 short trials allocated 2 GB that way); a metric line longer
// than the first buffer, appended later, is still read whole.
func TestSmallLogSmallBuffer(t *testing.T) {
	runs, _, srcs := setup(t)
	appendFile(t, srcs[1].Path, "starting\n::metric loss=0.5\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 1, Sources: srcs, Every: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<10 {
		t.Errorf("a feeder of a 2-line log allocated %d KiB, want under 256", got>>10)
	}

	reported := make(chan int64, 100)
	f, err = live.Start(context.Background(), live.Options{Runs: runs, Run: run, Trial: trial, Attempt: 2, Sources: srcs,
		Every: 5 * time.Millisecond, Reported: func(up int64) { reported <- up }})
	if err != nil {
		t.Fatal(err)
	}
	if up := <-reported; up != 1 {
		t.Fatalf("first report up to %d, want 1", up)
	}
	long := `{"name":"b","value":7,"pad":"` + strings.Repeat("x", 40<<10) + `"}` + "\n"
	appendFile(t, srcs[0].Path, long+`{"name":"b","value":8}`+"\n")
	notes, err := f.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(stored(t, runs, 2)), "1:loss=0.5 2:b=7 3:b=8"; got != want {
		t.Errorf("points %s, want %s (notes %q)", got, want, notes)
	}
}

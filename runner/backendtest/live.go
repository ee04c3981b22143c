package backendtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/live"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// liveMetrics: what a running trial logs, in metrics.jsonl and as ::metric lines of stdout,
// reaches the store's live points while it still runs, fed as the runner feeds it
// (runner.FeedLive); once it has ended every line is there once, in the order of each source.
// A process whose executor stores its outputs feeds the points itself (the executor's tests).
func (s *suite) liveMetrics(t *testing.T) {
	s.need(t, Processes)
	b := s.h.New(t)
	a, p := s.start(t, b, s.h.Trial("live", `for i in 1 2 3; do
  echo "{\"name\":\"loss\",\"value\":$i,\"step\":$i}" >> "$JIKKEN_OUTPUT_DIR/metrics.jsonl"
  echo "::metric acc=0.$i step=$i"
done
sleep 300`))
	if st, ok := p.(*once).Process.(runner.OutputStorer); ok && st.OutputsStored() {
		t.Skip("the executor next to the trial feeds its live metrics")
	}
	folder, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: folder}
	ctx := context.Background()
	f, err := runner.FeedLive(ctx, runs, a, live.Options{Every: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	points := func() []string {
		var got []string
		if _, err := runs.LiveAfter(ctx, a.RunID, a.Trial.Name, 1, 0, func(pt store.LivePoint) error {
			got = append(got, fmt.Sprintf("%s=%g@%d", pt.Name, pt.Value, *pt.Step))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Three points while it runs: the stdout lines at least (an engine without a shared
	// folder gives the output folder back only at the end).
	waitFor(t, func() bool { return len(points()) >= 3 }, "three live points while the trial runs")
	if !alive(t, b, a.RunID) {
		t.Fatal("the trial ended before its points were seen: its sleep is cut short")
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	wait(t, p, 2*time.Minute)
	notes, err := f.Stop(ctx)
	if err != nil || len(notes) > 0 {
		t.Fatalf("stop feeding: %v (notes %q)", err, notes)
	}
	got := points()
	var loss, acc []string
	for _, g := range got {
		if g[0] == 'l' {
			loss = append(loss, g)
		} else {
			acc = append(acc, g)
		}
	}
	if fmt.Sprint(loss) != "[loss=1@1 loss=2@2 loss=3@3]" || fmt.Sprint(acc) != "[acc=0.1@1 acc=0.2@2 acc=0.3@3]" || len(got) != 6 {
		t.Errorf("live points %q: want each line of each source once, in order", got)
	}
}

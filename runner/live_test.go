//go:build unix

package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// TestLiveMetricsPerAttempt: each attempt's points are kept under its number, the last one's
// equal the final metrics.jsonl (stdout's ::metric lines included), and a bad line is noted in
// its attempt's notes, once, with its line number.
func TestLiveMetricsPerAttempt(t *testing.T) {
	script := `m=$JIKKEN_OUTPUT_DIR/metrics.jsonl
for i in 1 2 3; do echo "{\"name\":\"loss\",\"value\":$JIKKEN_ATTEMPT.$i,\"step\":$i}" >> $m; done
echo 'not json' >> $m
echo "::metric acc=$JIKKEN_ATTEMPT step=9"
test $JIKKEN_ATTEMPT = 2`
	spec := fmt.Sprintf(`[{"name":"r","cmd":%q,"retries":1,"backoff":0.01}]`, script)
	sum, runs, _ := run(t, spec, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 2 {
		t.Fatalf("record = %+v", rec)
	}
	ctx := context.Background()
	atts, err := runs.LiveAttempts(ctx, sum.RunID, "r")
	if err != nil || fmt.Sprint(atts) != "[1 2]" {
		t.Fatalf("attempts with live points = %v, %v", atts, err)
	}
	livePoints := func(n int) string {
		var s []string
		if _, err := runs.LiveAfter(ctx, sum.RunID, "r", n, 0, func(p store.LivePoint) error {
			s = append(s, fmt.Sprintf("%s=%g@%d", p.Name, p.Value, *p.Step))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(s, " ")
	}
	if got, want := livePoints(1), "loss=1.1@1 loss=1.2@2 loss=1.3@3 acc=1@9"; got != want {
		t.Errorf("attempt 1's live points %s, want %s", got, want)
	}
	data, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "r", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// The final file holds the bad line as the trial wrote it; its reader stops there, so
	// compare with the good lines.
	var final []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if m, err := track.ParseMetricLine(line); err == nil {
			final = append(final, fmt.Sprintf("%s=%g@%d", m.Name, m.Value, *m.Step))
		}
	}
	if got := livePoints(2); got != strings.Join(final, " ") || !strings.Contains(got, "acc=2@9") {
		t.Errorf("attempt 2's live points %s, final metrics.jsonl %s", got, final)
	}
	for i, a := range rec.Attempts {
		if len(a.Notes) != 1 || !strings.HasPrefix(a.Notes[0], "metrics.jsonl line 4: ") {
			t.Errorf("attempt %d's notes %q, want the bad line 4 once", i+1, a.Notes)
		}
	}
}

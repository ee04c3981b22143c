package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// A search's pruned trials are counted in the summary line on their own, and not listed with
// the trials that went wrong: they ended as their search meant them to.
func TestSummaryCountsPrunedTrials(t *testing.T) {
	sum := &runner.Summary{RunID: "r1", Status: store.Succeeded,
		Counts: runner.Counts{Total: 60, Succeeded: 41, Pruned: 19},
		Trials: []*store.TrialRecord{{Name: "s-0", Status: store.Succeeded}, {Name: "s-1", Status: store.Pruned, Reason: "pruned at step 9: 0.8 ranks 3 of 3 trials at rung 9, outside the top 1"}}}
	var b bytes.Buffer
	printSummary(&b, sum, time.Second)
	want := "run r1 succeeded in 1s: 60 trials, 41 succeeded, 19 pruned\nresults: jikken results r1\n"
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
	p := newProgress(&b, false, false, 80)
	p.last = runner.Counts{Total: 60, Succeeded: 30, Pruned: 10, Running: 4}
	if s := p.status(); !strings.Contains(s, " 40/60  ok 30  pruned 10  failed 0  running 4 ") {
		t.Errorf("status line %q", s)
	}
}

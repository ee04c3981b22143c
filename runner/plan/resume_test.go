package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/store"
)

// The search is eager: when s-0 ends, its final record and the pending record of s-2 (window 2:
// -j 2 and nothing suggested ahead) go to the store together. A runner killed between the two
// writes leaves one of them. With s-2's alone, s-2 was suggested from a value the store lost:
// the resume suggests it again once s-0 has run again. With s-0's alone, or both, nothing was
// lost.
func TestResumeAfterAKillBetweenTheWrites(t *testing.T) {
	s := testSearch(t)
	params := map[string]any{"x": 0.5, "n": 3.0, "c": 2.0}
	started := []store.Attempt{{N: 1, Started: time.Unix(1, 0)}}
	running := func(name string) *store.TrialRecord {
		return &store.TrialRecord{Name: name, Group: "s", Status: store.Running, Params: params, Attempts: started}
	}
	ended := func(name string, st store.Status) *store.TrialRecord {
		return &store.TrialRecord{Name: name, Group: "s", Status: st, Params: params, Attempts: started, Values: map[string]float64{"loss": 1, "acc": 1}}
	}
	pending := &store.TrialRecord{Name: "s-2", Group: "s", Status: store.Pending, Params: params}
	for _, c := range []struct {
		what    string
		journal map[string]*store.TrialRecord
		want    []string
	}{
		{"s-2's pending record alone", map[string]*store.TrialRecord{"s-0": running("s-0"), "s-1": running("s-1"), "s-2": pending}, []string{"s-0", "s-1"}},
		{"s-0's final record alone", map[string]*store.TrialRecord{"s-0": ended("s-0", store.Succeeded), "s-1": running("s-1")}, []string{"s-0", "s-1"}},
		{"both", map[string]*store.TrialRecord{"s-0": ended("s-0", store.Succeeded), "s-1": running("s-1"), "s-2": pending}, []string{"s-0", "s-1", "s-2"}},
		{"both, s-0 failed", map[string]*store.TrialRecord{"s-0": ended("s-0", store.Failed), "s-1": running("s-1"), "s-2": pending}, []string{"s-0", "s-1", "s-2"}},
		// A killed trial runs again: what was suggested from it is suggested again.
		{"both, s-0 killed", map[string]*store.TrialRecord{"s-0": ended("s-0", store.Killed), "s-1": running("s-1"), "s-2": pending}, []string{"s-0", "s-1"}},
		// A trial that started is kept whatever the others say: it started once its history was stored.
		{"s-2 started", map[string]*store.TrialRecord{"s-0": running("s-0"), "s-1": running("s-1"), "s-2": running("s-2")}, []string{"s-0", "s-1", "s-2"}},
	} {
		_, trials, err := Resume(s, Settings{Jobs: 2}, c.journal)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range trials {
			got = append(got, tr.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s stored: the resume keeps %v, want %v", c.what, got, c.want)
		}
	}
}

package experiment

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func plan(t *testing.T, src string) []Trial {
	t.Helper()
	exp, err := Parse("x.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return exp.Trials
}

const base = `{"trials": [{"name": "cmp", "cmd": "c", "after": ["t"]}, {"name": "tail", "cmd": "d", "after": ["cmp"]}, {"name": "solo", "cmd": "s"}],
 "matrix": {"name": "t", "params": {"x": [1, 2]}, "seeds": %s, "cmd": "run {{x}} {{seed}}"}}`

func TestExtendAddsSeedsAndRerunsWaiters(t *testing.T) {
	old := plan(t, strings.Replace(base, "%s", "2", 1))
	next := plan(t, strings.Replace(base, "%s", "3", 1))
	g, err := Extend(old, next)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"t-1-s2", "t-2-s2"}; !slices.Equal(g.Added, want) {
		t.Errorf("added %v, want %v", g.Added, want)
	}
	if want := []string{"cmp", "tail"}; !slices.Equal(g.Rerun, want) {
		t.Errorf("rerun %v, want %v", g.Rerun, want)
	}
	for i, tr := range g.Trials {
		if tr.Index != i {
			t.Errorf("trial %s has index %d at %d", tr.Name, tr.Index, i)
		}
		if i < len(old) && tr.Name != old[i].Name {
			t.Errorf("old trial %d is %s, was %s", i, tr.Name, old[i].Name)
		}
	}
	if got := g.Trials[0].After; len(got) != 6 {
		t.Errorf("cmp waits for %v, want the 6 trials of t", got)
	}
}

func TestExtendRefusesChanges(t *testing.T) {
	old := plan(t, strings.Replace(base, "%s", "2", 1))
	for _, c := range []struct{ name, next, trial, field string }{
		{"cmd", strings.Replace(strings.Replace(base, "%s", "3", 1), "run {{x}}", "go {{x}}", 1), "t-1-s0", "cmd"},
		{"dropped", strings.Replace(strings.Replace(base, "%s", "3", 1), `[1, 2]`, `[1]`, 1), "t-2-s0", ""},
		{"after", strings.Replace(strings.Replace(base, "%s", "2", 1), `"after": ["cmp"]`, `"after": ["solo"]`, 1), "tail", "after"},
		{"retries", strings.Replace(strings.Replace(base, "%s", "2", 1), `"cmd": "s"`, `"cmd": "s", "retries": 2`, 1), "solo", "retries"},
	} {
		_, err := Extend(old, plan(t, c.next))
		var ce *ChangeError
		if !errors.As(err, &ce) || ce.Trial != c.trial || ce.Field != c.field {
			t.Errorf("%s: got %v, want a change of %s field %q", c.name, err, c.trial, c.field)
		}
	}
}

func TestParseSeeds(t *testing.T) {
	got, err := ParseSeeds("5, 7,10..12")
	if want := []int64{5, 7, 10, 11, 12}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	for _, bad := range []string{"", "3..1", "a", "1,1", "1..3,2", "0..2000000"} {
		if _, err := ParseSeeds(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWithSeeds(t *testing.T) {
	ev, err := WithSeeds([]byte(strings.Replace(base, "%s", "[4, 5]", 1)), []int64{0, 9})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Parse("x.json", ev)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []int64
	for _, tr := range exp.Trials {
		if tr.Seed != nil && tr.Params["x"] == int64(1) {
			seeds = append(seeds, *tr.Seed)
		}
	}
	if want := []int64{4, 5, 0, 9}; !slices.Equal(seeds, want) {
		t.Errorf("seeds %v, want %v", seeds, want)
	}
	if _, err := WithSeeds(ev, []int64{9}); err == nil || !strings.Contains(err.Error(), "seed 9 is already a seed of matrix t") {
		t.Errorf("overlap: %v", err)
	}
	if _, err := WithSeeds([]byte(`{"trials": [{"name": "a", "cmd": "x"}]}`), []int64{1}); err == nil {
		t.Error("no matrix with seeds: no error")
	}
	seq := `{"matrix": {"name": "m", "params": {"a": [1, 2]}, "seeds": {"until": {"metric": "x", "direction": "min", "by": "a"}}, "cmd": "x"}}`
	if _, err := WithSeeds([]byte(seq), []int64{200}); err == nil || !strings.Contains(err.Error(), "matrix m has sequential seeds") {
		t.Errorf("sequential seeds: %v", err)
	}
}

package plan

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/store"
)

func testSearch(t *testing.T) *experiment.Search {
	t.Helper()
	src, _ := json.Marshal(map[string]any{"search": map[string]any{"name": "s", "cmd": "f {{x}} {{n}} {{c}}", "trials": 5,
		"objectives":  []any{"loss", map[string]any{"metric": "acc", "direction": "max"}},
		"constraints": []any{"mem"},
		"space": map[string]any{"x": map[string]any{"low": 0, "high": 1}, "n": map[string]any{"type": "int", "low": 1, "high": 9},
			"c": []any{"a", int64(2), true}}}})
	exp, err := experiment.Parse("t.jsonnet", src)
	if err != nil {
		t.Fatal(err)
	}
	return exp.Search
}

// A trial's record becomes the sampler's observation: complete only when it succeeded with
// every objective; a constraint it never logged is not met.
func TestObserve(t *testing.T) {
	p := &Search{spec: testSearch(t)}
	params := map[string]any{"x": 0.5, "n": 3.0, "c": 2.0, "other": "kept out"}
	for _, c := range []struct {
		status store.Status
		values map[string]float64
		state  search.State
		want   []float64
		cons   []float64
	}{
		{store.Succeeded, map[string]float64{"loss": 1, "acc": 0.5, "mem": -1}, search.Complete, []float64{1, 0.5}, []float64{-1}},
		{store.Succeeded, map[string]float64{"loss": 1}, search.Failed, nil, []float64{math.Inf(1)}},
		{store.Succeeded, map[string]float64{"loss": math.NaN(), "acc": 1}, search.Failed, nil, []float64{math.Inf(1)}},
		{store.Pruned, map[string]float64{"loss": 3, "acc": 0.1}, search.Pruned, []float64{3, 0.1}, []float64{math.Inf(1)}},
		{store.Pruned, nil, search.Pruned, nil, []float64{math.Inf(1)}},
		{store.Failed, map[string]float64{"loss": 1, "acc": 1, "mem": 0}, search.Failed, nil, []float64{0}},
	} {
		o := p.observe(4, &core.TrialView{Status: c.status, Values: c.values, Params: params})
		wantParams := search.Params{"x": 0.5, "n": int64(3), "c": int64(2)}
		if o.Number != 4 || o.State != c.state || !reflect.DeepEqual(o.Values, c.want) || !reflect.DeepEqual(o.Constraints, c.cons) || !reflect.DeepEqual(o.Params, wantParams) {
			t.Errorf("%s %v: got %+v", c.status, c.values, o)
		}
	}
}

// Params read back from JSON (every number a float64) are typed again as the space says.
func TestCoerce(t *testing.T) {
	sp := testSearch(t).Space
	got := Coerce(sp, map[string]any{"x": int64(1), "n": 4.0, "c": true, "gone": 1.0})
	want := search.Params{"x": 1.0, "n": int64(4), "c": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// The wall budget starts when the run was created, or when it was last extended.
func TestBegan(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := &store.Manifest{Created: created}
	if got := Began(m); !got.Equal(created) {
		t.Fatalf("no extension: %v, want %v", got, created)
	}
	later := created.Add(3 * time.Hour)
	m.Extensions = []store.Extension{{At: later}, {At: created.Add(time.Hour)}}
	if got := Began(m); !got.Equal(later) {
		t.Fatalf("extended: %v, want %v", got, later)
	}
}

// A run keeps the rule it was created with: a manifest written before trials were suggested
// ahead has no search_ahead, and its resume suggests with the window it started with.
func TestSettingsOfOldAndNewRuns(t *testing.T) {
	var old, m store.Manifest
	if err := json.Unmarshal([]byte(`{"options": {"jobs": 3}}`), &old); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"options": {"jobs": 3, "search_ahead": 1}}`), &m); err != nil {
		t.Fatal(err)
	}
	s := testSearch(t)
	for _, c := range []struct {
		m           *store.Manifest
		window, cap int
	}{{&old, 3, 3}, {&m, 4, 3}} {
		p, err := New(s, SettingsOf(c.m))
		if err != nil {
			t.Fatal(err)
		}
		_, n := p.(core.Capped).Cap()
		if w := p.(interface{ Window() int }).Window(); w != c.window || n != c.cap {
			t.Errorf("options %+v: window %d, cap %d; want %d and %d", c.m.Options, w, n, c.window, c.cap)
		}
	}
}

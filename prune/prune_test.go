package prune

import (
	"math"
	"strings"
	"testing"
)

// line is a curve with one point per step 1..len(values).
func line(number int, done bool, values ...float64) Curve {
	c := Curve{Number: number, Done: done}
	for i, v := range values {
		c.Points = append(c.Points, Point{Step: int64(i + 1), Value: v})
	}
	return c
}

func mustNew(t *testing.T, name string, o map[string]any) Pruner {
	t.Helper()
	p, err := New(name, o)
	if err != nil {
		t.Fatalf("New(%q, %v): %v", name, o, err)
	}
	return p
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    map[string]any
		want string
	}{
		{"bogus", nil, `unknown pruner "bogus"; use one of none, median, percentile, asha, hyperband`},
		{"median", map[string]any{"warmup": 3}, "pruner median: option warmup: unknown; pruner median takes min_trials, startup_trials, warmup_steps"},
		{"none", map[string]any{"x": 1}, "option x: unknown; pruner none takes no options"},
		{"percentile", nil, "option percentile: required"},
		{"percentile", map[string]any{"percentile": 120.0}, "option percentile: must be within 0-100, got 120"},
		{"median", map[string]any{"warmup_steps": 2.5}, "option warmup_steps: must be a whole number >= 0, got 2.5"},
		{"median", map[string]any{"min_trials": 0}, "option min_trials: must be a whole number >= 1, got 0"},
		{"asha", map[string]any{"reduction_factor": 1}, "option reduction_factor: must be a whole number >= 2, got 1"},
		{"asha", map[string]any{"eta": 3, "reduction_factor": 3}, "option eta: give reduction_factor or eta, not both"},
		{"asha", map[string]any{"min_resource": "big"}, "option min_resource: must be a number, got big"},
		{"hyperband", nil, "option max_resource: required"},
		{"hyperband", map[string]any{"max_resource": 1}, "option max_resource: must be above min_resource 1, got 1"},
		{"hyperband", map[string]any{"max_resource": 100, "brackets": 6}, "option brackets: at most 5 with min_resource 1, max_resource 100 and reduction_factor 3"},
	} {
		_, err := New(tc.name, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q, %v) = %v, want an error containing %q", tc.name, tc.o, err, tc.want)
		}
	}
	for _, name := range []string{"none", "median", "asha", "sha", "successive_halving", "ASHA"} {
		mustNew(t, name, nil)
	}
	mustNew(t, "hyperband", map[string]any{"max_resource": int64(81), "brackets": 5.0})
}

func TestMedian(t *testing.T) {
	p := mustNew(t, "median", map[string]any{"startup_trials": 3})
	done := []Curve{
		line(0, true, 5, 4, 3, 2),
		line(1, true, 6, 5, 4, 3),
		line(2, true, 7, 6, 5, 4),
	}
	// At step 2 the complete trials have 4, 5, 6: the median is 5.
	for _, tc := range []struct {
		cur       Curve
		stop      bool
		why       string
		maximised bool
	}{
		{line(9, false, 9, 5.5), true, "pruned at step 2: its best value 5.5 is worse than the median 5 of 3 complete trials", false},
		{line(9, false, 9, 5), false, "kept at step 2: its best value 5 is not worse than the median 5 of 3 complete trials", false},
		// The best value so far counts, not the latest.
		{line(9, false, 4.5, 9), false, "kept at step 2: its best value 4.5 is not worse", false},
		{line(9, false, 4.5, 4.9), true, "pruned at step 2: its best value 4.9 is worse than the median 5", true},
		{line(9, false, math.NaN(), math.NaN()), true, "pruned at step 2: every value reported is NaN", false},
		// No complete trial reached step 5.
		{line(9, false, 9, 9, 9, 9, 9), false, "kept at step 5: 0 complete trials reached this step, 1 needed", false},
	} {
		stop, why := p.Prune(9, append(done[:3:3], tc.cur), !tc.maximised)
		if stop != tc.stop || !strings.HasPrefix(why, tc.why) {
			t.Errorf("%v: got %v %q, want %v %q", tc.cur.Points, stop, why, tc.stop, tc.why)
		}
	}
	stop, why := p.Prune(9, []Curve{done[0], done[1], line(9, false, 100, 100)}, true)
	if stop || why != "kept at step 2: 2 of the 3 startup trials are complete" {
		t.Errorf("startup: got %v %q", stop, why)
	}
}

func TestPercentile(t *testing.T) {
	var cs []Curve
	for i := range 5 {
		cs = append(cs, line(i, true, float64(i))) // 0..4 at step 1
	}
	// The 25th percentile of 0..4 is 1; maximising, the 75th is 3.
	p := mustNew(t, "percentile", map[string]any{"percentile": 25, "warmup_steps": 1})
	for _, tc := range []struct {
		v        float64
		minimize bool
		stop     bool
		why      string
	}{
		{1.5, true, true, "pruned at step 1: its best value 1.5 is worse than the 25th percentile 1 of 5 complete trials"},
		{1, true, false, "kept at step 1"},
		{2.5, false, true, "pruned at step 1: its best value 2.5 is worse than the 25th percentile from the top 3 of 5 complete trials"},
		{3, false, false, "kept at step 1"},
	} {
		stop, why := p.Prune(7, append(cs[:5:5], line(7, false, tc.v)), tc.minimize)
		if stop != tc.stop || !strings.HasPrefix(why, tc.why) {
			t.Errorf("%v minimize=%v: got %v %q, want %v %q", tc.v, tc.minimize, stop, why, tc.stop, tc.why)
		}
	}
	p = mustNew(t, "percentile", map[string]any{"percentile": 25, "warmup_steps": 2})
	if stop, why := p.Prune(7, append(cs[:5:5], line(7, false, 100)), true); stop || why != "kept at step 1: warming up until step 2" {
		t.Errorf("warm-up: got %v %q", stop, why)
	}
}

func TestPercentileOf(t *testing.T) {
	// numpy.percentile([3, 1, 4, 1, 5], q) for q = 0, 10, 50, 90, 100.
	vals := []float64{3, 1, 4, 1, 5}
	for q, want := range map[float64]float64{0: 1, 10: 1, 50: 3, 90: 4.6, 100: 5, 62.5: 3.5} {
		if got := percentileOf(vals, q); math.Abs(got-want) > 1e-12 {
			t.Errorf("percentile %v = %v, want %v", q, got, want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for p, want := range map[float64]string{1: "1st", 2: "2nd", 3: "3rd", 11: "11th", 12: "12th", 21: "21st", 25: "25th", 33.3: "33.3th"} {
		if got := ordinal(p); got != want+" percentile" {
			t.Errorf("ordinal(%v) = %q", p, got)
		}
	}
}

func TestFinalCurvesAreKept(t *testing.T) {
	cs := []Curve{line(0, true, 1), line(1, false, 0), line(2, false, 9)}
	cs[2].Pruned = true
	p := mustNew(t, "asha", map[string]any{"reduction_factor": 2})
	for n, want := range map[int]string{0: "kept: trial 0 is complete", 2: "kept: trial 2 is already pruned", 5: "kept: no curve for trial 5"} {
		if stop, why := p.Prune(n, cs, true); stop || why != want {
			t.Errorf("trial %d: got %v %q, want %q", n, stop, why, want)
		}
	}
	if stop, why := p.Prune(3, []Curve{{Number: 3}}, true); stop || why != "kept: trial 3 has reported no value yet" {
		t.Errorf("empty: got %v %q", stop, why)
	}
	if stop, why := mustNew(t, "none", nil).Prune(2, cs, true); stop || why != "kept: no pruner" {
		t.Errorf("none: got %v %q", stop, why)
	}
}

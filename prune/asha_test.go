package prune

import (
	"fmt"
	"strings"
	"testing"
)

func TestASHA(t *testing.T) {
	p := mustNew(t, "asha", map[string]any{"min_resource": 2, "reduction_factor": 2})
	// Rungs at steps 2, 4, 8. Trials 0..3 reached step 2 with 4, 3, 2, 1.
	base := []Curve{line(0, false, 9, 4), line(1, false, 9, 3), line(2, false, 9, 2, 2, 2)}
	for _, tc := range []struct {
		name string
		cur  Curve
		stop bool
		why  string
	}{
		// Four at rung 2 (0, 1, 2 and this one): the top 2 go on.
		{"best", line(3, false, 9, 1), false, "kept at step 2: 1 ranks 1 of 4 trials at rung 2, within the top 2"},
		{"second", line(3, false, 9, 2.5), false, "kept at step 2: 2.5 ranks 2 of 4 trials at rung 2, within the top 2"},
		{"third", line(3, false, 9, 3.5), true, "pruned at step 2: 3.5 ranks 3 of 4 trials at rung 2, outside the top 2"},
		// A tie with trial 2 ranks after it: 2 has the lower Number.
		{"tie", line(3, false, 9, 2), false, "kept at step 2: 2 ranks 2 of 4"},
		{"between rungs", line(3, false, 9, 9, 9), false, "kept at step 3: no rung reached at this step"},
		// Rung 4: trial 2 (value 2) and this one; fewer than eta*1... max(1, 2/2) = 1 goes on.
		{"rung 4 worse", line(3, false, 9, 1, 1, 3), true, "pruned at step 4: 3 ranks 2 of 2 trials at rung 4, outside the top 1"},
		{"rung 4 better", line(3, false, 9, 1, 1, 1), false, "kept at step 4: 1 ranks 1 of 2 trials at rung 4, within the top 1"},
	} {
		stop, why := p.Prune(3, append(base[:3:3], tc.cur), true)
		if stop != tc.stop || !strings.HasPrefix(why, tc.why) {
			t.Errorf("%s: got %v %q, want %v %q", tc.name, stop, why, tc.stop, tc.why)
		}
	}
	// Trial 2 is kept, though it would no longer rank in the top 2 of rung 2: it is judged at a
	// rung once, when it reaches it.
	if stop, _ := p.Prune(2, append(base[:2:2], line(2, false, 9, 5, 5), line(3, false, 9, 1), line(4, false, 9, 1)), true); stop {
		t.Error("a trial was judged again at a rung it had passed")
	}
	// Points that jump past several rungs are judged at each; the first to reach a rung goes on.
	jump := Curve{Number: 5, Points: []Point{{1, 9}, {9, 9}}}
	if stop, why := p.Prune(5, append(base[:3:3], jump), true); !stop || why != "pruned at step 9: 9 ranks 4 of 4 trials at rung 2, outside the top 2" {
		t.Errorf("jump: got %v %q", stop, why)
	}
	if stop, why := p.Prune(5, []Curve{jump}, true); stop || why != "kept at step 9: 0 other trials reached rung 8, 1 needed" {
		t.Errorf("alone: got %v %q", stop, why)
	}
}

func TestASHAOptions(t *testing.T) {
	cs := []Curve{line(0, false, 1, 1, 1, 1), line(1, false, 1, 1, 1, 1), line(2, false, 1, 1, 1, 1)}
	bad := line(3, false, 9)
	// warmup_steps 2: rung 1 is not checked.
	if stop, why := mustNew(t, "asha", map[string]any{"warmup_steps": 2}).Prune(3, append(cs[:3:3], bad), true); stop || why != "kept at step 1: no rung reached at this step" {
		t.Errorf("warm-up: got %v %q", stop, why)
	}
	// min_trials 4: three others are not enough.
	if stop, why := mustNew(t, "asha", map[string]any{"min_trials": 4}).Prune(3, append(cs[:3:3], bad), true); stop || why != "kept at step 1: 3 other trials reached rung 1, 4 needed" {
		t.Errorf("min_trials: got %v %q", stop, why)
	}
	// max_resource 4 with eta 2: rungs 1 and 2, none at 4.
	p := mustNew(t, "asha", map[string]any{"max_resource": 4, "eta": 2})
	if stop, why := p.Prune(3, append(cs[:3:3], line(3, false, 1, 1, 1, 9)), true); stop || why != "kept at step 4: no rung reached at this step" {
		t.Errorf("max_resource: got %v %q", stop, why)
	}
	// Maximising, the larger value ranks first.
	if stop, _ := p.Prune(3, append(cs[:3:3], line(3, false, 2)), false); stop {
		t.Error("maximising: the best was pruned")
	}
	if stop, _ := p.Prune(3, append(cs[:3:3], line(3, false, 0)), false); !stop {
		t.Error("maximising: the worst was kept")
	}
}

func TestHyperband(t *testing.T) {
	h := mustNew(t, "hyperband", map[string]any{"max_resource": 100}).(hyperband)
	var firsts []int64
	for _, b := range h.brackets {
		firsts = append(firsts, b.minResource)
	}
	if got := fmt.Sprint(firsts); got != "[1 3 9 27 81]" {
		t.Errorf("first rungs %v, want 1 3 9 27 81", firsts)
	}
	// Optuna's weights for 5 brackets and eta 3.
	if got := fmt.Sprint(h.weights); got != "[81 34 15 8 5]" {
		t.Errorf("weights %s", got)
	}
	// The share of each bracket over many Numbers follows the weights.
	count := make([]int, len(h.weights))
	const n = 143000
	for i := range n {
		count[h.bracket(i)]++
	}
	for b, w := range h.weights {
		want := float64(n) * float64(w) / float64(h.total)
		if d := float64(count[b]) - want; d > 0.05*want || d < -0.05*want {
			t.Errorf("bracket %d has %d trials of %d, want about %.0f", b, count[b], n, want)
		}
	}
	// A trial competes only in its bracket: find two Numbers in bracket 0 and one elsewhere.
	var in0, other []int
	for i := 0; len(in0) < 2 || len(other) < 1; i++ {
		if h.bracket(i) == 0 {
			in0 = append(in0, i)
		} else {
			other = append(other, i)
		}
	}
	cs := []Curve{line(other[0], false, 0), line(in0[0], false, 1), line(in0[1], false, 2)}
	stop, why := h.Prune(in0[1], cs, true)
	if !stop || !strings.Contains(why, "ranks 2 of 2 trials at rung 1") || !strings.HasSuffix(why, "(hyperband bracket 1 of 5, first rung 1)") {
		t.Errorf("got %v %q", stop, why)
	}
}

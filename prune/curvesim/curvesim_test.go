package curvesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jikken-dev/jikken/prune"
)

func mustNew(t *testing.T, name string, o map[string]any) prune.Pruner {
	t.Helper()
	p, err := prune.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestASHAKeepsTheBest is the acceptance of issue 27 on 20 seeds (bench/prune runs 100): ASHA
// keeps the truly best configuration in at least 95 % of the seeds and runs at most 40 % of
// the grid's steps.
func TestASHAKeepsTheBest(t *testing.T) {
	p := mustNew(t, "asha", map[string]any{"min_resource": 10, "reduction_factor": 3})
	s := Default.Repeat(p, 20)
	t.Logf("asha: best kept in %d of %d seeds, %.1f %% of the steps, %.1f configurations pruned", s.BestKept, s.Seeds, 100*s.Steps, s.Pruned)
	if s.BestKept < 19 {
		t.Errorf("the best configuration was kept in %d of 20 seeds, want at least 19", s.BestKept)
	}
	if s.Steps > 0.40 {
		t.Errorf("%.1f %% of the grid's steps were run, want at most 40 %%", 100*s.Steps)
	}
	if s.Pruned == 0 {
		t.Error("nothing was pruned")
	}
}

func TestRun(t *testing.T) {
	none := mustNew(t, "none", nil)
	r := Default.Run(none, 7)
	if !r.BestKept || r.Steps != r.Total || r.Total != 8100 || r.Pruned != 0 || r.Ended[80] != 100 {
		t.Errorf("without pruning: %+v", r)
	}
	p := mustNew(t, "hyperband", map[string]any{"max_resource": 100})
	if a, b := Default.Run(p, 7), Default.Run(p, 7); !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed gave %+v, then %+v", a, b)
	}
}

func TestCurves(t *testing.T) {
	loss, best := Default.Curves(3)
	for n, l := range loss {
		if n != best && l[len(l)-1] < loss[best][len(l)-1]-4*Default.Noise {
			t.Errorf("configuration %d ends at %v, well below the best %d's %v", n, l[len(l)-1], best, loss[best][len(l)-1])
		}
		if l[0] < 0.5 {
			t.Errorf("configuration %d starts at %v, want about 1", n, l[0])
		}
	}
}

// TestSameDecisionsAsOptuna replays the events of bench/prune/optuna_ref.py, which ran Optuna's
// median, percentile and successive-halving pruners on these seeds' curves, and checks that
// every configuration ends at the same step under jikken's pruner of the same rule.
func TestSameDecisionsAsOptuna(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "optuna.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Optuna string
		Runs   []struct {
			Pruner  string
			Options map[string]any
			Seed    uint64
			Ended   []int64
		}
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	for _, g := range golden.Runs {
		r := Default.Run(mustNew(t, g.Pruner, g.Options), g.Seed)
		if !reflect.DeepEqual(r.Ended, g.Ended) {
			for n := range g.Ended {
				if r.Ended[n] != g.Ended[n] {
					t.Errorf("%s %v, seed %d: configuration %d ended at step %d, under Optuna %s at %d", g.Pruner, g.Options, g.Seed, n, r.Ended[n], golden.Optuna, g.Ended[n])
					break
				}
			}
		}
	}
	if len(golden.Runs) != 15 {
		t.Errorf("%d runs in testdata/optuna.json, want 15", len(golden.Runs))
	}
}

package racing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/stats"
)

// Without ties, the step's statistic is Friedman's (stats.Friedman, equal to R's friedman.test).
func TestFriedmanStatisticAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	blocks := make([][]float64, 8)
	for i := range blocks {
		blocks[i] = []float64{r.NormFloat64(), r.NormFloat64() + 0.8, r.NormFloat64() + 1.6, r.NormFloat64() + 3}
	}
	want, err := stats.Friedman(blocks)
	if err != nil {
		t.Fatal(err)
	}
	race := Race{Configs: 4, First: 8, Each: 1, Alpha: 0.05, Survivors: 1}
	el := race.test(blocks, []bool{true, true, true, true})
	if len(el) == 0 {
		t.Fatalf("no elimination at Friedman p = %g", want.PValue)
	}
	if w := fmt.Sprintf("Friedman T = %.3g, p = %.3g", want.Statistic, want.PValue); !strings.Contains(el[0].Test, w) {
		t.Errorf("%s: want %s", el[0].Test, w)
	}
	for _, e := range el {
		if e.Config == 0 {
			t.Errorf("the best configuration was eliminated: %s", e.Test)
		}
	}
}

// A clearly worse configuration is eliminated at the first test, a clearly better one wins
// the race, and blocks after the race ended change nothing.
func TestRaceEliminatesAndEnds(t *testing.T) {
	race := Race{Configs: 5, First: 5, Each: 1, Alpha: 0.05, Survivors: 1}
	r := rand.New(rand.NewPCG(5, 6))
	var blocks [][]float64
	var d Decision
	var err error
	for range 40 {
		if d, err = race.Decide(blocks, 40); err != nil {
			t.Fatal(err)
		}
		if d.Done {
			break
		}
		for len(blocks) < d.Blocks {
			b := make([]float64, 5)
			for c := range b {
				b[c] = r.NormFloat64() + float64(c)*0.7
			}
			b[4] = math.Inf(1) // configuration 4 always fails
			blocks = append(blocks, b)
		}
	}
	if !d.Done || !d.Alive[0] || d.Alive[4] {
		t.Fatalf("race: %+v", d)
	}
	first := map[int]bool{}
	for _, e := range d.Eliminated {
		if e.Blocks == 5 {
			first[e.Config] = true
		}
	}
	if !first[4] {
		t.Errorf("eliminations %+v: want configuration 4 at the first test", d.Eliminated)
	}
	again, _ := race.Decide(append(blocks, []float64{9, 0, 0, 0, 0}), 40)
	if again.Blocks != d.Blocks || len(again.Eliminated) != len(d.Eliminated) {
		t.Errorf("a block after the end changed the race: %+v vs %+v", again, d)
	}
}

func TestRaceValidate(t *testing.T) {
	err := Race{Configs: 1, First: 1, Each: 0, Alpha: 1, Survivors: 0}.Validate()
	for _, want := range []string{"1 configurations", "first 1", "each 0", "alpha 1 is outside (0, 1)", "survivors 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
}

package racing

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/jikken-dev/jikken/stats"
)

// Race is how a race runs.
type Race struct {
	// Configs is how many configurations start the race (at least 2).
	Configs int
	// First is how many blocks every configuration runs before the first test (irace's
	// firstTest, 5); Each how many more between tests (eachTest, 1).
	First, Each int
	// Alpha is the level of the tests, in (0, 1).
	Alpha float64
	// Survivors ends the race once this many configurations or fewer are left (at least 1).
	Survivors int
}

// Validate reports every problem with r at once.
func (r Race) Validate() error {
	var errs []error
	if r.Configs < 2 {
		errs = append(errs, fmt.Errorf("%d configurations: a race needs at least 2", r.Configs))
	}
	if r.First < 2 {
		errs = append(errs, fmt.Errorf("first %d: want at least 2 blocks before the first test", r.First))
	}
	if r.Each < 1 {
		errs = append(errs, fmt.Errorf("each %d: want at least 1 block between tests", r.Each))
	}
	if !(r.Alpha > 0 && r.Alpha < 1) {
		errs = append(errs, fmt.Errorf("alpha %v is outside (0, 1); use a level such as 0.05", r.Alpha))
	}
	if r.Survivors < 1 {
		errs = append(errs, fmt.Errorf("survivors %d: want at least 1", r.Survivors))
	}
	return errors.Join(errs...)
}

// Elimination records a configuration dropped from the race and the test that dropped it.
type Elimination struct {
	Config int
	// Best is the configuration it was compared with: the best ranked one.
	Best int
	// Blocks is how many blocks the test saw.
	Blocks int
	// Test says which test, with its figures, for the record.
	Test string
}

// Decision is where the race stands after the results so far.
type Decision struct {
	// Alive says which configurations are still racing.
	Alive []bool
	// Eliminated are the configurations dropped, in the order they were.
	Eliminated []Elimination
	// Blocks is how many blocks the surviving configurations should have run: the next test's
	// count while the race goes on.
	Blocks int
	// Done is set once the race is over: Survivors or fewer are left, or total blocks are run.
	Done bool
}

// Decide replays the race over blocks, in order: blocks[i][c] is configuration c's value in
// block i (lower is better; a failure is +Inf or NaN, the worst; a configuration eliminated
// before block i may have any value there, it is not read). total is how many blocks the race
// may use. Tests happen at First, First+Each, ... blocks.
func (r Race) Decide(blocks [][]float64, total int) (Decision, error) {
	if err := r.Validate(); err != nil {
		return Decision{}, err
	}
	d := Decision{Alive: make([]bool, r.Configs), Blocks: min(r.First, total)}
	for c := range d.Alive {
		d.Alive[c] = true
	}
	for i, b := range blocks {
		if len(b) != r.Configs {
			return Decision{}, fmt.Errorf("race: block %d has %d values for %d configurations", i, len(b), r.Configs)
		}
	}
	left := r.Configs
	for n := r.First; n <= len(blocks) && n <= total; n += r.Each {
		if left > r.Survivors {
			for _, e := range r.test(blocks[:n], d.Alive) {
				d.Alive[e.Config] = false
				d.Eliminated = append(d.Eliminated, e)
				left--
			}
		}
		if left <= r.Survivors || n == total {
			d.Blocks, d.Done = n, true
			return d, nil
		}
		d.Blocks = min(n+r.Each, total)
	}
	return d, nil
}

// test runs one step of F-race on the alive configurations and returns those it eliminates.
func (r Race) test(blocks [][]float64, alive []bool) []Elimination {
	var idx []int
	for c, a := range alive {
		if a {
			idx = append(idx, c)
		}
	}
	n, k := len(blocks), len(idx)
	if k == 2 {
		return r.pair(blocks, idx[0], idx[1])
	}
	// Within-block mid-ranks of the alive configurations (1 = best).
	sums := make([]float64, k)
	a := 0.0
	vals := make([]float64, k)
	for _, b := range blocks {
		for j, c := range idx {
			vals[j] = b[c]
		}
		for j := range idx {
			below, same := 0, 0
			for _, y := range vals {
				switch {
				case worse(vals[j], y):
					below++
				case !worse(y, vals[j]):
					same++
				}
			}
			rk := float64(below) + float64(same+1)/2
			sums[j] += rk
			a += rk * rk
		}
	}
	// Conover (1999), as irace computes it: the Friedman statistic with ties, and the critical
	// difference of rank sums from Student's t on (n-1)(k-1) degrees of freedom.
	fn, fk := float64(n), float64(k)
	c := fn * fk * (fk + 1) * (fk + 1) / 4
	sr2 := 0.0
	for _, s := range sums {
		sr2 += s * s
	}
	if a-c <= 0 {
		return nil // every block tied
	}
	t := (fk - 1) * (sr2 - fn*c) / (a - c)
	p := distuv.ChiSquared{K: fk - 1}.Survival(t)
	if p >= r.Alpha {
		return nil
	}
	df := (fn - 1) * (fk - 1)
	crit := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1-r.Alpha/2) * math.Sqrt(2*(fn*a-sr2)/df)
	best := 0
	for j := range sums {
		if sums[j] < sums[best] {
			best = j
		}
	}
	var out []Elimination
	for j, s := range sums {
		if s-sums[best] > crit {
			out = append(out, Elimination{Config: idx[j], Best: idx[best], Blocks: n, Test: fmt.Sprintf(
				"eliminated by F-race after %d blocks: Friedman T = %.3g, p = %.3g; rank sum %.1f vs the best's %.1f, beyond Conover's critical difference %.3g at alpha %g",
				n, t, p, s, sums[best], crit, r.Alpha)})
		}
	}
	return out
}

// pair is the two-configuration step: a paired Wilcoxon signed-rank test (as irace does).
func (r Race) pair(blocks [][]float64, x, y int) []Elimination {
	var a, b []float64
	for _, blk := range blocks {
		a, b = append(a, failedWorst(blk[x])), append(b, failedWorst(blk[y]))
	}
	res, err := stats.WilcoxonSignedRank(a, b, stats.TwoSided)
	if err != nil || res.PValue >= r.Alpha {
		return nil
	}
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	loser, winner := y, x
	if res.Statistic > float64(n*(n+1))/4 {
		loser, winner = x, y
	}
	return []Elimination{{Config: loser, Best: winner, Blocks: len(blocks), Test: fmt.Sprintf(
		"eliminated by F-race after %d blocks: paired Wilcoxon signed-rank test against the other one left, V = %g, p = %.3g at alpha %g",
		len(blocks), res.Statistic, res.PValue, r.Alpha)}}
}

// worse reports whether x ranks after y (lower is better; NaN, a failure, ties with +Inf).
func worse(x, y float64) bool { return failedWorst(x) > failedWorst(y) }

// failedWorst maps a failure (NaN) to +Inf, which the rank tests take as the worst value.
func failedWorst(x float64) float64 {
	if math.IsNaN(x) {
		return math.Inf(1)
	}
	return x
}

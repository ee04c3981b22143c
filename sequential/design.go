package sequential

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/jikken-dev/jikken/stats"
)

// Spending says how the error rate is spent over the looks (Lan and DeMets' functions).
type Spending uint8

const (
	// OBrienFleming spends almost nothing at the first looks and most at the last: early stops
	// need large differences, and the last look is nearly the fixed-sample test.
	OBrienFleming Spending = iota
	// Pocock spends evenly in information time: earlier stops, a stricter last look.
	Pocock
)

// SpendingNames are the names ParseSpending knows, for errors and docs.
var SpendingNames = []string{"obrien-fleming", "pocock"}

// ParseSpending reads a spending function's name ("obf" and "obrien-fleming" are one).
func ParseSpending(s string) (Spending, error) {
	switch s {
	case "", "obrien-fleming", "obf":
		return OBrienFleming, nil
	case "pocock":
		return Pocock, nil
	}
	return 0, fmt.Errorf("spending %q: want obrien-fleming (obf) or pocock", s)
}

func (s Spending) String() string { return SpendingNames[s] }

// spent is the error rate spent by information time t in (0, 1].
func (s Spending) spent(alpha, t float64) float64 {
	if t >= 1 {
		return alpha
	}
	if s == Pocock {
		return alpha * math.Log(1+(math.E-1)*t)
	}
	z := math.Sqrt2 * math.Erfinv(1-alpha)
	return math.Erfc(z / math.Sqrt(t) / math.Sqrt2)
}

// Design is a sequential comparison of Groups configurations.
type Design struct {
	// Groups is how many configurations are compared (at least 2).
	Groups int
	// Looks are the seeds per block at which the verdicts are tested, increasing: Looks(min,
	// batch, max).
	Looks []int
	// Alpha is the family-wise error rate, in (0, 1).
	Alpha    float64
	Spending Spending
	// Futility settles an open pair as "no difference" at a look before the last when its
	// conditional power (the chance to be decided at the last look if the trend so far goes
	// on) is below this; 0 never does. The boundaries take it into account (binding).
	Futility float64
}

// Looks returns the planned looks: min seeds, then batch more each time, up to max (the last
// look is max even when the batches do not reach it exactly).
func Looks(min, batch, max int) ([]int, error) {
	var errs []error
	if min < 2 {
		errs = append(errs, fmt.Errorf("min %d: want at least 2 seeds", min))
	}
	if batch < 1 {
		errs = append(errs, fmt.Errorf("batch %d: want at least 1 seed", batch))
	}
	if max < min {
		errs = append(errs, fmt.Errorf("max %d is below min %d", max, min))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []int
	for n := min; n < max; n += batch {
		out = append(out, n)
	}
	return append(out, max), nil
}

// Validate reports what is wrong with d, every problem at once.
func (d Design) Validate() error {
	var errs []error
	if d.Groups < 2 {
		errs = append(errs, fmt.Errorf("%d groups: a comparison needs at least 2", d.Groups))
	}
	if !(d.Alpha > 0 && d.Alpha < 1) {
		errs = append(errs, fmt.Errorf("alpha %v: want a level in (0, 1), such as 0.05", d.Alpha))
	}
	if len(d.Looks) == 0 || d.Looks[0] < 1 || !slices.IsSorted(d.Looks) || len(slices.Compact(slices.Clone(d.Looks))) != len(d.Looks) {
		errs = append(errs, fmt.Errorf("looks %v: want increasing seed counts from 1", d.Looks))
	}
	if !(d.Futility >= 0 && d.Futility < 1) {
		errs = append(errs, fmt.Errorf("futility %v: want a conditional power in [0, 1)", d.Futility))
	}
	if d.Spending > Pocock {
		errs = append(errs, fmt.Errorf("spending %d: unknown", d.Spending))
	}
	return errors.Join(errs...)
}

// fixedCritical is the critical value of max |Z| over the pairs in one fixed-sample test: the
// studentized range quantile (infinite degrees of freedom) over √2, Nemenyi's test.
func (d Design) fixedCritical() float64 {
	return stats.StudentizedRangeQuantile(1-d.Alpha, d.Groups) / math.Sqrt2
}

// Paths is how many simulated paths fix the boundaries: the error rate they give is alpha
// within about 0.001 (one standard error at alpha 0.05 is 0.0007).
const Paths = 100_000

// boundarySeed seeds the simulation, so that a design always has the same boundaries.
const boundarySeed = 0x6a696b6b656e

// Bounds are a design with its boundaries.
type Bounds struct {
	Design
	// Crit is the critical value of |Z| at each look: a pair whose |Z| reaches it is decided.
	Crit []float64
	// Fixed is the fixed-sample critical value (one look at the last look's seeds), which the
	// futility rule aims at.
	Fixed float64
}

// Boundaries returns the design's boundaries. They are fixed by simulating the statistics' joint limit under the null (Groups
// independent Brownian motions observed at the looks' information times) so that, with the
// futility rule applied as binding, the chance of deciding any pair by look k is the spending
// function's share of alpha at k.
func (d Design) Boundaries() (*Bounds, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	k, looks := d.Groups, len(d.Looks)
	last := float64(d.Looks[looks-1])
	pairs := pairsOf(k)
	rng := rand.New(rand.NewPCG(boundarySeed, uint64(k)<<32|uint64(looks)))
	w := make([]float64, Paths*k)
	open := make([]bool, Paths*len(pairs))
	for i := range open {
		open[i] = true
	}
	alive := make([]bool, Paths)
	for i := range alive {
		alive[i] = true
	}
	zfix := d.fixedCritical()
	crit := make([]float64, looks)
	stat := make([]float64, Paths)
	var sorted []float64
	rejected, prev := 0, 0.0
	for l, n := range d.Looks {
		t := float64(n) / last
		step := math.Sqrt(t - prev)
		prev = t
		sorted = sorted[:0]
		for p := range Paths {
			row := w[p*k : (p+1)*k]
			for g := range row {
				row[g] += step * rng.NormFloat64()
			}
			stat[p] = math.Inf(-1)
			if !alive[p] {
				continue
			}
			for j, pr := range pairs {
				if open[p*len(pairs)+j] {
					stat[p] = max(stat[p], math.Abs(row[pr[0]]-row[pr[1]])/math.Sqrt(2*t))
				}
			}
			sorted = append(sorted, stat[p])
		}
		need := int(math.Round(float64(Paths)*d.Spending.spent(d.Alpha, t))) - rejected
		crit[l] = math.Inf(1)
		if need > 0 && len(sorted) > 0 {
			slices.Sort(sorted)
			need = min(need, len(sorted))
			crit[l] = sorted[len(sorted)-need]
		}
		for p := range Paths {
			if !alive[p] {
				continue
			}
			if stat[p] >= crit[l] {
				alive[p] = false
				rejected++
				continue
			}
			if l == looks-1 || d.Futility == 0 {
				continue
			}
			row, any := w[p*k:(p+1)*k], false
			for j, pr := range pairs {
				at := p*len(pairs) + j
				if open[at] {
					z := math.Abs(row[pr[0]]-row[pr[1]]) / math.Sqrt(2*t)
					open[at] = conditionalPower(z, t, zfix) >= d.Futility
				}
				any = any || open[at]
			}
			alive[p] = any
		}
	}
	return &Bounds{Design: d, Crit: crit, Fixed: zfix}, nil
}

// conditionalPower is the chance that a pair at |Z| = z at information time t reaches the
// fixed-sample critical value at the end if its drift so far goes on (Lan and Wittes' B-value
// form: B(t) = z√t, B(1) given B(t) is normal with mean B(t)/t and variance 1 - t).
func conditionalPower(z, t, zfix float64) float64 {
	if t >= 1 {
		return 0
	}
	return 0.5 * math.Erfc((zfix-z/math.Sqrt(t))/math.Sqrt(1-t)/math.Sqrt2)
}

// pairsOf lists the pairs of k groups in order: (0,1), (0,2), ..., (k-2,k-1).
func pairsOf(k int) [][2]int {
	var out [][2]int
	for a := range k {
		for b := a + 1; b < k; b++ {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

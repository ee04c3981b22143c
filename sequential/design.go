package sequential

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// pairs is how many pairs the design compares.
func (d Design) pairs() int { return d.Groups * (d.Groups - 1) / 2 }

// Paths is how many simulated paths fix a boundary: the error rate it gives is its level
// within about 0.0005 (one standard error at 0.0167 is 0.0004).
const Paths = 100_000

// boundarySeed seeds the simulation, so that a design always has the same boundaries.
const boundarySeed = 0x6a696b6b656e

// Bounds are a design with its boundaries.
type Bounds struct {
	Design
	// Crit[j][l] is the critical value of a pair's |Z| at look l when j pairs have been decided
	// different: the boundary of a test at level alpha/(pairs-j) (Holm's levels). A pair whose
	// |Z| reaches it is decided.
	Crit [][]float64
	// Fixed[j] is the fixed-sample two-sided critical value at that level, which the futility
	// rule aims at.
	Fixed []float64
}

// Boundaries returns the design's boundaries, one set per Holm level. Each is fixed by
// simulating a pair's standardised statistic under the null in its limit (a Brownian motion
// observed at the looks' information times, seeds/max) so that, with the futility rule applied
// as binding, the chance of deciding the pair by look l is the spending function's share of the
// level at l.
func (d Design) Boundaries() (*Bounds, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	m := d.pairs()
	b := &Bounds{Design: d, Crit: make([][]float64, m), Fixed: make([]float64, m)}
	for j := range m {
		level := d.Alpha / float64(m-j)
		b.Fixed[j] = math.Sqrt2 * math.Erfinv(1-level)
		b.Crit[j] = d.boundary(level, b.Fixed[j], uint64(j))
	}
	return b, nil
}

// boundary simulates one level's critical values.
func (d Design) boundary(level, zfix float64, stream uint64) []float64 {
	looks := len(d.Looks)
	last := float64(d.Looks[looks-1])
	rng := rand.New(rand.NewPCG(boundarySeed, stream<<32|uint64(looks)))
	w := make([]float64, Paths)
	alive := make([]bool, Paths)
	for i := range alive {
		alive[i] = true
	}
	crit := make([]float64, looks)
	sorted := make([]float64, 0, Paths)
	rejected, prev := 0, 0.0
	for l, n := range d.Looks {
		t := float64(n) / last
		step := math.Sqrt(t - prev)
		prev = t
		sorted = sorted[:0]
		for p := range w {
			w[p] += step * rng.NormFloat64()
			if alive[p] {
				sorted = append(sorted, math.Abs(w[p])/math.Sqrt(t))
			}
		}
		need := int(math.Round(float64(Paths)*d.Spending.spent(level, t))) - rejected
		crit[l] = math.Inf(1)
		if need > 0 && len(sorted) > 0 {
			slices.Sort(sorted)
			crit[l] = sorted[len(sorted)-min(need, len(sorted))]
		}
		for p := range w {
			if !alive[p] {
				continue
			}
			z := math.Abs(w[p]) / math.Sqrt(t)
			switch {
			case z >= crit[l]:
				alive[p] = false
				rejected++
			case l < looks-1 && d.Futility > 0 && conditionalPower(z, t, zfix) < d.Futility:
				alive[p] = false
			}
		}
	}
	return crit
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

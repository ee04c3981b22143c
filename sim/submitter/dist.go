package submitter

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dist is a distribution of non-negative numbers.
type Dist interface {
	Sample(r *rand.Rand) float64
	// Mean is the expectation, used to calibrate arrival rates to a target load.
	Mean() float64
}

// Const always returns V.
type Const struct{ V float64 }

// Sample implements Dist.
func (d Const) Sample(*rand.Rand) float64 { return d.V }

// Mean implements Dist.
func (d Const) Mean() float64 { return d.V }

// Uniform is uniform on [Min, Max).
type Uniform struct{ Min, Max float64 }

// Sample implements Dist.
func (d Uniform) Sample(r *rand.Rand) float64 { return d.Min + r.Float64()*(d.Max-d.Min) }

// Mean implements Dist.
func (d Uniform) Mean() float64 { return (d.Min + d.Max) / 2 }

// Exponential has the given mean.
type Exponential struct{ MeanV float64 }

// Sample implements Dist.
func (d Exponential) Sample(r *rand.Rand) float64 { return r.ExpFloat64() * d.MeanV }

// Mean implements Dist.
func (d Exponential) Mean() float64 { return d.MeanV }

// LogNormal is exp(N(Mu, Sigma^2)), truncated at Max when Max is positive (a trace's longest
// job bounds the tail a heavy sigma would otherwise produce).
type LogNormal struct{ Mu, Sigma, Max float64 }

// Sample implements Dist.
func (d LogNormal) Sample(r *rand.Rand) float64 {
	v := math.Exp(d.Mu + d.Sigma*r.NormFloat64())
	if d.Max > 0 && v > d.Max {
		return d.Max
	}
	return v
}

// Mean implements Dist: E[min(X, Max)] in closed form.
func (d LogNormal) Mean() float64 {
	m := math.Exp(d.Mu + d.Sigma*d.Sigma/2)
	if d.Max <= 0 {
		return m
	}
	lc := math.Log(d.Max)
	return m*phi((lc-d.Mu-d.Sigma*d.Sigma)/d.Sigma) + d.Max*(1-phi((lc-d.Mu)/d.Sigma))
}

func phi(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }

// LogUniform is Scale x 10^U(Lo, Hi), Gavel's duration model.
type LogUniform struct{ Scale, Lo, Hi float64 }

// Sample implements Dist.
func (d LogUniform) Sample(r *rand.Rand) float64 {
	return d.Scale * math.Pow(10, d.Lo+r.Float64()*(d.Hi-d.Lo))
}

// Mean implements Dist.
func (d LogUniform) Mean() float64 {
	return d.Scale * (math.Pow(10, d.Hi) - math.Pow(10, d.Lo)) / ((d.Hi - d.Lo) * math.Ln10)
}

// Choice returns Values[i] with probability Weights[i] / sum(Weights).
type Choice struct {
	Values  []float64
	Weights []float64
	cum     []float64
}

// NewChoice checks and normalises a discrete distribution.
func NewChoice(values, weights []float64) (*Choice, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("choice needs at least one value")
	}
	if weights == nil {
		weights = make([]float64, len(values))
		for i := range weights {
			weights[i] = 1
		}
	}
	if len(weights) != len(values) {
		return nil, fmt.Errorf("choice has %d values but %d weights; give one weight per value", len(values), len(weights))
	}
	c := &Choice{Values: values, Weights: weights}
	var s float64
	for _, w := range weights {
		if w < 0 || math.IsNaN(w) {
			return nil, fmt.Errorf("choice weight %v must be non-negative", w)
		}
		s += w
		c.cum = append(c.cum, s)
	}
	if s == 0 {
		return nil, fmt.Errorf("choice weights sum to zero")
	}
	for i := range c.cum {
		c.cum[i] /= s
	}
	return c, nil
}

// Index draws an index.
func (c *Choice) Index(r *rand.Rand) int {
	u := r.Float64()
	for i, v := range c.cum {
		if u < v {
			return i
		}
	}
	return len(c.cum) - 1
}

// Sample implements Dist.
func (c *Choice) Sample(r *rand.Rand) float64 { return c.Values[c.Index(r)] }

// Mean implements Dist.
func (c *Choice) Mean() float64 {
	var m, prev float64
	for i, v := range c.cum {
		m += (v - prev) * c.Values[i]
		prev = v
	}
	return m
}

// Mixture draws from Parts[i] with probability Weights[i].
type Mixture struct {
	Parts []Dist
	pick  *Choice
}

// NewMixture builds a mixture.
func NewMixture(parts []Dist, weights []float64) (*Mixture, error) {
	idx := make([]float64, len(parts))
	for i := range idx {
		idx[i] = float64(i)
	}
	c, err := NewChoice(idx, weights)
	if err != nil {
		return nil, err
	}
	return &Mixture{Parts: parts, pick: c}, nil
}

// Sample implements Dist.
func (m *Mixture) Sample(r *rand.Rand) float64 { return m.Parts[m.pick.Index(r)].Sample(r) }

// Mean implements Dist.
func (m *Mixture) Mean() float64 {
	var s, prev float64
	for i, v := range m.pick.cum {
		s += (v - prev) * m.Parts[i].Mean()
		prev = v
	}
	return s
}

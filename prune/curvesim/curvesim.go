package curvesim

import (
	"math"
	"math/rand/v2"

	"github.com/jikken-dev/jikken/prune"
)

// Config describes the benchmark: a Side x Side grid of configurations (think learning rate by
// width). Configuration (i, j)'s loss at step t (1..Steps) is
//
//	final + (start-final)*exp(-t/tau) + noise
//
// where final = FinalLow + FinalSlope*dist + U(0, FinalJitter), dist being the distance in grid
// cells from (i, j) to the seed's optimum (drawn uniformly on the grid), so the optimum is the
// best configuration by at least FinalSlope-FinalJitter; start = 1 + U(-StartJitter, StartJitter);
// tau grows geometrically from TauLow (i = 0) to TauHigh (i = Side-1), times U(1-TauJitter,
// 1+TauJitter), so curves cross: a slower row can end better than a faster one; the noise is
// normal with standard deviation Noise, independent at each step. The loss is minimised.
type Config struct {
	Side        int   // the grid has Side*Side configurations
	Steps       int64 // the steps of a configuration that is never pruned
	Slots       int   // configurations running at once
	FinalLow    float64
	FinalSlope  float64
	FinalJitter float64
	StartJitter float64
	TauLow      float64
	TauHigh     float64
	TauJitter   float64
	Noise       float64
}

// Default is the benchmark of issue 27: 81 configurations of 100 steps, 4 at a time.
var Default = Config{
	Side: 9, Steps: 100, Slots: 4,
	FinalLow: 0.1, FinalSlope: 0.04, FinalJitter: 0.01, StartJitter: 0.05,
	TauLow: 5, TauHigh: 10, TauJitter: 0.1, Noise: 0.01,
}

// Result is what one seed's run gives.
type Result struct {
	Best     int   // the configuration with the lowest final value
	BestKept bool  // it ran to the end, unpruned
	Steps    int64 // steps run over all configurations
	Total    int64 // configurations * Steps: the grid run in full
	Pruned   int   // configurations pruned
	// Ended is the step at which each configuration stopped (Steps: it ran to the end).
	Ended []int64
}

// Curves draws the configurations' losses at steps 1..Steps for a seed and returns the best
// configuration. The configurations come in an order drawn from the seed (a shuffled grid, as a
// random sampler over it would give), so the fast rows do not always come first. Each
// configuration has its own stream, so the curves do not depend on the order in which a run
// reports them.
func (c Config) Curves(seed uint64) (loss [][]float64, best int) {
	pick := rand.New(rand.NewPCG(seed, 0))
	oi, oj := pick.IntN(c.Side), pick.IntN(c.Side)
	cells := pick.Perm(c.Side * c.Side)
	loss = make([][]float64, c.Side*c.Side)
	lowest := math.Inf(1)
	for n, cell := range cells {
		i, j := cell/c.Side, cell%c.Side
		rng := rand.New(rand.NewPCG(seed, uint64(cell)+2))
		dist := math.Hypot(float64(i-oi), float64(j-oj))
		final := c.FinalLow + c.FinalSlope*dist + c.FinalJitter*rng.Float64()
		start := 1 + c.StartJitter*(2*rng.Float64()-1)
		tau := c.TauLow * math.Pow(c.TauHigh/c.TauLow, float64(i)/float64(max(1, c.Side-1)))
		tau *= 1 + c.TauJitter*(2*rng.Float64()-1)
		loss[n] = make([]float64, c.Steps)
		for t := range loss[n] {
			loss[n][t] = final + (start-final)*math.Exp(-float64(t+1)/tau) + c.Noise*rng.NormFloat64()
		}
		if final < lowest {
			lowest, best = final, n
		}
	}
	return loss, best
}

// Run runs the grid under pruner p for a seed. Configurations start in Number order in Slots
// slots; at each event one running configuration, picked by the seed's Draws, reports its next
// step and the pruner is asked about it; a pruned or finished configuration frees its slot for
// the next one.
func (c Config) Run(p prune.Pruner, seed uint64) Result {
	loss, best := c.Curves(seed)
	configs := c.Side * c.Side
	draws := c.Draws(seed)
	curves := make([]prune.Curve, 0, configs)
	var running []int // indices into curves
	r := Result{Best: best, Total: int64(configs) * c.Steps, Ended: make([]int64, configs)}
	for len(curves) < configs || len(running) > 0 {
		for len(running) < c.Slots && len(curves) < configs {
			running = append(running, len(curves))
			curves = append(curves, prune.Curve{Number: len(curves)})
		}
		k := int(draws[r.Steps] * float64(len(running)))
		cur := &curves[running[k]]
		t := int64(len(cur.Points)) + 1
		cur.Points = append(cur.Points, prune.Point{Step: t, Value: loss[cur.Number][t-1]})
		r.Steps++
		if t == c.Steps {
			cur.Done = true
		} else if stop, _ := p.Prune(cur.Number, curves, true); stop {
			cur.Pruned = true
			r.Pruned++
		}
		if cur.Done || cur.Pruned {
			r.Ended[cur.Number] = t
			running = append(running[:k], running[k+1:]...)
		}
	}
	r.BestKept = curves[best].Done
	return r
}

// Draws are the numbers in [0, 1) that pick, at event e, the running configuration that
// reports: the k-th of n running ones (in the order they started) for k = floor(Draws[e] * n).
// They are a function of the seed alone, so another program (bench/prune/optuna.py) can replay
// a run's events exactly; a run has at most Side*Side*Steps events.
func (c Config) Draws(seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := make([]float64, int64(c.Side*c.Side)*c.Steps)
	for i := range d {
		d[i] = rng.Float64()
	}
	return d
}

// Summary is a pruner's figures over many seeds.
type Summary struct {
	Seeds    int
	BestKept int     // seeds where the best configuration ran to the end
	Steps    float64 // the mean share of the grid's steps run, 0-1
	Pruned   float64 // the mean number of configurations pruned
}

// Repeat runs seeds 1..n and sums up.
func (c Config) Repeat(p prune.Pruner, n int) Summary {
	s := Summary{Seeds: n}
	for seed := range uint64(n) {
		r := c.Run(p, seed+1)
		if r.BestKept {
			s.BestKept++
		}
		s.Steps += float64(r.Steps) / float64(r.Total) / float64(n)
		s.Pruned += float64(r.Pruned) / float64(n)
	}
	return s
}

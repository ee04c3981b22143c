// Command opt is the trial program of jikken's demo experiment: it minimises a benchmark
// function with one of three algorithms, logs the best value found as it goes, and writes the
// final best to result.json. It speaks the trial interface with no SDK: JIKKEN_PARAM_* and
// JIKKEN_SEED in, $JIKKEN_OUTPUT_DIR/metrics.jsonl and result.json out.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const (
	dim      = 10
	budget   = 4000
	logEvery = 200
)

var functions = map[string]func([]float64) float64{
	"sphere": func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		return s
	},
	"rastrigin": func(x []float64) float64 {
		s := 10.0 * float64(len(x))
		for _, v := range x {
			s += v*v - 10*math.Cos(2*math.Pi*v)
		}
		return s
	},
	"rosenbrock": func(x []float64) float64 {
		s := 0.0
		for i := 0; i+1 < len(x); i++ {
			a, b := x[i+1]-x[i]*x[i], 1-x[i]
			s += 100*a*a + b*b
		}
		return s
	},
	"ackley": func(x []float64) float64 {
		n := float64(len(x))
		s1, s2 := 0.0, 0.0
		for _, v := range x {
			s1 += v * v
			s2 += math.Cos(2 * math.Pi * v)
		}
		return -20*math.Exp(-0.2*math.Sqrt(s1/n)) - math.Exp(s2/n) + 20 + math.E
	},
}

// problem counts evaluations and logs the best-so-far every logEvery evaluations, with a
// timestamp so curves can be drawn over time (jikken plot --kind curve --x time).
type problem struct {
	f     func([]float64) float64
	evals int
	best  float64
	log   *json.Encoder
}

func (p *problem) eval(x []float64) float64 {
	v := p.f(x)
	p.evals++
	if p.evals == 1 || v < p.best {
		p.best = v
	}
	if p.evals%logEvery == 0 {
		_ = p.log.Encode(map[string]any{"name": "best", "value": p.best, "step": p.evals, "ts": time.Now().UnixMilli()})
	}
	return v
}

func (p *problem) done() bool { return p.evals >= budget }

func randomPoint(r *rand.Rand) []float64 {
	x := make([]float64, dim)
	for i := range x {
		x[i] = r.Float64()*10 - 5
	}
	return x
}

// randomSearch samples uniformly in [-5, 5]^dim.
func randomSearch(p *problem, r *rand.Rand) {
	for !p.done() {
		p.eval(randomPoint(r))
	}
}

// setting reads an algorithm's setting from its param (JIKKEN_PARAM_<NAME>), else def: the
// demo's matrix leaves them at their defaults, examples/search tunes them.
func setting(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv("JIKKEN_PARAM_"+name), 64); err == nil {
		return v
	}
	return def
}

// oneOneES is a (1+1) evolution strategy with the 1/5th success rule: the step grows by
// GROW (1.5) after a success and shrinks by GROW^-1/4 after a failure, from SIGMA (1).
func oneOneES(p *problem, r *rand.Rand) {
	x := randomPoint(r)
	fx := p.eval(x)
	sigma, grow := setting("SIGMA", 1), setting("GROW", 1.5)
	for !p.done() {
		y := make([]float64, dim)
		for i := range y {
			y[i] = x[i] + sigma*r.NormFloat64()
		}
		if fy := p.eval(y); fy <= fx {
			x, fx = y, fy
			sigma *= grow
		} else {
			sigma *= math.Pow(grow, -0.25)
		}
	}
}

// differentialEvolution is DE/rand/1/bin with F (0.5), CR (0.9) and a population of NP (20).
func differentialEvolution(p *problem, r *rand.Rand) {
	np := max(4, int(setting("NP", 20)))
	f, cr := setting("F", 0.5), setting("CR", 0.9)
	pop := make([][]float64, np)
	fit := make([]float64, np)
	for i := range pop {
		pop[i] = randomPoint(r)
		fit[i] = p.eval(pop[i])
	}
	for !p.done() {
		for i := 0; i < np && !p.done(); i++ {
			a, b, c := pick3(r, np, i)
			jr := r.IntN(dim)
			trial := make([]float64, dim)
			for j := range trial {
				if j == jr || r.Float64() < cr {
					trial[j] = pop[a][j] + f*(pop[b][j]-pop[c][j])
				} else {
					trial[j] = pop[i][j]
				}
			}
			if ft := p.eval(trial); ft <= fit[i] {
				pop[i], fit[i] = trial, ft
			}
		}
	}
}

func pick3(r *rand.Rand, n, not int) (int, int, int) {
	var out [3]int
	for k := 0; k < 3; {
		c := r.IntN(n)
		if c == not || (k > 0 && c == out[0]) || (k > 1 && c == out[1]) {
			continue
		}
		out[k] = c
		k++
	}
	return out[0], out[1], out[2]
}

var algorithms = map[string]func(*problem, *rand.Rand){
	"random-search": randomSearch,
	"es":            oneOneES,
	"de":            differentialEvolution,
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "opt:", err)
		os.Exit(1)
	}
}

func run() error {
	algo, fn := os.Getenv("JIKKEN_PARAM_ALGO"), os.Getenv("JIKKEN_PARAM_FN")
	solve, ok := algorithms[algo]
	if !ok {
		return fmt.Errorf("unknown algorithm %q (JIKKEN_PARAM_ALGO)", algo)
	}
	f, ok := functions[fn]
	if !ok {
		return fmt.Errorf("unknown function %q (JIKKEN_PARAM_FN)", fn)
	}
	seed, err := strconv.ParseUint(os.Getenv("JIKKEN_SEED"), 10, 64)
	if err != nil {
		return fmt.Errorf("JIKKEN_SEED: %w", err)
	}
	out := os.Getenv("JIKKEN_OUTPUT_DIR")
	if out == "" {
		out = "."
	}
	mf, err := os.OpenFile(filepath.Join(out, "metrics.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer mf.Close()
	p := &problem{f: f, log: json.NewEncoder(mf)}
	solve(p, rand.New(rand.NewPCG(seed, 0x6a696b6b656e)))
	res, err := json.Marshal(map[string]any{"best": p.best, "evals": p.evals})
	if err != nil {
		return err
	}
	fmt.Printf("%s on %s, seed %d: best %.6g after %d evaluations\n", algo, fn, seed, p.best, p.evals)
	return os.WriteFile(filepath.Join(out, "result.json"), append(res, '\n'), 0o644)
}

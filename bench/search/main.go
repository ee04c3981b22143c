// Command search-bench compares jikken's samplers with Optuna's (bench/search/run.sh drives
// it): `run` minimises benchmark functions with a jikken sampler and prints the best value
// found per seed as CSV; `latency` times TPE suggestions from a large history; `compare`
// pairs two such CSVs by problem and seed and runs the Wilcoxon signed-rank test of jikken's
// stats package.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/internal/threadcpu"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/stats"
)

// functions are examples/optimize's four, for any dimension; every one has its minimum 0
// (at 0, or at 1 for rosenbrock) inside [-5, 5]^d.
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

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: search-bench run|latency|compare [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "latency":
		err = latency(os.Args[2:])
	case "compare":
		err = compare(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q; use run, latency or compare", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "search-bench:", err)
		os.Exit(1)
	}
}

func space(dim int) search.Space {
	ps := make([]search.Param, dim)
	for i := range ps {
		ps[i] = search.Param{Name: fmt.Sprintf("x%02d", i), Low: -5, High: 5}
	}
	return search.Space{Params: ps}
}

// problems parses "sphere:2,rosenbrock:10".
func problems(s string) ([]string, []int, error) {
	var names []string
	var dims []int
	for _, p := range strings.Split(s, ",") {
		name, d, ok := strings.Cut(p, ":")
		dim, err := strconv.Atoi(d)
		if !ok || err != nil || functions[name] == nil {
			return nil, nil, fmt.Errorf("problem %q: want name:dim with a name of %v", p, slices.Sorted(mapsKeys(functions)))
		}
		names, dims = append(names, name), append(dims, dim)
	}
	return names, dims, nil
}

func mapsKeys(m map[string]func([]float64) float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	sampler := fs.String("sampler", "tpe", "jikken sampler")
	probs := fs.String("problems", "sphere:2", "name:dim,...")
	seeds := fs.Int("seeds", 30, "seeds 0..n-1")
	trials := fs.Int("trials", 200, "trials per search")
	opt := fs.String("options", "", "sampler options: key=value,... (numbers, true/false or words)")
	_ = fs.Parse(args)
	options := map[string]any{}
	for _, kv := range strings.Split(*opt, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			options[k] = x
		} else if b, err := strconv.ParseBool(v); err == nil {
			options[k] = b
		} else {
			options[k] = v
		}
	}
	names, dims, err := problems(*probs)
	if err != nil {
		return err
	}
	w := csv.NewWriter(os.Stdout)
	defer w.Flush()
	for i, name := range names {
		f, sp := functions[name], space(dims[i])
		for seed := range *seeds {
			s, err := search.New(*sampler, options)
			if err != nil {
				return err
			}
			var hist []search.Observation
			best := math.Inf(1)
			for n := range *trials {
				ps, err := s.Suggest(search.Request{Space: sp, Objectives: []search.Objective{{Metric: "f"}}, Seed: uint64(seed), Number: n, History: hist})
				if err != nil {
					return err
				}
				x := make([]float64, dims[i])
				for j, p := range sp.Params {
					x[j] = ps[p.Name].(float64)
				}
				v := f(x)
				best = min(best, v)
				hist = append(hist, search.Observation{Number: n, Params: ps, Values: []float64{v}})
			}
			_ = w.Write([]string{"jikken", *sampler, name, strconv.Itoa(dims[i]), strconv.Itoa(seed), strconv.FormatFloat(best, 'g', -1, 64)})
		}
	}
	return nil
}

// latency times TPE suggestions as a runner asks for them with 64 trials running: from a
// history of random points on a sphere, each suggestion joins the running trials and the
// oldest running one finishes into the history, so the history grows by one trial a
// suggestion. It prints "jikken,tpe,dims,history,p50_ms,p99_ms" for wall time and the same
// with jikken-cpu for the CPU time of the suggesting thread, which a loaded machine inflates
// far less (wall time there includes the waits for a core).
func latency(args []string) error {
	fs := flag.NewFlagSet("latency", flag.ExitOnError)
	dims := fs.Int("dims", 10, "params")
	reps := fs.Int("reps", 200, "suggestions timed per history size")
	_ = fs.Parse(args)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, finished := range []int{1000, 10000} {
		sp := space(*dims)
		r := rand.New(rand.NewPCG(1, 2))
		point := func() search.Params {
			p := search.Params{}
			for _, q := range sp.Params {
				p[q.Name] = r.Float64()*10 - 5
			}
			return p
		}
		observe := func(n int, p search.Params) search.Observation {
			x := make([]float64, *dims)
			for j, q := range sp.Params {
				x[j] = p[q.Name].(float64)
			}
			return search.Observation{Number: n, Params: p, Values: []float64{functions["sphere"](x)}}
		}
		req := search.Request{Space: sp, Objectives: []search.Objective{{Metric: "f"}}, Seed: 1}
		for n := range finished {
			req.History = append(req.History, observe(n, point()))
		}
		for range 64 {
			req.Pending = append(req.Pending, point())
		}
		s, _ := search.New("tpe", nil)
		var wall, cpu []float64
		for i := range *reps + 1 {
			req.Number = len(req.History) + len(req.Pending)
			start, startCPU := time.Now(), threadcpu.Now()
			params, err := s.Suggest(req)
			if err != nil {
				return err
			}
			if i > 0 { // the first call fills the cache of decoded rows
				wall = append(wall, float64(time.Since(start).Microseconds())/1e3)
				cpu = append(cpu, float64((threadcpu.Now()-startCPU).Microseconds())/1e3)
			}
			req.History = append(req.History, observe(len(req.History), req.Pending[0]))
			req.Pending = append(req.Pending[1:], params)
		}
		for _, m := range []struct {
			impl string
			lat  []float64
		}{{"jikken", wall}, {"jikken-cpu", cpu}} {
			slices.Sort(m.lat)
			fmt.Printf("%s,tpe,%d,%d,%.3f,%.3f\n", m.impl, *dims, finished, m.lat[len(m.lat)/2], m.lat[len(m.lat)*99/100])
		}
	}
	return nil
}

type key struct{ fn, dim string }

// compare reads two CSVs of run's format (the first jikken's) and prints, per problem, the
// medians and the one-sided signed-rank p-values.
func compare(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	alpha := fs.Float64("alpha", 0.05, "level")
	_ = fs.Parse(args)
	if fs.NArg() != 2 {
		return fmt.Errorf("compare: want two CSV files, jikken's then the reference's")
	}
	a, order, err := readCSV(fs.Arg(0))
	if err != nil {
		return err
	}
	b, _, err := readCSV(fs.Arg(1))
	if err != nil {
		return err
	}
	fmt.Println("| problem | seeds | jikken median | reference median | p (jikken worse) | p (jikken better) | verdict |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, k := range order {
		var x, y []float64
		for seed, v := range a[k] {
			if w, ok := b[k][seed]; ok {
				x, y = append(x, v), append(y, w)
			}
		}
		if len(x) == 0 {
			continue
		}
		worse, err := stats.WilcoxonSignedRank(x, y, stats.Greater)
		if err != nil {
			return fmt.Errorf("%s-%s: %w", k.fn, k.dim, err)
		}
		better, _ := stats.WilcoxonSignedRank(x, y, stats.Less)
		verdict := "not worse"
		if worse.PValue < *alpha {
			verdict = "**worse**"
		} else if better.PValue < *alpha {
			verdict = "better"
		}
		fmt.Printf("| %s-%s | %d | %.4g | %.4g | %.3g | %.3g | %s |\n", k.fn, k.dim, len(x), med(x), med(y), worse.PValue, better.PValue, verdict)
	}
	return nil
}

func readCSV(path string) (map[key]map[string]float64, []key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[key]map[string]float64{}
	var order []key
	for i, r := range recs {
		if len(r) != 6 {
			return nil, nil, fmt.Errorf("%s:%d: want impl,sampler,fn,dim,seed,best", path, i+1)
		}
		v, err := strconv.ParseFloat(r[5], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		k := key{r[2], r[3]}
		if out[k] == nil {
			out[k] = map[string]float64{}
			order = append(order, k)
		}
		out[k][r[4]] = v
	}
	return out, order, nil
}

func med(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

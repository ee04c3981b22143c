package search

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/internal/threadcpu"
)

// benchRequest is a search of dims floats in [-5, 5] with finished trials on a quadratic and
// pending trials at random points.
func benchRequest(dims, finished, pending int) Request {
	var ps []Param
	for i := range dims {
		ps = append(ps, Param{Name: fmt.Sprintf("x%02d", i), Low: -5, High: 5})
	}
	r := rand.New(rand.NewPCG(1, 2))
	point := func() Params {
		p := Params{}
		for _, q := range ps {
			p[q.Name] = r.Float64()*10 - 5
		}
		return p
	}
	req := Request{Space: Space{Params: ps}, Objectives: []Objective{{Metric: "loss"}}, Seed: 1, Number: finished + pending}
	for n := range finished {
		req.History = append(req.History, benchObservation(n, point()))
	}
	for range pending {
		req.Pending = append(req.Pending, point())
	}
	return req
}

// benchObservation is trial n finished with params p: the sum of squares as its value, summed
// in the order of the names so that it does not depend on the map's order.
func benchObservation(n int, p Params) Observation {
	v := 0.0
	for _, name := range slices.Sorted(maps.Keys(p)) {
		v += p[name].(float64) * p[name].(float64)
	}
	return Observation{Number: n, Params: p, Values: []float64{v}}
}

// BenchmarkSuggest measures suggestions as a runner asks for them, with a warm cache (the
// runner passes the same history maps each time): each suggestion joins the running trials and
// the oldest running one finishes into the history, which so grows by one trial a suggestion
// (a fixed history would let the branch predictor learn the model's sorts and flatter the
// figures). It reports the median and 99th percentile latency, in wall time and in the CPU
// time of the suggesting thread (which a loaded machine inflates less).
func BenchmarkSuggest(b *testing.B) {
	for _, name := range []string{"tpe", "tpe-2obj", "cmaes", "nsga2-2obj", "random"} {
		for _, finished := range []int{1000, 10000} {
			for _, dims := range []int{1, 2, 10} {
				// One dim and two pending is the search of bench/search/overhead.sh, -j 2.
				pending := 64
				if dims == 1 {
					if name != "tpe" {
						continue
					}
					pending = 2
				}
				b.Run(fmt.Sprintf("%s/history=%d/pending=%d/dims=%d", name, finished, pending, dims), func(b *testing.B) {
					req := benchRequest(dims, finished, pending)
					sampler, twoObjectives := strings.CutSuffix(name, "-2obj")
					second := func(o *Observation) {
						if twoObjectives {
							o.Values = append(o.Values, 100-o.Values[0]+float64(o.Number%7))
						}
					}
					if twoObjectives {
						// A second objective at odds with the first: a long Pareto front.
						req.Objectives = append(req.Objectives, Objective{Metric: "other"})
						for i := range req.History {
							second(&req.History[i])
						}
					}
					s, err := New(sampler, nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.Suggest(req); err != nil {
						b.Fatal(err)
					}
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					var lat, cpu []time.Duration
					b.ResetTimer()
					for b.Loop() {
						req.Number = len(req.History) + len(req.Pending)
						start, startCPU := time.Now(), threadcpu.Now()
						ps, err := s.Suggest(req)
						if err != nil {
							b.Fatal(err)
						}
						lat, cpu = append(lat, time.Since(start)), append(cpu, threadcpu.Now()-startCPU)
						o := benchObservation(len(req.History), req.Pending[0])
						second(&o)
						req.History, req.Pending = append(req.History, o), append(req.Pending[1:], ps)
					}
					for _, m := range []struct {
						unit string
						d    []time.Duration
					}{{"wall", lat}, {"cpu", cpu}} {
						slices.Sort(m.d)
						b.ReportMetric(float64(m.d[len(m.d)/2].Nanoseconds())/1e3, m.unit+"-p50-µs")
						b.ReportMetric(float64(m.d[len(m.d)*99/100].Nanoseconds())/1e3, m.unit+"-p99-µs")
					}
				})
			}
		}
	}
}

// BenchmarkImportance: 10 params, 10,000 trials, 200 bootstrap resamples.
func BenchmarkImportance(b *testing.B) {
	req := benchRequest(10, 10000, 0)
	for b.Loop() {
		Importance(req.Space, req.Objectives, 0, req.History, 1)
	}
}

// BenchmarkSearchLoop is the search of bench/search/overhead.sh without the runner: 2,000
// trials of TPE on one param in [0, 1] whose loss is the param itself, two pending at a time.
// The history piles up at the edge where the best values are, unlike BenchmarkSuggest's
// random points; it reports the mean time of a suggestion.
func BenchmarkSearchLoop(b *testing.B) {
	for b.Loop() {
		s, err := New("tpe", nil)
		if err != nil {
			b.Fatal(err)
		}
		req := Request{Space: Space{Params: []Param{{Name: "x", Low: 0, High: 1}}}, Objectives: []Objective{{Metric: "loss"}}, Seed: 1}
		for n := range 2000 {
			req.Number = n
			ps, err := s.Suggest(req)
			if err != nil {
				b.Fatal(err)
			}
			req.Pending = append(req.Pending, ps)
			if len(req.Pending) > 2 {
				p := req.Pending[0]
				req.History = append(req.History, Observation{Number: len(req.History), Params: p, Values: []float64{p["x"].(float64)}})
				req.Pending = req.Pending[1:]
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*2000), "µs/suggestion")
}

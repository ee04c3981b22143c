package search

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
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
		p := point()
		v := 0.0
		for _, x := range p {
			v += x.(float64) * x.(float64)
		}
		req.History = append(req.History, Observation{Number: n, Params: p, Values: []float64{v}})
	}
	for range pending {
		req.Pending = append(req.Pending, point())
	}
	return req
}

// BenchmarkSuggest measures one suggestion with a warm cache (the runner passes the same
// history maps each time) and reports the median and 99th percentile latency, in wall time and
// in the CPU time of the suggesting thread (which a loaded machine inflates less).
func BenchmarkSuggest(b *testing.B) {
	for _, name := range []string{"tpe", "tpe-2obj", "cmaes", "nsga2-2obj", "random"} {
		for _, finished := range []int{1000, 10000} {
			for _, dims := range []int{2, 10} {
				b.Run(fmt.Sprintf("%s/history=%d/pending=64/dims=%d", name, finished, dims), func(b *testing.B) {
					req := benchRequest(dims, finished, 64)
					sampler, twoObjectives := strings.CutSuffix(name, "-2obj")
					if twoObjectives {
						// A second objective at odds with the first: a long Pareto front.
						req.Objectives = append(req.Objectives, Objective{Metric: "other"})
						for i := range req.History {
							o := &req.History[i]
							o.Values = append(o.Values, 100-o.Values[0]+float64(i%7))
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
					for i := 0; b.Loop(); i++ {
						req.Number = finished + 64 + i
						start, startCPU := time.Now(), threadCPU()
						if _, err := s.Suggest(req); err != nil {
							b.Fatal(err)
						}
						lat, cpu = append(lat, time.Since(start)), append(cpu, threadCPU()-startCPU)
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

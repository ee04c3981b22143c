package submitter

import "math"

// Expect returns how many pods the process is expected to submit and until when (seconds):
// from Count or Until and the arrival process's mean rate, with gangs counted pod by pod. It
// lets a caller size a run before drawing it. ok is false when the arrival process is not one
// of this package's.
func (p *Process) Expect() (pods, until float64, ok bool) {
	rate, ok := meanRate(p.Arrival)
	if !ok || !(rate > 0) {
		return 0, 0, false
	}
	jobs := float64(p.Count)
	until = p.Until
	switch {
	case p.Count > 0 && p.Until > 0:
		jobs = min(jobs, rate*p.Until)
		until = min(p.Until, jobs/rate)
	case p.Count > 0:
		until = jobs / rate
	default:
		jobs = rate * p.Until
	}
	return jobs * p.Shape.podsPerJob(), until, true
}

// meanRate is an arrival process's mean number of jobs per second.
func meanRate(a Arrival) (float64, bool) {
	switch a := a.(type) {
	case Poisson:
		return a.Rate, true
	case UniformArrivals:
		return 2 / (a.Min + a.Max), true
	case Binomial:
		return float64(a.N) * a.P / a.Interval, true
	case Diurnal:
		return a.Rate * a.meanFactor() * max(a.Burst, 1), true
	}
	return 0, false
}

// podsPerJob is the expected number of pods of a job: jobs larger than MaxGPUsPerPod become
// gangs.
func (s *Shape) podsPerJob() float64 {
	if s.MaxGPUsPerPod <= 0 || s.GPUs == nil {
		return 1
	}
	per := float64(s.MaxGPUsPerPod)
	pods := func(g float64) float64 { return max(1, math.Ceil(math.Round(g)/per)) }
	if c, ok := s.GPUs.(*Choice); ok {
		var m, prev float64
		for i, v := range c.cum {
			m += (v - prev) * pods(c.Values[i])
			prev = v
		}
		return m
	}
	return pods(s.GPUs.Mean())
}

package submitter

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/jikken-dev/jikken/sim"
)

// Arrival is an arrival process: given the current time it returns the next arrival time and
// how many jobs arrive then (bursts and binomial batches arrive together).
type Arrival interface {
	Next(r *rand.Rand, now float64) (at float64, count int)
}

// Poisson arrivals with Rate jobs per second.
type Poisson struct{ Rate float64 }

// Next implements Arrival.
func (a Poisson) Next(r *rand.Rand, now float64) (float64, int) {
	return now + r.ExpFloat64()/a.Rate, 1
}

// UniformArrivals has inter-arrival times uniform on [Min, Max] seconds.
type UniformArrivals struct{ Min, Max float64 }

// Next implements Arrival.
func (a UniformArrivals) Next(r *rand.Rand, now float64) (float64, int) {
	return now + a.Min + r.Float64()*(a.Max-a.Min), 1
}

// Binomial arrivals: every Interval seconds, Binomial(N, P) jobs arrive together.
type Binomial struct {
	Interval float64
	N        int
	P        float64
}

// Next implements Arrival: intervals with no arrival are skipped.
func (a Binomial) Next(r *rand.Rand, now float64) (float64, int) {
	t := now
	for range 1 << 20 {
		t += a.Interval
		k := 0
		for range a.N {
			if r.Float64() < a.P {
				k++
			}
		}
		if k > 0 {
			return t, k
		}
	}
	return math.Inf(1), 0
}

// Diurnal is a non-homogeneous Poisson process whose rate is Rate x Hourly[hour of day]
// (a time-of-day profile; missing hours count 1), drawn by thinning. Bursts, if set, makes
// each arrival a burst of 1 + Geometric jobs with the given mean size (hyper-parameter sweeps
// submitted together).
type Diurnal struct {
	Rate   float64
	Hourly []float64
	Burst  float64
}

func (a Diurnal) factor(t float64) float64 {
	if len(a.Hourly) == 0 {
		return 1
	}
	h := int(math.Mod(t/3600, 24))
	if h >= len(a.Hourly) {
		return 1
	}
	return a.Hourly[h]
}

func (a Diurnal) peak() float64 {
	m := 1.0
	if len(a.Hourly) > 0 {
		m = 0
		for _, v := range a.Hourly {
			m = max(m, v)
		}
		if len(a.Hourly) < 24 {
			m = max(m, 1)
		}
	}
	return m
}

// meanFactor is the average multiplier over a day, for load calibration.
func (a Diurnal) meanFactor() float64 {
	var s float64
	for h := range 24 {
		s += a.factor(float64(h) * 3600)
	}
	return s / 24
}

// Next implements Arrival.
func (a Diurnal) Next(r *rand.Rand, now float64) (float64, int) {
	peak := a.Rate * a.peak()
	t := now
	for range 1 << 24 {
		t += r.ExpFloat64() / peak
		if r.Float64()*peak <= a.Rate*a.factor(t) {
			k := 1
			if a.Burst > 1 {
				// Geometric number of extra jobs with mean Burst-1.
				p := 1 / a.Burst
				for r.Float64() > p {
					k++
				}
			}
			return t, k
		}
	}
	return math.Inf(1), 0
}

// Shape draws what a job asks for.
type Shape struct {
	// GPUs is the GPUs per job; jobs larger than MaxGPUsPerPod become gangs of pods.
	GPUs Dist
	// Duration is seconds; DurationByGPUs overrides it for the given job sizes.
	Duration       Dist
	DurationByGPUs map[int]Dist
	// CPUPerGPU and MemoryPerGPU (bytes) size the pod; CPU and Memory are used for GPU-less jobs.
	CPUPerGPU, MemoryPerGPU float64
	CPU, Memory             float64
	MaxGPUsPerPod           int
	// Users and UserWeights pick the submitting user.
	Users       []string
	UserWeights []float64
	Priority    int32
	users       *Choice
}

func (s *Shape) init() error {
	if s.GPUs == nil {
		s.GPUs = Const{0}
	}
	if s.Duration == nil && len(s.DurationByGPUs) == 0 {
		return fmt.Errorf("shape needs a duration distribution")
	}
	if len(s.Users) == 0 {
		s.Users = []string{"user"}
	}
	idx := make([]float64, len(s.Users))
	for i := range idx {
		idx[i] = float64(i)
	}
	c, err := NewChoice(idx, s.UserWeights)
	if err != nil {
		return fmt.Errorf("users: %w", err)
	}
	s.users = c
	return nil
}

// draw returns the pods of one job.
func (s *Shape) draw(r *rand.Rand, name string, submit float64, user string) []Job {
	g := int(math.Round(s.GPUs.Sample(r)))
	d := s.Duration
	if dd, ok := s.DurationByGPUs[g]; ok {
		d = dd
	}
	dur := math.Round(d.Sample(r)*1000) / 1000
	if user == "" {
		user = s.Users[s.users.Index(r)]
	}
	per, pods := g, 1
	if s.MaxGPUsPerPod > 0 && g > s.MaxGPUsPerPod {
		per = s.MaxGPUsPerPod
		pods = (g + per - 1) / per
	}
	jobs := make([]Job, pods)
	for i := range jobs {
		j := Job{Name: name, User: user, Submit: submit, Duration: dur, GPU: int64(per) * sim.Milli, Priority: s.Priority}
		if per > 0 {
			j.CPU = sim.FromUnits(s.CPUPerGPU * float64(per))
			j.Memory = int64(s.MemoryPerGPU*float64(per)) * sim.Milli
		} else {
			j.CPU = sim.FromUnits(s.CPU)
			j.Memory = int64(s.Memory) * sim.Milli
		}
		if pods > 1 {
			j.Name = fmt.Sprintf("%s-%d", name, i)
			j.Gang, j.GangSize = name, pods
		}
		jobs[i] = j
	}
	return jobs
}

// meanGPUSeconds is the expected GPU-seconds of one job, for load calibration.
func (s *Shape) meanGPUSeconds() float64 {
	if c, ok := s.GPUs.(*Choice); ok && len(s.DurationByGPUs) > 0 {
		var m, prev float64
		for i, v := range c.cum {
			d := s.Duration
			if dd, ok := s.DurationByGPUs[int(c.Values[i])]; ok {
				d = dd
			}
			m += (v - prev) * c.Values[i] * d.Mean()
			prev = v
		}
		return m
	}
	return s.GPUs.Mean() * s.Duration.Mean()
}

// Process submits jobs from an arrival process and a shape until Count jobs or time Until.
// It draws from its own generator, so adding a submitter does not change the others' jobs.
type Process struct {
	Name    string
	Arrival Arrival
	Shape   Shape
	Count   int
	Until   float64
	// User fixes the user (per-user behaviour models); empty draws from Shape.Users.
	User string
	rng  *rand.Rand
	next float64
	n    int
	done bool
}

// NewProcess checks the process and seeds it.
func NewProcess(p Process, rng *rand.Rand) (*Process, error) {
	if p.Arrival == nil {
		return nil, fmt.Errorf("process %s needs an arrival process", p.Name)
	}
	if p.Count <= 0 && p.Until <= 0 {
		return nil, fmt.Errorf("process %s needs a job count or an end time, or it never stops", p.Name)
	}
	if err := p.Shape.init(); err != nil {
		return nil, fmt.Errorf("process %s: %w", p.Name, err)
	}
	if p.Name == "" {
		p.Name = "job"
	}
	p.rng = rng
	p.next = -1
	return &p, nil
}

// Jobs draws every job of the process, for writing a trace.
func (p *Process) Jobs() []Job {
	var out []Job
	for {
		js, ok := p.nextJobs()
		if !ok {
			return out
		}
		out = append(out, js...)
	}
}

func (p *Process) nextJobs() ([]Job, bool) {
	if p.done {
		return nil, false
	}
	if p.next < 0 {
		p.next = 0
	}
	t, k := p.Arrival.Next(p.rng, p.next)
	p.next = t
	if math.IsInf(t, 1) || (p.Until > 0 && t > p.Until) {
		p.done = true
		return nil, false
	}
	var out []Job
	user := p.User
	if user == "" {
		user = p.Shape.Users[p.Shape.users.Index(p.rng)]
	}
	for range k {
		if p.Count > 0 && p.n >= p.Count {
			break
		}
		out = append(out, p.Shape.draw(p.rng, fmt.Sprintf("%s-%d", p.Name, p.n), math.Round(t*1000)/1000, user)...)
		p.n++
	}
	if p.Count > 0 && p.n >= p.Count {
		p.done = true
	}
	return out, len(out) > 0 || !p.done
}

// Stream adapts a job generator to sim.Submitter, submitting each job at its time.
type Stream struct {
	next    func() ([]Job, bool)
	pending []Job
	done    bool
}

// Submitter returns the process as a sim.Submitter.
func (p *Process) Submitter() *Stream { return &Stream{next: p.nextJobs} }

func (s *Stream) fill() {
	for len(s.pending) == 0 && !s.done {
		js, ok := s.next()
		if !ok {
			s.done = true
			return
		}
		s.pending = js
	}
}

// Step implements sim.Submitter.
func (s *Stream) Step(now sim.Time, _ sim.Status) ([]*sim.Pod, sim.Time, error) {
	var pods []*sim.Pod
	for {
		s.fill()
		if len(s.pending) == 0 {
			return pods, sim.Never, nil
		}
		if t := sim.Seconds(s.pending[0].Submit); t > now {
			return pods, t, nil
		}
		for i := range s.pending {
			pods = append(pods, s.pending[i].Pod())
		}
		s.pending = nil
	}
}

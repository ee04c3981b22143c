package policy

import "github.com/jikken-dev/jikken/sim"

// A job is what a policy ranks: a pod on its own, or a gang (the members of a distributed job).
// These helpers compute a job's figures from any of its pods, so every member of a gang gets
// the same rank.

// jobID identifies p's job: the pod's ID, or its gang's first member's.
func jobID(p *sim.Pod) int {
	if g := p.Group(); g != nil {
		return g.Members()[0].ID
	}
	return p.ID
}

// attainedAt is the job's service so far in GPU-milli x seconds, over all its members.
func attainedAt(now sim.Time, p *sim.Pod) float64 {
	g := p.Group()
	if g == nil {
		return p.AttainedAt(now)
	}
	var a float64
	for _, q := range g.Members() {
		a += q.AttainedAt(now)
	}
	return a
}

// ranAt is how long the job has run: the longest of its members' run times.
func ranAt(now sim.Time, p *sim.Pod) sim.Time {
	g := p.Group()
	if g == nil {
		return p.RanAt(now)
	}
	var r sim.Time
	for _, q := range g.Members() {
		r = max(r, q.RanAt(now))
	}
	return r
}

// running reports whether some member of the job runs.
func running(p *sim.Pod) bool {
	g := p.Group()
	if g == nil {
		return p.Phase == sim.Running && !p.Assumed()
	}
	return g.Running() > 0
}

// remaining is the job's work left: the most any unfinished member has left.
func remaining(now sim.Time, p *sim.Pod) sim.Time {
	g := p.Group()
	if g == nil {
		return p.Remaining(now)
	}
	var r sim.Time
	for _, q := range g.Members() {
		if q.Phase != sim.Succeeded && q.Phase != sim.Failed {
			r = max(r, q.Remaining(now))
		}
	}
	return r
}

// duration is the job's length: its longest member's.
func duration(p *sim.Pod) sim.Time {
	g := p.Group()
	if g == nil {
		return p.Duration
	}
	var d sim.Time
	for _, q := range g.Members() {
		d = max(d, q.Duration)
	}
	return d
}

// firstStart is when the job first started, or -1.
func firstStart(p *sim.Pod) sim.Time {
	g := p.Group()
	if g == nil {
		return p.FirstStart
	}
	f := sim.Time(-1)
	for _, q := range g.Members() {
		if q.FirstStart >= 0 && (f < 0 || q.FirstStart < f) {
			f = q.FirstStart
		}
	}
	return f
}

// single reports whether p is placed on its own: not in a gang, or in one that already runs
// its quorum.
func single(p *sim.Pod) bool {
	g := p.Group()
	return g == nil || g.Started()
}

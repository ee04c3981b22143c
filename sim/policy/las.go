package policy

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/jikken-dev/jikken/sim"
)

// las is the state of Tiresias's discretised least-attained-service policies (Gu et al.,
// "Tiresias: A GPU Cluster Manager for Distributed Deep Learning", NSDI 2019):
//
//   - las: 2D-LAS, jobs queued by attained GPU-seconds (GPUs x time run), FIFO within a queue;
//   - las-time: the same by time run alone;
//   - gittins: queues by attained GPU-seconds as las, ordered within a queue by the Gittins
//     index of the attained service under a known distribution of job service.
//
// A job moves to queue i+1 when its attained service reaches threshold i, exactly then: the
// policy asks the engine for a pass at the next crossing. Only a job in a lower queue (or, for
// gittins, with a higher index in the same queue) may suspend another. With StarveLimit, a job
// that has waited StarveLimit times as long as it has run since it was last promoted goes back
// to the top queue with its service count restarted, as Tiresias's STARVELIMIT does.
type las struct {
	th        []float64
	timeBased bool
	gittins   *gittins
	starve    float64
	jobs      map[int]*lasJob
	seenG     []uint64
	stamp     uint64
	// next is the earliest crossing or promotion found by the last call of wake.
	next sim.Time
}

// lasJob is what a promotion reset: the service, run time and waiting time at that moment.
type lasJob struct {
	service  float64
	ran      sim.Time
	waited   sim.Time
	promoted uint32
}

func newLAS(name string, o Options) (*las, error) {
	th := o.Thresholds
	if len(th) == 0 {
		th = []float64{3600, 36000}
	}
	if !slices.IsSorted(th) {
		return nil, fmt.Errorf("%s thresholds %v must be ascending", name, th)
	}
	l := &las{th: th, timeBased: name == "las-time", starve: o.StarveLimit, jobs: map[int]*lasJob{}}
	if name == "gittins" {
		q := o.GittinsQuantum
		if q == 0 {
			q = th[0]
		}
		g, err := newGittins(o.GittinsSamples, q)
		if err != nil {
			return nil, err
		}
		l.gittins = g
	}
	return l, nil
}

// service is the job's attained service: GPU-seconds, or seconds run for las-time.
func (l *las) service(now sim.Time, p *sim.Pod) float64 {
	if l.timeBased {
		return ranAt(now, p).Seconds()
	}
	return attainedAt(now, p) / sim.Milli
}

// since is the service attained since the job's last promotion.
func (l *las) since(now sim.Time, p *sim.Pod) float64 {
	s := l.service(now, p)
	if j := l.jobs[jobID(p)]; j != nil {
		s -= j.service
	}
	return s
}

// level is the queue of a job with service x: how many thresholds it has reached. Service
// summed over runs carries rounding errors, so a threshold reached within a relative 1e-9
// counts as reached: a job whose crossing time passed while it ran stays in the lower queue
// once it stops.
func (l *las) level(x float64) int {
	x += 1e-9 * max(math.Abs(x), 1)
	return sort.Search(len(l.th), func(i int) bool { return l.th[i] > x })
}

// levelAt returns the job's queue at now and when it next moves down (Never if it does not
// while its members keep running). The crossing times are computed from the state at the
// start of the members' runs, not from the service at now: so they do not depend on when
// they are computed, and the level changes exactly at the instant a wake-up is asked for.
func (l *las) levelAt(now sim.Time, p *sim.Pod) (int, sim.Time) {
	base, ranBase := 0.0, sim.Time(0)
	if j := l.jobs[jobID(p)]; j != nil {
		base, ranBase = j.service, j.ran
	}
	members := []*sim.Pod{p}
	if g := p.Group(); g != nil {
		members = g.Members()
	}
	if l.timeBased {
		return l.levelByTime(now, members, ranBase)
	}
	// Service in GPU-milli x seconds is sum(attained) + sum over running members of
	// rate x (t - start); t0 anchors the starts so the sums stay small.
	var attained, rate, lead float64
	t0 := sim.Never
	for _, q := range members {
		attained += q.Attained
		if q.Phase == sim.Running && !q.Assumed() {
			t0 = min(t0, q.Start)
		}
	}
	for _, q := range members {
		if q.Phase == sim.Running && !q.Assumed() {
			r := float64(q.Requests[sim.GPUIndex])
			rate += r
			lead += r * float64(q.Start-t0)
		}
	}
	lv := l.level(attained/sim.Milli - base)
	if rate == 0 {
		return lv, sim.Never
	}
	for ; lv < len(l.th); lv++ {
		need := ((l.th[lv]+base)*sim.Milli - attained) * float64(sim.Second)
		t := t0 + sim.Time(math.Ceil((need+lead)/rate))
		if t > now {
			return lv, t
		}
	}
	return lv, sim.Never
}

// levelByTime is levelAt for las-time, in exact integer time: the job's run time is its
// longest-running member's, counted from base, its run time at its last promotion.
func (l *las) levelByTime(now sim.Time, members []*sim.Pod, base sim.Time) (int, sim.Time) {
	var done sim.Time
	for _, q := range members {
		done = max(done, q.Ran)
	}
	limit := func(i int) sim.Time { return base + sim.Time(math.Ceil(l.th[i]*float64(sim.Second))) }
	lv := 0
	for lv < len(l.th) && done >= limit(lv) {
		lv++
	}
	for ; lv < len(l.th); lv++ {
		limit := limit(lv)
		next := sim.Never
		for _, q := range members {
			if q.Phase == sim.Running && !q.Assumed() {
				next = min(next, q.Start+limit-q.Ran)
			}
		}
		if next > now {
			return lv, next
		}
	}
	return lv, sim.Never
}

func (l *las) key(now sim.Time, p *sim.Pod) rank {
	lv, _ := l.levelAt(now, p)
	r := rank{float64(lv), 0}
	if l.gittins != nil {
		r.b = -l.gittins.index(l.since(now, p))
	}
	return r
}

func (l *las) victimKey(now sim.Time, p *sim.Pod) rank {
	if l.gittins != nil {
		return l.key(now, p)
	}
	lv, _ := l.levelAt(now, p)
	return rank{float64(lv), 0}
}

func (l *las) promotions(p *sim.Pod) uint32 {
	if j := l.jobs[jobID(p)]; j != nil {
		return j.promoted
	}
	return 0
}

// firstOfJob reports whether p is the first pod of its job seen since the last call of
// l.newScan, so each gang is visited once.
func (l *las) firstOfJob(p *sim.Pod) bool {
	g := p.Group()
	if g == nil {
		return true
	}
	for len(l.seenG) <= g.ID() {
		l.seenG = append(l.seenG, 0)
	}
	if l.seenG[g.ID()] == l.stamp {
		return false
	}
	l.seenG[g.ID()] = l.stamp
	return true
}

// starvation returns, for a waiting job below the top queue that has run since its last
// promotion, how long it has run and how long it has waited since then.
func (l *las) starvation(now sim.Time, p *sim.Pod) (ran, waited sim.Time, ok bool) {
	fs := firstStart(p)
	if lv, _ := l.levelAt(now, p); fs < 0 || lv == 0 {
		return 0, 0, false
	}
	total := ranAt(now, p)
	ran, waited = total, now-fs-total
	if j := l.jobs[jobID(p)]; j != nil {
		ran -= j.ran
		waited -= j.waited
	}
	return ran, waited, ran > 0
}

// promote moves starved waiting jobs back to the top queue.
func (l *las) promote(c *sim.Cluster, now sim.Time) {
	if l.starve == 0 {
		return
	}
	l.stamp++
	for _, p := range c.Pending() {
		if !l.firstOfJob(p) || running(p) {
			continue
		}
		ran, waited, ok := l.starvation(now, p)
		if !ok || float64(waited) < l.starve*float64(ran) {
			continue
		}
		id := jobID(p)
		j := l.jobs[id]
		if j == nil {
			j = &lasJob{}
			l.jobs[id] = j
		}
		total := ranAt(now, p)
		j.service, j.ran, j.waited = l.service(now, p), total, now-firstStart(p)-total
		j.promoted++
	}
}

// wake asks the engine for a pass at the next instant a running job crosses a threshold or a
// waiting job is due for promotion.
func (l *las) wake(c *sim.Cluster, now sim.Time) {
	next := sim.Never
	l.stamp++
	for _, n := range c.Nodes() {
		for _, p := range n.Pods() {
			if p.Assumed() || !l.firstOfJob(p) {
				continue
			}
			_, t := l.levelAt(now, p)
			next = min(next, t)
		}
	}
	if l.starve > 0 {
		for _, p := range c.Pending() {
			if !l.firstOfJob(p) || running(p) {
				continue
			}
			if ran, waited, ok := l.starvation(now, p); ok {
				next = min(next, now+max(sim.Time(math.Ceil(l.starve*float64(ran)))-waited, 1))
			}
		}
	}
	l.next = next
	if next != sim.Never {
		c.WakeAt(next)
	}
}

// gittins computes the Gittins index of attained service a under an empirical distribution
// of job service S with quantum q: the probability that a job finishes within the next q of
// service, given it has attained a, per unit of service it is expected to use until then,
//
//	G(a) = P(S - a <= q | S > a) / E[min(S - a, q) | S > a],
//
// so the job most likely to finish soon per unit of service goes first (Tiresias, section 3.2).
type gittins struct {
	s      []float64
	prefix []float64
	q      float64
}

func newGittins(samples []float64, q float64) (*gittins, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("gittins needs the distribution of job service (GPU-seconds per job); give gittinsSamples or a workload whose jobs are known up front")
	}
	if !(q > 0) || math.IsInf(q, 0) {
		return nil, fmt.Errorf("gittins quantum %v must be a positive number of GPU-seconds", q)
	}
	s := slices.Clone(samples)
	for _, v := range s {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("gittins sample %v must be a finite non-negative number of GPU-seconds", v)
		}
	}
	slices.Sort(s)
	prefix := make([]float64, len(s)+1)
	for i, v := range s {
		prefix[i+1] = prefix[i] + v
	}
	return &gittins{s: s, prefix: prefix, q: q}, nil
}

// index returns G(a); 0 once a exceeds every sample.
func (g *gittins) index(a float64) float64 {
	lo := sort.Search(len(g.s), func(i int) bool { return g.s[i] > a })
	hi := sort.Search(len(g.s), func(i int) bool { return g.s[i] > a+g.q })
	if lo == len(g.s) {
		return 0
	}
	done := float64(hi - lo)
	// Service until the job finishes or the quantum ends, summed over the survivors.
	used := (g.prefix[hi] - g.prefix[lo]) - a*done + g.q*float64(len(g.s)-hi)
	if used <= 0 {
		return 0
	}
	return done / used
}

package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/jikken-dev/jikken/sim"
)

// rank is a job's place in a policy's order, compared lexicographically; ties go to the earlier
// submission.
type rank struct{ a, b float64 }

func (x rank) cmp(y rank) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) }

// ordered starts jobs by ascending rank without blocking (sjf: duration; srtf: remaining time;
// las and its variants: queue level). With preempt, a job that fits nowhere suspends running
// jobs with a strictly larger victim rank: the least important first until it fits, then,
// most important first, every victim whose suspension turns out not to be needed is reprieved
// (as kube-scheduler's preemption does). A gang is one job: it suspends and is suspended as a
// whole. Suspended jobs keep their progress (they are assumed to checkpoint), as in SRTF and
// Tiresias.
type ordered struct {
	base
	key func(now sim.Time, p *sim.Pod) rank
	// victimKey, if set, replaces key when deciding who may suspend whom.
	victimKey func(now sim.Time, p *sim.Pod) rank
	// las, if set, keeps the queue levels' state (promotions, wake-ups).
	las     *las
	preempt bool
	queue   []*sim.Pod
	sorted  []keyed
	merged  []keyed
	fresh   []keyed
	seen    map[*sim.Pod]uint64
	stamp   uint64
	// suspendMisses and maxRunning prune suspension searches within a pass (see suspendFor).
	suspendMisses []sim.Resources
	maxRunning    rank
	anyRunning    bool
	maxValid      bool
	preempted     []uint64
	// scratch space of suspendFor.
	need    []*sim.Pod
	free    []sim.Resources
	victims []victim
	vpods   []*sim.Pod
	seenG   []uint64
	assign  []*sim.Node
}

type keyed struct {
	k rank
	p *sim.Pod
	// fp is the state the key was computed from; a pending pod's key depends on nothing else,
	// so the key stays valid while fp does not change.
	fp fingerprint
}

type fingerprint struct {
	progress sim.Time
	ran      sim.Time
	attained float64
	gang     uint64
	promoted uint32
}

func (o *ordered) fingerprint(p *sim.Pod) fingerprint {
	f := fingerprint{progress: p.Progress, ran: p.Ran, attained: p.Attained}
	if g := p.Group(); g != nil {
		f.gang = g.Version()
	}
	if o.las != nil {
		f.promoted = o.las.promotions(p)
	}
	return f
}

func keyedLess(a, b keyed) int {
	return cmp.Or(a.k.cmp(b.k), submitOrder(a.p, b.p))
}

// sortQueue fills o.queue with the pending pods in key order. A pending pod's key does not
// change while it waits, so the order of the last pass is kept and only pods that are new
// to the queue (or came back to it) are sorted and merged in: O(queue) per pass instead of a
// full sort, which matters when long queues meet frequent passes (las ticks).
func (o *ordered) sortQueue(c *sim.Cluster, now sim.Time) {
	o.stamp++
	if o.exhaustive {
		clear(o.sorted)
		o.sorted = o.sorted[:0]
	}
	if o.seen == nil {
		o.seen = map[*sim.Pod]uint64{}
	}
	kept := o.sorted[:0]
	for _, kp := range o.sorted {
		p := kp.p
		if p.Phase == sim.Pending && !p.Assumed() && o.fingerprint(p) == kp.fp {
			kept = append(kept, kp)
			o.seen[p] = o.stamp
		}
	}
	clear(o.sorted[len(kept):])
	o.fresh = o.fresh[:0]
	for _, p := range c.Pending() {
		if o.seen[p] != o.stamp && !p.Assumed() {
			o.fresh = append(o.fresh, keyed{o.key(now, p), p, o.fingerprint(p)})
		}
	}
	slices.SortFunc(o.fresh, keyedLess)
	// Merge the kept order and the fresh pods into o.merged, then swap the buffers.
	m := o.merged[:0]
	i, j := 0, 0
	for i < len(kept) && j < len(o.fresh) {
		if keyedLess(o.fresh[j], kept[i]) < 0 {
			m = append(m, o.fresh[j])
			j++
		} else {
			m = append(m, kept[i])
			i++
		}
	}
	m = append(append(m, kept[i:]...), o.fresh[j:]...)
	o.merged, o.sorted = kept[:0], m
	o.queue = o.queue[:0]
	for _, kp := range o.sorted {
		o.queue = append(o.queue, kp.p)
	}
	// Forget pods that left the queue, so the map does not grow with every pod ever seen.
	if len(o.seen) > 4*len(o.sorted)+1024 {
		clear(o.seen)
		for _, kp := range o.sorted {
			o.seen[kp.p] = o.stamp
		}
	}
}

// Schedule implements sim.Scheduler. A pass where nothing changed since the last one (a tick)
// is skipped when time alone cannot change a decision: sjf keys are fixed, srtf's running jobs
// only get shorter (so fewer become victims), and las levels change only at the crossings and
// promotions it asked to be woken for. Gittins indices move with service, so gittins always
// runs.
func (o *ordered) Schedule(c *sim.Cluster) error {
	now := c.Now()
	if o.unchanged(c) && (o.las == nil || (o.las.gittins == nil && now < o.las.next)) {
		if o.las != nil && o.las.next != sim.Never {
			// The wake-up asked for may have been displaced by an earlier one: ask again.
			c.WakeAt(o.las.next)
		}
		return nil
	}
	o.settledOK = false
	o.newPass()
	if o.las != nil {
		o.las.promote(c, now)
	}
	o.sortQueue(c, now)
	defer clear(o.queue)
	o.suspendMisses = o.suspendMisses[:0]
	o.maxValid = false
	suspendedAny := false
	for _, p := range o.queue {
		if p.Phase != sim.Pending || p.Assumed() {
			continue
		}
		ok, err := o.try(c, p, nil)
		if err != nil {
			return err
		}
		if ok || !o.preempt || o.overQuota(c, p) {
			continue
		}
		if !single(p) && !o.firstTry(&o.preempted, p.Group()) {
			continue
		}
		suspended, err := o.suspendFor(c, p)
		if err != nil {
			return err
		}
		if suspended {
			suspendedAny = true
			// Victims freed capacity: what failed before may fit now.
			o.newPass()
			o.suspendMisses = o.suspendMisses[:0]
			o.maxValid = false
		}
	}
	if o.las != nil {
		o.las.wake(c, now)
	}
	if !suspendedAny {
		// A pass that suspended jobs is followed by another at once, for the jobs it requeued.
		o.settle(c)
	}
	return nil
}

func (o *ordered) victimKeyOf(now sim.Time, p *sim.Pod) rank {
	if o.victimKey != nil {
		return o.victimKey(now, p)
	}
	return o.key(now, p)
}

// victim is a running job that may be suspended: a pod, or every running member of a gang
// (o.vpods[lo:hi]).
type victim struct {
	k, full rank
	id      int
	lo, hi  int
	spared  bool
}

// suspendFor suspends running jobs with a larger victim rank so p (with its gang, if it has
// not started) can start, and starts it. Jobs are tried in ascending rank order, so the
// victims available only shrink along the queue: a pod no smaller than one that found no
// room cannot find any either, and no job ranked at or above every running job can suspend
// anything.
func (o *ordered) suspendFor(c *sim.Cluster, p *sim.Pod) (bool, error) {
	now := c.Now()
	key := o.victimKeyOf(now, p)
	if !o.maxValid {
		o.anyRunning = false
		for _, n := range c.Nodes() {
			for _, q := range n.Pods() {
				if q.Assumed() {
					continue
				}
				if k := o.victimKeyOf(now, q); !o.anyRunning || k.cmp(o.maxRunning) > 0 {
					o.maxRunning, o.anyRunning = k, true
				}
			}
		}
		o.maxValid = true
	}
	if !o.anyRunning || key.cmp(o.maxRunning) >= 0 {
		return false, nil
	}
	if !o.preemptor(p) {
		return false, nil
	}
	if len(o.need) == 1 && unconstrained(p) {
		for _, r := range o.suspendMisses {
			if r.Fits(&p.Requests) {
				return false, nil
			}
		}
	}
	o.free = o.free[:0]
	for _, n := range c.Nodes() {
		o.free = append(o.free, n.Free())
	}
	o.collectVictims(now, c, key)
	fit := -1
	for i := range o.victims {
		o.release(i, true)
		if o.fits(c) {
			fit = i
			break
		}
	}
	if fit < 0 {
		if len(o.need) == 1 && unconstrained(p) {
			o.suspendMisses = append(o.suspendMisses, p.Requests)
		}
		return false, nil
	}
	// Reprieve, most important first, every victim the job does not need gone.
	for i := fit; i >= 0; i-- {
		o.release(i, false)
		if o.fits(c) {
			o.victims[i].spared = true
		} else {
			o.release(i, true)
		}
	}
	for _, v := range o.victims[:fit+1] {
		if v.spared {
			continue
		}
		for _, q := range o.vpods[v.lo:v.hi] {
			// Suspending one member may already have stopped the rest of its gang.
			if q.Phase == sim.Running {
				if err := c.Preempt(q, true); err != nil {
					return false, err
				}
			}
		}
	}
	if single(p) {
		n := o.o.Placement.Place(c, p, nil)
		if n == nil {
			return false, fmt.Errorf("policy: pod %s fits nowhere after suspending its victims (internal error)", p.Name)
		}
		return true, c.Bind(p, n)
	}
	if !o.fits(c) {
		return false, fmt.Errorf("policy: gang %s does not fit after suspending its victims (internal error)", p.Gang)
	}
	for i, q := range o.need {
		if err := c.Assume(q, o.assign[i]); err != nil {
			return false, err
		}
	}
	for _, q := range p.Group().Members() {
		if q.Held() {
			if err := c.Bind(q, q.Node); err != nil {
				return false, err
			}
		}
	}
	for _, q := range o.need {
		if err := c.Bind(q, q.Node); err != nil {
			return false, err
		}
	}
	return true, nil
}

// preemptor fills o.need with the pods that must start for p's job to run: p alone, or the
// pending members of its gang needed to reach the gang's minimum beside the members already
// reserved. It reports false when the gang cannot reach its minimum yet.
func (o *ordered) preemptor(p *sim.Pod) bool {
	o.need = o.need[:0]
	if single(p) {
		o.need = append(o.need, p)
		return true
	}
	g := p.Group()
	k := g.Min() - g.Running() - g.Held()
	for _, q := range g.Members() {
		if len(o.need) < k && q.Phase == sim.Pending && !q.Assumed() {
			o.need = append(o.need, q)
		}
	}
	return g.Ready() && len(o.need) == k
}

// collectVictims lists the running jobs ranked strictly below key, least important first.
func (o *ordered) collectVictims(now sim.Time, c *sim.Cluster, key rank) {
	o.stamp++
	o.victims, o.vpods = o.victims[:0], o.vpods[:0]
	for _, n := range c.Nodes() {
		for _, q := range n.Pods() {
			if q.Phase != sim.Running || q.Assumed() {
				continue
			}
			g := q.Group()
			if g != nil {
				for len(o.seenG) <= g.ID() {
					o.seenG = append(o.seenG, 0)
				}
				if o.seenG[g.ID()] == o.stamp {
					continue
				}
				o.seenG[g.ID()] = o.stamp
			}
			k := o.victimKeyOf(now, q)
			if k.cmp(key) <= 0 {
				continue
			}
			v := victim{k: k, full: o.key(now, q), id: jobID(q), lo: len(o.vpods)}
			if g == nil {
				o.vpods = append(o.vpods, q)
			} else {
				for _, m := range g.Members() {
					if m.Phase == sim.Running && !m.Assumed() {
						o.vpods = append(o.vpods, m)
					}
				}
			}
			v.hi = len(o.vpods)
			o.victims = append(o.victims, v)
		}
	}
	slices.SortFunc(o.victims, func(a, b victim) int {
		return cmp.Or(b.full.cmp(a.full), cmp.Compare(b.id, a.id))
	})
}

// release adds (or, with gone false, takes back) a victim's requests to the scratch free
// capacity of its nodes.
func (o *ordered) release(i int, gone bool) {
	for _, q := range o.vpods[o.victims[i].lo:o.victims[i].hi] {
		f := &o.free[q.Node.ID]
		if gone {
			f.Add(&q.Requests)
		} else {
			f.Sub(&q.Requests)
		}
	}
}

// fits reports whether every pod of o.need fits the scratch free capacity, placing them one
// by one by best fit of the key resource, and leaves the nodes in o.assign.
func (o *ordered) fits(c *sim.Cluster) bool {
	o.assign = o.assign[:0]
	nodes := c.Nodes()
	ok := true
	for _, p := range o.need {
		var best *sim.Node
		var bestLeft int64
		k := keyIndex(p)
		for _, n := range nodes {
			f := &o.free[n.ID]
			if !n.Accepts(p) || !p.Requests.Fits(f) || !p.ToleratesNode(n) || !p.MatchesNode(n) {
				continue
			}
			if left := f[k] - p.Requests[k]; best == nil || left < bestLeft {
				best, bestLeft = n, left
			}
		}
		if best == nil {
			ok = false
			break
		}
		o.free[best.ID].Sub(&p.Requests)
		o.assign = append(o.assign, best)
	}
	for i, n := range o.assign {
		o.free[n.ID].Add(&o.need[i].Requests)
	}
	return ok
}

package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/jikken-dev/jikken/sim"
)

// Options are shared by every policy.
type Options struct {
	// Placement picks nodes; nil means pack.
	Placement Placement
	// Quotas caps what each user may hold at once (throttling): a pod that would take its user
	// over the quota in any resource waits. Users without an entry are not limited.
	Quotas map[string]sim.Resources
	// Thresholds are the queue limits of las and gittins in GPU-seconds, and of las-time in
	// seconds (default 3,600 and 36,000).
	Thresholds []float64
	// StarveLimit, if positive, is Tiresias's starvation guard for las, las-time and gittins: a
	// job that has waited, since it last started at the top queue, StarveLimit times as long as
	// it has run there is promoted back to the top queue.
	StarveLimit float64
	// GittinsSamples is the distribution of job service (GPU-seconds per job) the gittins
	// policy ranks by; GittinsQuantum is its service quantum in GPU-seconds (default the first
	// threshold).
	GittinsSamples []float64
	GittinsQuantum float64
}

// Names of the stock policies.
var Names = []string{"fifo", "fifo-backfill", "sjf", "srtf", "las", "las-time", "gittins", "drf"}

// New returns the named policy.
func New(name string, o Options) (sim.Scheduler, error) {
	if o.Placement == nil {
		o.Placement = scored{pack}
	}
	if o.StarveLimit < 0 || math.IsNaN(o.StarveLimit) || math.IsInf(o.StarveLimit, 0) {
		return nil, fmt.Errorf("starvation limit %v must be a finite non-negative factor (0 turns the guard off)", o.StarveLimit)
	}
	b := base{o: o}
	switch name {
	case "fifo":
		return &fifo{base: b}, nil
	case "fifo-backfill":
		return &fifo{base: b, backfill: true}, nil
	case "sjf":
		return &ordered{base: b, key: func(_ sim.Time, p *sim.Pod) rank { return rank{float64(duration(p)), 0} }}, nil
	case "srtf":
		return &ordered{base: b, preempt: true, key: func(now sim.Time, p *sim.Pod) rank { return rank{float64(remaining(now, p)), 0} }}, nil
	case "las", "las-time", "gittins":
		l, err := newLAS(name, o)
		if err != nil {
			return nil, err
		}
		return &ordered{base: b, preempt: true, las: l, key: l.key, victimKey: l.victimKey}, nil
	case "drf":
		return &drf{base: b}, nil
	}
	return nil, fmt.Errorf("policy %q is unknown; use one of %v", name, Names)
}

type base struct {
	o Options
	// misses remembers, within one pass, the requests of unconstrained pods that fit nowhere
	// (per excluded node). Nodes only fill up during a pass, so a pod asking for at least as
	// much of everything cannot fit either; long queues are then scanned in O(distinct sizes)
	// placements instead of one per pod.
	misses []miss
	// pass numbers the passes (and the restarts of a pass after a preemption); tried[g] is the
	// pass in which gang g was last attempted, so a gang is tried once per pass, not once per
	// member.
	pass   uint64
	tried  []uint64
	placer gangPlacer
	// settled is the cluster version at the end of the last pass, which left nothing more to
	// do; settledOK says it is valid.
	settled   uint64
	settledOK bool
	// exhaustive turns the shortcuts off (no skipped passes; ordered policies sort their whole
	// queue every pass), for tests that compare them with the full computation.
	exhaustive bool
}

// unchanged reports whether nothing has changed since the last pass ended: for a policy whose
// decisions depend only on the cluster's state (and on time only in ways that cannot make a
// new placement or suspension possible), that pass would decide nothing.
func (b *base) unchanged(c *sim.Cluster) bool {
	return !b.exhaustive && b.settledOK && c.Version() == b.settled
}

// settle records the cluster version at the end of a pass.
func (b *base) settle(c *sim.Cluster) { b.settled, b.settledOK = c.Version(), true }

type miss struct {
	req  sim.Resources
	skip *sim.Node
}

// newPass forgets the misses and gang attempts of the previous pass.
func (b *base) newPass() {
	b.misses = b.misses[:0]
	b.pass++
}

// firstTry reports whether gang g is attempted for the first time in this pass, and marks it.
func (b *base) firstTry(stamps *[]uint64, g *sim.Gang) bool {
	for len(*stamps) <= g.ID() {
		*stamps = append(*stamps, 0)
	}
	if (*stamps)[g.ID()] == b.pass {
		return false
	}
	(*stamps)[g.ID()] = b.pass
	return true
}

func unconstrained(p *sim.Pod) bool {
	return !p.Constrained() && len(p.Tolerations) == 0
}

func (b *base) knownMiss(p *sim.Pod, skip *sim.Node) bool {
	if !unconstrained(p) {
		return false
	}
	for i := range b.misses {
		if m := &b.misses[i]; m.skip == skip && m.req.Fits(&p.Requests) {
			return true
		}
	}
	return false
}

func (b *base) overQuota(c *sim.Cluster, p *sim.Pod) bool {
	q, ok := b.o.Quotas[p.User]
	if !ok {
		return false
	}
	u := c.UserAllocated(p.User)
	u.Add(&p.Requests)
	u[sim.PodsIndex] = 0
	return !u.Fits(&q)
}

// try places p (or, for a gang that has not started, the whole gang through
// Cluster.ScheduleGang) and reports whether p started. skip excludes a node from placement.
func (b *base) try(c *sim.Cluster, p *sim.Pod, skip *sim.Node) (bool, error) {
	if b.overQuota(c, p) {
		return false, nil
	}
	if single(p) {
		if b.knownMiss(p, skip) {
			return false, nil
		}
		n := b.o.Placement.Place(c, p, skip)
		if n == nil {
			if unconstrained(p) {
				b.misses = append(b.misses, miss{req: p.Requests, skip: skip})
			}
			return false, nil
		}
		return true, c.Bind(p, n)
	}
	if !b.firstTry(&b.tried, p.Group()) {
		return false, nil
	}
	b.placer = gangPlacer{b: b, skip: skip}
	return c.ScheduleGang(p, &b.placer)
}

// gangPlacer places gang members with the policy's placement and quotas.
type gangPlacer struct {
	b    *base
	skip *sim.Node
}

func (g *gangPlacer) Reserve(c *sim.Cluster, p *sim.Pod) (bool, error) {
	if g.b.overQuota(c, p) {
		return false, nil
	}
	n := g.b.o.Placement.Place(c, p, g.skip)
	if n == nil {
		return false, nil
	}
	return true, c.Assume(p, n)
}

func (g *gangPlacer) Unreserve(c *sim.Cluster, p *sim.Pod) { c.Forget(p) }

func (g *gangPlacer) Bind(c *sim.Cluster, p *sim.Pod) error { return c.Bind(p, p.Node) }

// fifo starts pods strictly in submission order and stops at the first that does not fit
// (head-of-line blocking). With backfill it is EASY backfilling: the head gets a reservation at
// the earliest time enough pods on one node will have ended (from their oracle remaining
// times), and later pods may jump ahead if they fit now and either end before that time or
// run on another node.
type fifo struct {
	base
	backfill bool
	queue    []*sim.Pod
}

func submitOrder(a, b *sim.Pod) int {
	if c := cmp.Compare(a.Submit, b.Submit); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Schedule implements sim.Scheduler. A pass at a tick with nothing new decides nothing: a
// backfill candidate's end only moves later as time passes, while the reservation stays put.
func (f *fifo) Schedule(c *sim.Cluster) error {
	if f.unchanged(c) {
		return nil
	}
	defer f.settle(c)
	f.newPass()
	f.queue = append(f.queue[:0], c.Pending()...)
	if !slices.IsSortedFunc(f.queue, submitOrder) {
		slices.SortStableFunc(f.queue, submitOrder)
	}
	defer clear(f.queue)
	for i, p := range f.queue {
		if p.Phase != sim.Pending || p.Assumed() {
			continue
		}
		ok, err := f.try(c, p, nil)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if !f.backfill {
			return nil
		}
		return f.backfillAfter(c, p, f.queue[i+1:])
	}
	return nil
}

func (f *fifo) backfillAfter(c *sim.Cluster, head *sim.Pod, rest []*sim.Pod) error {
	shadow, shadowNode := reservation(c, head)
	now := c.Now()
	for _, p := range rest {
		if p.Phase != sim.Pending || p.Assumed() || !single(p) {
			continue
		}
		var skip *sim.Node
		if now+p.Remaining(now) > shadow {
			skip = shadowNode
			if skip == nil {
				continue
			}
		}
		if _, err := f.try(c, p, skip); err != nil {
			return err
		}
	}
	return nil
}

// reservation returns when and where the head pod could start if nothing else started: the
// earliest time some feasible node frees enough as its running pods end.
func reservation(c *sim.Cluster, head *sim.Pod) (sim.Time, *sim.Node) {
	now := c.Now()
	best, bestNode := sim.Never, (*sim.Node)(nil)
	var ends []*sim.Pod
	for _, n := range c.Nodes() {
		if !n.Accepts(head) || !head.ToleratesNode(n) || !head.MatchesNode(n) || !head.Requests.Fits(&n.Capacity) {
			continue
		}
		free := n.Free()
		if head.Requests.Fits(&free) {
			return now, n
		}
		ends = append(ends[:0], n.Pods()...)
		slices.SortFunc(ends, func(a, b *sim.Pod) int {
			return cmp.Or(cmp.Compare(a.Remaining(now), b.Remaining(now)), cmp.Compare(a.ID, b.ID))
		})
		for _, q := range ends {
			free.Add(&q.Requests)
			if t := now + q.Remaining(now); head.Requests.Fits(&free) {
				if t < best {
					best, bestNode = t, n
				}
				break
			}
		}
	}
	return best, bestNode
}

// drf is Dominant Resource Fairness: repeatedly offer the cluster to the user with the smallest
// dominant share (largest fraction of any resource they hold), starting that user's oldest pod
// that fits. A user whose remaining pods fit nowhere drops out for the pass.
type drf struct {
	base
	users  []string
	queues map[string][]*sim.Pod
}

// Schedule implements sim.Scheduler; shares change only with the cluster's state.
func (d *drf) Schedule(c *sim.Cluster) error {
	if d.unchanged(c) {
		return nil
	}
	defer d.settle(c)
	d.newPass()
	if d.queues == nil {
		d.queues = map[string][]*sim.Pod{}
	}
	for _, u := range d.users {
		clear(d.queues[u])
		d.queues[u] = d.queues[u][:0]
	}
	d.users = d.users[:0]
	pending := c.Pending()
	for _, p := range pending {
		if len(d.queues[p.User]) == 0 {
			d.users = append(d.users, p.User)
		}
		d.queues[p.User] = append(d.queues[p.User], p)
	}
	slices.Sort(d.users)
	for _, u := range d.users {
		slices.SortStableFunc(d.queues[u], submitOrder)
	}
	capacity := c.Capacity()
	share := func(u string) float64 {
		a := c.UserAllocated(u)
		var s float64
		for i := range a {
			if i != sim.PodsIndex && capacity[i] > 0 {
				s = max(s, float64(a[i])/float64(capacity[i]))
			}
		}
		return s
	}
	active := slices.Clone(d.users)
	for len(active) > 0 {
		bi := 0
		bs := share(active[0])
		for i, u := range active[1:] {
			if s := share(u); s < bs {
				bi, bs = i+1, s
			}
		}
		u := active[bi]
		q := d.queues[u]
		started := false
		for len(q) > 0 {
			p := q[0]
			q = q[1:]
			if p.Phase != sim.Pending || p.Assumed() {
				continue
			}
			ok, err := d.try(c, p, nil)
			if err != nil {
				return err
			}
			if ok {
				started = true
				break
			}
		}
		d.queues[u] = q
		if !started {
			active = slices.Delete(active, bi, bi+1)
		}
	}
	return nil
}

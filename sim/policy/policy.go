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
	// Thresholds are the attained-service queue limits of las, in GPU-seconds.
	Thresholds []float64
}

// Names of the stock policies.
var Names = []string{"fifo", "fifo-backfill", "sjf", "srtf", "las", "drf"}

// New returns the named policy.
func New(name string, o Options) (sim.Scheduler, error) {
	if o.Placement == nil {
		o.Placement = scored{pack}
	}
	b := base{o: o}
	switch name {
	case "fifo":
		return &fifo{base: b}, nil
	case "fifo-backfill":
		return &fifo{base: b, backfill: true}, nil
	case "sjf":
		return &ordered{base: b, key: func(_ sim.Time, p *sim.Pod) float64 { return float64(p.Duration) }}, nil
	case "srtf":
		return &ordered{base: b, preempt: true, key: func(now sim.Time, p *sim.Pod) float64 { return float64(p.Remaining(now)) }}, nil
	case "las":
		th := o.Thresholds
		if len(th) == 0 {
			th = []float64{3600, 36000}
		}
		if !slices.IsSorted(th) {
			return nil, fmt.Errorf("las thresholds %v must be ascending", th)
		}
		level := func(now sim.Time, p *sim.Pod) float64 {
			l, _ := slices.BinarySearch(th, p.AttainedAt(now)/sim.Milli)
			return float64(l)
		}
		// Discretised 2D-LAS: ordered by queue level of attained GPU-seconds, FIFO within a
		// level; only a pod in a lower level may suspend another, so pods of one level do
		// not take turns.
		return &ordered{base: b, preempt: true, victimKey: level, key: func(now sim.Time, p *sim.Pod) float64 {
			return level(now, p)*1e15 + float64(p.Submit)/1e3
		}}, nil
	case "drf":
		return &drf{base: b}, nil
	}
	return nil, fmt.Errorf("policy %q is unknown; use one of %v", name, Names)
}

type base struct {
	o       Options
	members []*sim.Pod
	// misses remembers, within one pass, the requests of unconstrained pods that fit nowhere
	// (per excluded node). Nodes only fill up during a pass, so a pod asking for at least as
	// much of everything cannot fit either; long queues are then scanned in O(distinct sizes)
	// placements instead of one per pod.
	misses []miss
}

type miss struct {
	req  sim.Resources
	skip *sim.Node
}

// newPass forgets the misses of the previous pass.
func (b *base) newPass() { b.misses = b.misses[:0] }

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

// try places p (or, for a gang member, the whole gang, all or nothing) and reports whether it
// started. skip excludes a node from placement.
func (b *base) try(c *sim.Cluster, p *sim.Pod, pending []*sim.Pod, skip *sim.Node) (bool, error) {
	if b.overQuota(c, p) {
		return false, nil
	}
	if p.Gang == "" {
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
	if !c.GangComplete(p) {
		return false, nil
	}
	b.members = b.members[:0]
	for _, q := range pending {
		if q.Gang == p.Gang && q.Phase == sim.Pending && !q.Assumed() {
			b.members = append(b.members, q)
		}
	}
	for i, q := range b.members {
		n := b.o.Placement.Place(c, q, skip)
		if n == nil {
			for _, r := range b.members[:i] {
				c.Forget(r)
			}
			return false, nil
		}
		if err := c.Assume(q, n); err != nil {
			return false, err
		}
	}
	for _, q := range b.members {
		if err := c.Bind(q, q.Node); err != nil {
			return false, err
		}
	}
	return true, nil
}

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

func (f *fifo) Schedule(c *sim.Cluster) error {
	f.newPass()
	f.queue = append(f.queue[:0], c.Pending()...)
	if !slices.IsSortedFunc(f.queue, submitOrder) {
		slices.SortStableFunc(f.queue, submitOrder)
	}
	defer clear(f.queue)
	for i, p := range f.queue {
		if p.Phase != sim.Pending {
			continue
		}
		ok, err := f.try(c, p, f.queue, nil)
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
		if p.Phase != sim.Pending || p.Gang != "" {
			continue
		}
		var skip *sim.Node
		if now+p.Remaining(now) > shadow {
			skip = shadowNode
			if skip == nil {
				continue
			}
		}
		if _, err := f.try(c, p, rest, skip); err != nil {
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
		if !n.Schedulable() || !head.ToleratesNode(n) || !head.MatchesNode(n) || !head.Requests.Fits(&n.Capacity) {
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

// ordered starts pods by ascending key without blocking (sjf: duration; srtf: remaining time;
// las: attained-service level). With preempt, a pod that fits nowhere suspends running pods
// with a strictly larger key on the node where the fewest must go; suspended pods keep their
// progress (they are assumed to checkpoint), as in SRTF and Tiresias.
type ordered struct {
	base
	key func(now sim.Time, p *sim.Pod) float64
	// victimKey, if set, replaces key when deciding who may suspend whom.
	victimKey func(now sim.Time, p *sim.Pod) float64
	preempt   bool
	queue     []*sim.Pod
	sorted    []keyed
	merged    []keyed
	fresh     []keyed
	seen      map[*sim.Pod]uint64
	stamp     uint64
	// exhaustive sorts the whole queue every pass, for tests of the incremental order.
	exhaustive bool
	// suspendMisses and maxRunning prune suspension searches within a pass (see suspendFor).
	suspendMisses []sim.Resources
	maxRunning    float64
	maxValid      bool
}

type keyed struct {
	k float64
	p *sim.Pod
	// progress and attained are the pod's state when k was computed; a pending pod's key
	// depends on nothing else, so the key stays valid while they do not change.
	progress sim.Time
	attained float64
}

func keyedLess(a, b keyed) int {
	return cmp.Or(cmp.Compare(a.k, b.k), submitOrder(a.p, b.p))
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
		if p.Phase == sim.Pending && !p.Assumed() && p.Progress == kp.progress && p.Attained == kp.attained {
			kept = append(kept, kp)
			o.seen[p] = o.stamp
		}
	}
	clear(o.sorted[len(kept):])
	o.fresh = o.fresh[:0]
	for _, p := range c.Pending() {
		if o.seen[p] != o.stamp {
			o.fresh = append(o.fresh, keyed{o.key(now, p), p, p.Progress, p.Attained})
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

func (o *ordered) Schedule(c *sim.Cluster) error {
	o.newPass()
	now := c.Now()
	o.sortQueue(c, now)
	defer clear(o.queue)
	o.suspendMisses = o.suspendMisses[:0]
	o.maxValid = false
	for _, p := range o.queue {
		if p.Phase != sim.Pending {
			continue
		}
		ok, err := o.try(c, p, o.queue, nil)
		if err != nil {
			return err
		}
		if ok || !o.preempt || p.Gang != "" || o.overQuota(c, p) {
			continue
		}
		suspended, err := o.suspendFor(c, p)
		if err != nil {
			return err
		}
		if suspended {
			// Victims freed capacity: what failed before may fit now.
			o.newPass()
			o.suspendMisses = o.suspendMisses[:0]
			o.maxValid = false
		}
	}
	return nil
}

func (o *ordered) victimKeyOf(now sim.Time, p *sim.Pod) float64 {
	if o.victimKey != nil {
		return o.victimKey(now, p)
	}
	return o.key(now, p)
}

// suspendFor suspends running pods with a larger victim key so p can start, on the node where
// the fewest must go. Pods are tried in ascending key order, so the victims available only
// shrink along the queue: a pod no smaller than one that found no node cannot find one either,
// and no pod with a key at or above every running pod's can suspend anything.
func (o *ordered) suspendFor(c *sim.Cluster, p *sim.Pod) (bool, error) {
	now := c.Now()
	key := o.victimKeyOf(now, p)
	if !o.maxValid {
		o.maxRunning = math.Inf(-1)
		for _, n := range c.Nodes() {
			for _, q := range n.Pods() {
				o.maxRunning = max(o.maxRunning, o.victimKeyOf(now, q))
			}
		}
		o.maxValid = true
	}
	if key >= o.maxRunning {
		return false, nil
	}
	if unconstrained(p) {
		for _, r := range o.suspendMisses {
			if r.Fits(&p.Requests) {
				return false, nil
			}
		}
	}
	var bestNode *sim.Node
	var best, cand []*sim.Pod
	for _, n := range c.Nodes() {
		if !n.Schedulable() || !p.ToleratesNode(n) || !p.MatchesNode(n) || !p.Requests.Fits(&n.Capacity) {
			continue
		}
		cand = cand[:0]
		for _, q := range n.Pods() {
			if q.Phase == sim.Running && !q.Assumed() && q.Gang == "" && o.victimKeyOf(now, q) > key {
				cand = append(cand, q)
			}
		}
		if len(cand) == 0 {
			continue
		}
		slices.SortFunc(cand, func(a, b *sim.Pod) int {
			return cmp.Or(cmp.Compare(o.key(now, b), o.key(now, a)), cmp.Compare(a.ID, b.ID))
		})
		free := n.Free()
		for i, q := range cand {
			free.Add(&q.Requests)
			if p.Requests.Fits(&free) {
				if bestNode == nil || i+1 < len(best) {
					bestNode, best = n, append(best[:0], cand[:i+1]...)
				}
				break
			}
		}
	}
	if bestNode == nil {
		if unconstrained(p) {
			o.suspendMisses = append(o.suspendMisses, p.Requests)
		}
		return false, nil
	}
	for _, v := range best {
		if err := c.Preempt(v, true); err != nil {
			return false, err
		}
	}
	return true, c.Bind(p, bestNode)
}

// drf is Dominant Resource Fairness: repeatedly offer the cluster to the user with the smallest
// dominant share (largest fraction of any resource they hold), starting that user's oldest pod
// that fits. A user whose remaining pods fit nowhere drops out for the pass.
type drf struct {
	base
	users  []string
	queues map[string][]*sim.Pod
}

func (d *drf) Schedule(c *sim.Cluster) error {
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
			if p.Phase != sim.Pending {
				continue
			}
			ok, err := d.try(c, p, pending, nil)
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

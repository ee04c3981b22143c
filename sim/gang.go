package sim

import "fmt"

// Gang is a pod group as the coscheduling plugin and Kubernetes' gang scheduling model it:
// Size members share a name, and at least Min of them must start together. While fewer than
// Min run, the gang is one job: it starts as a whole, and when it stops (preempted, a member
// failed or lost its node) every running member stops with it. Once Min members run, the
// remaining ones start on their own as they fit.
//
// Members placed while the quorum is not yet reachable are released at the end of a pass,
// unless the gang has a schedule timeout: then they stay reserved (Cluster.Hold), holding
// their resources, for up to Timeout of simulated time while the rest find room, and are
// released when it expires. After that the gang reserves again once the cluster has changed.
//
// The engine owns a Gang; schedulers read it through these methods.
type Gang struct {
	name    string
	id      int
	size    int
	min     int
	timeout Time
	members []*Pod
	running int
	held    int
	// deadline is when held members are released, or Never. After a release the gang holds
	// again only once the cluster has changed (released, at cluster version releasedAt):
	// reserving the same nodes again would only time out again.
	deadline   Time
	released   bool
	releasedAt uint64
	// version changes whenever a member starts or stops, so schedulers can cache job-level
	// values computed over the members.
	version uint64
}

// Name returns the gang's name.
func (g *Gang) Name() string { return g.name }

// ID numbers gangs from 0 in the order their first member arrived, for per-gang slices.
func (g *Gang) ID() int { return g.id }

// Size returns how many members the gang has in all.
func (g *Gang) Size() int { return g.size }

// Min returns how many members must start together.
func (g *Gang) Min() int { return g.min }

// Timeout returns how long reserved members wait for the rest; 0 means a gang is placed
// within a single pass or not at all.
func (g *Gang) Timeout() Time { return g.timeout }

// Members returns the members submitted so far, in submission order. The slice is owned by
// the engine.
func (g *Gang) Members() []*Pod { return g.members }

// Running returns how many members run.
func (g *Gang) Running() int { return g.running }

// Held returns how many members are reserved and waiting for the rest.
func (g *Gang) Held() int { return g.held }

// Ready reports whether at least Min members have been submitted, so the gang may start.
func (g *Gang) Ready() bool { return len(g.members) >= g.min }

// Started reports whether at least Min members run: the remaining members then start on
// their own.
func (g *Gang) Started() bool { return g.running >= g.min }

// Version changes whenever a member starts or stops.
func (g *Gang) Version() uint64 { return g.version }

// Gangs returns every gang seen so far, by ID.
func (c *Cluster) Gangs() []*Gang { return c.gangList }

// join adds p to its gang, creating the gang with its first member.
func (c *Cluster) join(p *Pod) error {
	if p.GangSize < 1 {
		return fmt.Errorf("pod %s: gang %q needs a positive size", p.Name, p.Gang)
	}
	if p.GangMin < 0 || p.GangMin > p.GangSize {
		return fmt.Errorf("pod %s: gang %q minimum %d must be within 1..%d (its size); 0 means all members", p.Name, p.Gang, p.GangMin, p.GangSize)
	}
	if p.GangTimeout < 0 || p.GangTimeout > maxDuration {
		return fmt.Errorf("pod %s: gang %q schedule timeout %v must be within 0 and 100 years", p.Name, p.Gang, p.GangTimeout)
	}
	g := c.gangs[p.Gang]
	if g == nil {
		g = &Gang{name: p.Gang, id: len(c.gangList), size: p.GangSize, min: p.GangMin, timeout: p.GangTimeout,
			deadline: Never}
		if g.min == 0 {
			g.min = g.size
		}
		c.gangs[p.Gang] = g
		c.gangList = append(c.gangList, g)
	}
	if len(g.members) == g.size {
		return fmt.Errorf("pod %s: gang %q already has its %d members; gang names must be unique per job", p.Name, p.Gang, g.size)
	}
	if p.GangSize != g.size {
		return fmt.Errorf("pod %s: gang %q has size %d (from pod %s), this pod says %d", p.Name, p.Gang, g.size, g.members[0].Name, p.GangSize)
	}
	g.members = append(g.members, p)
	p.grp = g
	return nil
}

// Hold keeps an assumed gang member reserved past the end of the pass, waiting for the rest
// of its gang (coscheduling's Permit wait). The gang's schedule timeout starts with its first
// held member; when it expires before the gang starts, every held member is released. Bind
// starts a held member, Forget releases it.
func (c *Cluster) Hold(p *Pod) error {
	g := p.grp
	switch {
	case !p.assumed:
		return fmt.Errorf("hold pod %s: it is not assumed on a node", p.Name)
	case g == nil || g.timeout <= 0:
		return fmt.Errorf("hold pod %s: only members of a gang with a schedule timeout wait for the rest", p.Name)
	case p.held:
		return nil
	}
	p.held = true
	g.held++
	if g.deadline == Never {
		g.deadline = c.now + g.timeout
		c.push(event{t: g.deadline, kind: evGangTimeout, gang: g})
	}
	return nil
}

// Park keeps an assumed pod reserved past the end of the pass: a scheduler whose Permit step
// makes a pod wait (sim/kubehost) parks it until it binds or forgets it. The engine sets no
// deadline; the scheduler asks for a pass (WakeAt) when the wait times out and releases the
// pod then. A node failure releases parked pods as it releases every reservation.
func (c *Cluster) Park(p *Pod) error {
	if !p.assumed {
		return fmt.Errorf("park pod %s: it is not assumed on a node", p.Name)
	}
	p.parked = true
	return nil
}

// mayHold reports whether the gang may hold reservations: never released, or the cluster
// changed since (at version v).
func (g *Gang) mayHold(v uint64) bool { return g.timeout > 0 && (!g.released || v != g.releasedAt) }

// unhold clears the held and parked marks of a pod that is bound or forgotten.
func (c *Cluster) unhold(p *Pod) {
	p.parked = false
	if !p.held {
		return
	}
	p.held = false
	g := p.grp
	g.held--
	if g.held == 0 {
		g.deadline = Never
	}
}

// gangTimeout releases the held members of a gang whose wait expired.
func (c *Cluster) gangTimeout(g *Gang, at Time) {
	if g.deadline != at || g.held == 0 {
		return
	}
	for _, q := range g.members {
		if q.held {
			c.Forget(q)
		}
	}
	g.released, g.releasedAt = true, c.version
	c.stats.GangTimeouts++
	c.dirty = true
}

// GangPlacer reserves and binds gang members for ScheduleGang; each scheduler supplies its
// own placement.
type GangPlacer interface {
	// Reserve finds a node for p and leaves p assumed on it (Cluster.Assume), or reports false.
	Reserve(c *Cluster, p *Pod) (bool, error)
	// Unreserve releases an assumed pod (Cluster.Forget, and whatever the scheduler tracked).
	Unreserve(c *Cluster, p *Pod)
	// Bind starts an assumed pod on its node (Cluster.Bind).
	Bind(c *Cluster, p *Pod) error
}

// ScheduleGang places p's gang the way coscheduling does, in O(members): once Min members
// have arrived, it reserves pending members one by one; when the running, held and newly
// reserved members reach Min, all of them start. Otherwise the new reservations are held
// (a gang with a schedule timeout) or released. Once the gang runs, p is placed on its own.
// It reports whether p started.
func (c *Cluster) ScheduleGang(p *Pod, pl GangPlacer) (bool, error) {
	g := p.grp
	if g == nil {
		return false, fmt.Errorf("schedule gang: pod %s has no gang", p.Name)
	}
	if p.Phase != Pending || p.assumed || !g.Ready() {
		return false, nil
	}
	if g.Started() {
		ok, err := pl.Reserve(c, p)
		if !ok || err != nil {
			return false, err
		}
		return true, pl.Bind(c, p)
	}
	v := c.version
	reserved := c.gangScratch[:0]
	defer func() { clear(reserved); c.gangScratch = reserved[:0] }()
	pending := 0
	for _, q := range g.members {
		if q.Phase == Pending && !q.assumed {
			pending++
		}
	}
	for _, q := range g.members {
		if q.Phase != Pending || q.assumed {
			continue
		}
		pending--
		ok, err := pl.Reserve(c, q)
		if err != nil {
			for _, r := range reserved {
				pl.Unreserve(c, r)
			}
			return false, err
		}
		if ok {
			reserved = append(reserved, q)
		} else if g.running+g.held+len(reserved)+pending < g.min {
			break
		}
	}
	if g.running+g.held+len(reserved) < g.min {
		if g.mayHold(v) {
			for _, r := range reserved {
				if err := c.Hold(r); err != nil {
					return false, err
				}
			}
			return false, nil
		}
		for _, r := range reserved {
			pl.Unreserve(c, r)
		}
		return false, nil
	}
	for _, q := range g.members {
		if q.held {
			if err := pl.Bind(c, q); err != nil {
				return false, err
			}
		}
	}
	for _, r := range reserved {
		if err := pl.Bind(c, r); err != nil {
			return false, err
		}
	}
	return p.Phase == Running, nil
}

// breakGang stops every running member of g when fewer than Min still run: a distributed job
// cannot go on without its quorum. preempted says whether a scheduler stopped it (the work is
// kept if keep) or a failure did (the work is lost).
func (c *Cluster) breakGang(g *Gang, keep, preempted bool) {
	if g == nil || g.running == 0 || g.running >= g.min {
		return
	}
	for _, q := range g.members {
		if q.Phase != Running || q.assumed {
			continue
		}
		c.stopRun(q, keep && preempted)
		if preempted {
			q.Preemptions++
			c.stats.Preemptions++
		} else {
			q.Restarts++
			c.stats.Restarts++
		}
		c.enqueue(q)
	}
}

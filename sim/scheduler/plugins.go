package scheduler

import (
	"cmp"
	"math"
	"slices"

	"github.com/jikken-dev/jikken/sim"
)

// Names of the stock plugins, as in kube-scheduler.
const (
	PrioritySortName       = "PrioritySort"
	NodeResourcesFitName   = "NodeResourcesFit"
	BalancedAllocationName = "NodeResourcesBalancedAllocation"
	TaintTolerationName    = "TaintToleration"
	NodeAffinityName       = "NodeAffinity"
	DefaultPreemptionName  = "DefaultPreemption"
	DefaultBinderName      = "DefaultBinder"
)

// PrioritySort orders by priority (higher first), then by the time the pod entered the queue.
type PrioritySort struct{}

// Name implements Plugin.
func (PrioritySort) Name() string { return PrioritySortName }

// Less implements QueueSortPlugin.
func (PrioritySort) Less(a, b *sim.Pod) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.Submit < b.Submit
}

// ResourceWeight is one resource a scoring strategy looks at.
type ResourceWeight struct {
	Index  int
	Weight int64
	// Extended marks a resource kube-scheduler scores only for pods that request it (extended
	// resources such as nvidia.com/gpu; not cpu, memory or ephemeral-storage).
	Extended bool
}

// Scoring strategies of NodeResourcesFit.
const (
	LeastAllocated = "LeastAllocated"
	MostAllocated  = "MostAllocated"
)

// NodeResourcesFit filters nodes without room for the pod's requests and scores by the
// fraction of each resource left (LeastAllocated: spread) or used (MostAllocated: pack) after
// placing it, averaged with the resource weights. As in kube-scheduler, CPU and memory count
// each pod's NonZeroRequests (so pods without requests still spread), a resource the node
// lacks is left out of the average, and an extended resource is left out for pods that do
// not request it.
type NodeResourcesFit struct {
	Strategy  string
	Resources []ResourceWeight
}

// Name implements Plugin.
func (*NodeResourcesFit) Name() string { return NodeResourcesFitName }

// Filter implements FilterPlugin.
func (*NodeResourcesFit) Filter(_ *State, p *sim.Pod, n *sim.Node) *Status {
	if n.FitsRequest(&p.Requests) {
		return nil
	}
	return statusUnschedulable
}

// DependsOnRequestsOnly implements RequestScorer.
func (*NodeResourcesFit) DependsOnRequestsOnly() {}

// Score implements ScorePlugin.
func (pl *NodeResourcesFit) Score(_ *State, p *sim.Pod, n *sim.Node) int64 {
	nzCPU, nzMem := p.NonZeroRequests()
	var sum, weights int64
	for _, rw := range pl.Resources {
		var req, used int64
		switch rw.Index {
		case sim.CPUIndex:
			req, used = nzCPU, n.NonZeroAllocated[0]
		case sim.MemoryIndex:
			req, used = nzMem, n.NonZeroAllocated[1]
		default:
			req, used = p.Requests[rw.Index], n.Allocated[rw.Index]
		}
		capacity := n.Capacity[rw.Index]
		if capacity == 0 || req == 0 && rw.Extended {
			continue
		}
		total := used + req
		var s int64
		if pl.Strategy == MostAllocated {
			// Defaulted requests may add up past the capacity; upstream clamps.
			s = min(total, capacity) * MaxNodeScore / capacity
		} else if total <= capacity {
			s = (capacity - total) * MaxNodeScore / capacity
		}
		sum += s * rw.Weight
		weights += rw.Weight
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// BalancedAllocation favours placements that leave a node's resources used in more equal
// fractions. Since Kubernetes 1.36 it scores the change the pod makes: with b the balance
// (1 - standard deviation of the used fractions) x 100, the score is
// 50 + (50 + b(after) - b(before)) / 2, so 75 means no change. It looks at its own resource
// list (cpu and memory by default), the pods' actual requests, and skips pods that request
// none of them.
type BalancedAllocation struct {
	Resources []ResourceWeight
}

// Name implements Plugin.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

// DependsOnRequestsOnly implements RequestScorer.
func (*BalancedAllocation) DependsOnRequestsOnly() {}

// SkipScore implements ScoreSkipper: a pod without requests (best effort) is not scored, so
// such pods do not all pile onto the most balanced node.
func (pl *BalancedAllocation) SkipScore(_ *State, p *sim.Pod) bool {
	for _, rw := range pl.Resources {
		if p.Requests[rw.Index] != 0 {
			return false
		}
	}
	return true
}

// Score implements ScorePlugin.
func (pl *BalancedAllocation) Score(st *State, p *sim.Pod, n *sim.Node) int64 {
	if pl.SkipScore(st, p) {
		return 0
	}
	var after, before [sim.MaxResources]float64
	k := 0
	for _, rw := range pl.Resources {
		capacity := n.Capacity[rw.Index]
		req := p.Requests[rw.Index]
		if capacity == 0 || req == 0 && rw.Extended {
			continue
		}
		used := n.Allocated[rw.Index]
		after[k] = math.Min(1, float64(used+req)/float64(capacity))
		before[k] = math.Min(1, float64(used)/float64(capacity))
		k++
	}
	return MaxNodeScore/2 + (MaxNodeScore/2+balance(after[:k])-balance(before[:k]))/2
}

// balance is (1 - standard deviation of the fractions) x 100, truncated.
func balance(fr []float64) int64 {
	var std float64
	switch k := len(fr); {
	case k == 2:
		std = math.Abs(fr[0]-fr[1]) / 2
	case k > 2:
		var mean float64
		for _, f := range fr {
			mean += f
		}
		mean /= float64(k)
		for _, f := range fr {
			std += (f - mean) * (f - mean)
		}
		std = math.Sqrt(std / float64(k))
	}
	return int64((1 - std) * float64(MaxNodeScore))
}

// TaintToleration filters nodes with NoSchedule/NoExecute taints the pod does not tolerate and
// prefers nodes with fewer intolerable PreferNoSchedule taints.
type TaintToleration struct {
	// seen counts the nodes checked for taints; node taints never change after creation, so
	// only new nodes need a look. anySoft and anyHard record PreferNoSchedule taints and
	// NoSchedule or NoExecute ones among them.
	seen    int
	anySoft bool
	anyHard bool
}

// Name implements Plugin.
func (*TaintToleration) Name() string { return TaintTolerationName }

// look notes the taints of nodes created since the last look.
func (pl *TaintToleration) look(c *sim.Cluster) {
	nodes := c.Nodes()
	for ; pl.seen < len(nodes); pl.seen++ {
		for _, t := range nodes[pl.seen].Taints {
			if t.Effect == sim.PreferNoSchedule {
				pl.anySoft = true
			} else {
				pl.anyHard = true
			}
		}
	}
}

// SkipScore implements ScoreSkipper: without PreferNoSchedule taints anywhere, every node
// scores the same.
func (pl *TaintToleration) SkipScore(st *State, _ *sim.Pod) bool {
	pl.look(st.Cluster)
	return !pl.anySoft
}

// SkipFilter implements FilterSkipper: without NoSchedule or NoExecute taints anywhere,
// every node passes.
func (pl *TaintToleration) SkipFilter(st *State, _ *sim.Pod) bool {
	pl.look(st.Cluster)
	return !pl.anyHard
}

// Filter implements FilterPlugin.
func (*TaintToleration) Filter(_ *State, p *sim.Pod, n *sim.Node) *Status {
	if len(n.Taints) == 0 || p.ToleratesNode(n) {
		return nil
	}
	return statusUnresolvable
}

// Score implements ScorePlugin: the raw score counts intolerable soft taints.
func (*TaintToleration) Score(_ *State, p *sim.Pod, n *sim.Node) int64 {
	var k int64
	for i := range n.Taints {
		if t := &n.Taints[i]; t.Effect == sim.PreferNoSchedule && !p.Tolerates(t) {
			k++
		}
	}
	return k
}

// NormalizeScore implements ScoreNormalizer: fewer intolerable taints score higher.
func (*TaintToleration) NormalizeScore(_ *State, _ *sim.Pod, s []int64) {
	normalize(s, true)
}

// NodeAffinity filters by node selector and required node affinity and scores by the summed
// weights of matching preferred terms.
type NodeAffinity struct{}

// Name implements Plugin.
func (NodeAffinity) Name() string { return NodeAffinityName }

// SkipScore implements ScoreSkipper: without preferred terms every node scores 0.
func (NodeAffinity) SkipScore(_ *State, p *sim.Pod) bool {
	return p.Affinity == nil || len(p.Affinity.Preferred) == 0
}

// SkipFilter implements FilterSkipper: a pod without a node selector or required terms
// matches every node.
func (NodeAffinity) SkipFilter(_ *State, p *sim.Pod) bool { return !p.Constrained() }

// Filter implements FilterPlugin.
func (NodeAffinity) Filter(_ *State, p *sim.Pod, n *sim.Node) *Status {
	if p.MatchesNode(n) {
		return nil
	}
	return statusUnresolvable
}

// Score implements ScorePlugin.
func (NodeAffinity) Score(_ *State, p *sim.Pod, n *sim.Node) int64 {
	if p.Affinity == nil {
		return 0
	}
	var s int64
	for i := range p.Affinity.Preferred {
		t := &p.Affinity.Preferred[i]
		if t.Preference.Matches(n.Labels) {
			s += int64(t.Weight)
		}
	}
	return s
}

// NormalizeScore implements ScoreNormalizer.
func (NodeAffinity) NormalizeScore(_ *State, _ *sim.Pod, s []int64) { normalize(s, false) }

// normalize scales scores to [0, MaxNodeScore] by the maximum, optionally reversed, like
// kube-scheduler's DefaultNormalizeScore.
func normalize(s []int64, reverse bool) {
	var m int64
	for _, v := range s {
		m = max(m, v)
	}
	for i, v := range s {
		switch {
		case m == 0 && reverse:
			s[i] = MaxNodeScore
		case m == 0:
			s[i] = 0
		case reverse:
			s[i] = MaxNodeScore - v*MaxNodeScore/m
		default:
			s[i] = v * MaxNodeScore / m
		}
	}
}

// DefaultBinder binds through the cluster; it exists so a profile can list a binder explicitly.
type DefaultBinder struct{}

// Name implements Plugin.
func (DefaultBinder) Name() string { return DefaultBinderName }

// Bind implements BindPlugin: the framework starts the pod after this returns.
func (DefaultBinder) Bind(*State, *sim.Pod, *sim.Node) *Status { return nil }

// DefaultPreemption evicts lower-priority pods so a pod that fits nowhere can run. For each
// node that passes the non-resource filters it removes every lower-priority pod, then
// reprieves them from the highest priority down while the pod still fits; it picks a node as
// compareCandidates orders them. Victims lose their work. Unlike kube-scheduler,
// which nominates the node and waits for graceful termination, the pod binds at once, since
// eviction is instantaneous here.
type DefaultPreemption struct {
	fw *Framework
}

// Name implements Plugin.
func (*DefaultPreemption) Name() string { return DefaultPreemptionName }

// PostFilter implements PostFilterPlugin.
func (pl *DefaultPreemption) PostFilter(st *State, p *sim.Pod) (*sim.Node, *Status) {
	c := st.Cluster
	if low, ok := c.MinRunningPriority(); !ok || low >= p.Priority {
		return nil, nil
	}
	var cands []Candidate
	for _, n := range c.Nodes() {
		if v := pl.victims(st, p, n); v != nil {
			cands = append(cands, Candidate{Node: n, Victims: v})
		}
	}
	for _, e := range pl.fw.extenders {
		if len(cands) == 0 {
			break
		}
		if !e.SupportsPreemption() || !e.IsInterested(p) {
			continue
		}
		kept, err := e.ProcessPreemption(c, p, cands)
		if err != nil {
			if e.IsIgnorable() {
				continue
			}
			return nil, &Status{Code: Error, Reason: err.Error()}
		}
		cands = kept
	}
	if len(cands) == 0 {
		return nil, nil
	}
	best := slices.MinFunc(cands, compareCandidates)
	for _, v := range best.Victims {
		if err := c.Preempt(v, false); err != nil {
			return nil, &Status{Code: Error, Reason: err.Error()}
		}
	}
	return best.Node, nil
}

func (pl *DefaultPreemption) victims(st *State, p *sim.Pod, n *sim.Node) []*sim.Pod {
	if !n.Accepts(p) {
		return nil
	}
	free := n.Free()
	var lower []*sim.Pod
	for _, q := range n.Pods() {
		if q.Priority < p.Priority && q.Phase == sim.Running && !q.Assumed() {
			lower = append(lower, q)
			free.Add(&q.Requests)
		}
	}
	if len(lower) == 0 || !p.Requests.Fits(&free) {
		return nil
	}
	// The other filters judge the node without the lower-priority pods, as upstream removes
	// them from its copy of the node and from the pre-filters' state: a pod that blocks the
	// preemptor by its ports, affinity or spread may be a victim too.
	for _, q := range lower {
		pl.remove(st, p, q, n)
	}
	defer func() {
		for len(st.removed) > 0 {
			pl.addBack(st, p, st.removed[len(st.removed)-1], n)
		}
	}()
	if !pl.otherFilters(st, p, n) {
		return nil
	}
	// Reprieve the most important victims first; among equals, the longest-running ones.
	slices.SortStableFunc(lower, func(a, b *sim.Pod) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	var victims []*sim.Pod
	for _, q := range lower {
		free.Sub(&q.Requests)
		if p.Requests.Fits(&free) {
			pl.addBack(st, p, q, n)
			if pl.otherFilters(st, p, n) {
				continue
			}
			pl.remove(st, p, q, n)
		}
		free.Add(&q.Requests)
		victims = append(victims, q)
	}
	return victims
}

// otherFilters runs the attempt's filters but NodeResourcesFit, whose part victims does with
// the node's free resources.
func (pl *DefaultPreemption) otherFilters(st *State, p *sim.Pod, n *sim.Node) bool {
	for _, f := range pl.fw.active {
		if _, isFit := f.(*NodeResourcesFit); isFit {
			continue
		}
		if !f.Filter(st, p, n).IsSuccess() {
			return false
		}
	}
	return true
}

// remove and addBack take q off node n, or put it back, in the eyes of the attempt's filters.
func (pl *DefaultPreemption) remove(st *State, p, q *sim.Pod, n *sim.Node) {
	st.removed = append(st.removed, q)
	for _, f := range pl.fw.active {
		if e, ok := f.(PreFilterExtensions); ok {
			e.RemovePod(st, p, q, n)
		}
	}
}

func (pl *DefaultPreemption) addBack(st *State, p, q *sim.Pod, n *sim.Node) {
	if i := slices.Index(st.removed, q); i >= 0 {
		st.removed = slices.Delete(st.removed, i, i+1)
	}
	for _, f := range pl.fw.active {
		if e, ok := f.(PreFilterExtensions); ok {
			e.AddPod(st, p, q, n)
		}
	}
}

// compareCandidates orders preemption candidates as kube-scheduler's pickOneNodeForPreemption
// does (no PodDisruptionBudgets here): the lowest highest victim priority, then the lowest
// sum of victim priorities each offset by 2^31 (so evicting fewer pods wins even at negative
// priorities), then the fewest victims, then the node whose earliest-started victim of the
// highest priority started latest; upstream then takes any, here the first node.
func compareCandidates(a, b Candidate) int {
	ha, sa, ta := victimStats(a.Victims)
	hb, sb, tb := victimStats(b.Victims)
	if c := cmp.Compare(ha, hb); c != 0 {
		return c
	}
	if c := cmp.Compare(sa, sb); c != 0 {
		return c
	}
	if c := cmp.Compare(len(a.Victims), len(b.Victims)); c != 0 {
		return c
	}
	if c := cmp.Compare(tb, ta); c != 0 {
		return c
	}
	return cmp.Compare(a.Node.ID, b.Node.ID)
}

// victimStats returns the highest victim priority, the offset sum of priorities and the
// earliest start among the victims of the highest priority.
func victimStats(v []*sim.Pod) (highest int32, sum int64, earliest sim.Time) {
	highest = math.MinInt32
	for _, p := range v {
		sum += int64(p.Priority) + math.MaxInt32 + 1
		switch {
		case p.Priority > highest:
			highest, earliest = p.Priority, p.Start
		case p.Priority == highest:
			earliest = min(earliest, p.Start)
		}
	}
	return highest, sum, earliest
}

// UserQuotaName names the UserQuota plugin.
const UserQuotaName = "UserQuota"

// UserQuota keeps each user within a resource cap, like a ResourceQuota per namespace but
// enforced at scheduling time: a pod that would take its user over the cap waits (throttling)
// and does not preempt. Users without a quota are not limited.
type UserQuota struct {
	Quotas map[string]sim.Resources
}

var statusOverQuota = &Status{Code: UnschedulableAndUnresolvable, Reason: "user quota exceeded"}

// Name implements Plugin.
func (*UserQuota) Name() string { return UserQuotaName }

// PreFilter implements PreFilterPlugin.
func (pl *UserQuota) PreFilter(st *State, p *sim.Pod) *Status {
	q, ok := pl.Quotas[p.User]
	if !ok {
		return nil
	}
	u := st.Cluster.UserAllocated(p.User)
	u.Add(&p.Requests)
	u[sim.PodsIndex] = 0
	if u.Fits(&q) {
		return nil
	}
	return statusOverQuota
}

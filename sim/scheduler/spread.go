package scheduler

import (
	"math"

	"github.com/jikken-dev/jikken/sim"
)

var (
	statusSpreadLabel = &Status{Code: UnschedulableAndUnresolvable, Reason: "node(s) didn't match pod topology spread constraints (missing required label)"}
	statusSpread      = &Status{Code: Unschedulable, Reason: "node(s) didn't match pod topology spread constraints"}
)

// PodTopologySpread enforces the pod's topology spread constraints as kube-scheduler's plugin
// of that name does. DoNotSchedule constraints filter: placing the pod in a node's domain must
// keep (pods matching in that domain + 1 if the pod matches) - (fewest in any eligible domain)
// within maxSkew, the fewest counting as 0 while fewer than minDomains domains are eligible.
// ScheduleAnyway constraints score: per constraint, (matching pods in the node's domain) x
// ln(domains among the feasible nodes + 2) + maxSkew - 1, summed and rounded, then reversed
// so the emptiest domain scores 100. Eligible nodes carry every constraint's topology key and,
// by default, match the pod's node selector and required node affinity (nodeAffinityPolicy
// Honor) whatever their taints (nodeTaintsPolicy Ignore). Only pods of the pod's namespace
// count.
//
// A pod without constraints of its own whose Services or controller select it (its
// DefaultSpread) gets the cluster's default constraints, as upstream's system defaulting:
// ScheduleAnyway with maxSkew 3 per host and 5 per zone, over the pods DefaultSpread selects.
// Nodes without a topology key then still score, on the constraints whose key they have. Other
// pods without constraints are skipped.
type PodTopologySpread struct {
	// Filter state, from PreFilter: the DoNotSchedule constraints, the matching pods per
	// domain of each, and the fewest in an eligible domain.
	hard     []sim.TopologySpreadConstraint
	counts   []map[string]int
	minMatch []int
	// Score state, from PreScore: the ScheduleAnyway constraints, the matching pods per domain
	// of each (not for hostname, counted on the node itself), the weight of each, and which
	// feasible nodes lack a topology key.
	soft    []sim.TopologySpreadConstraint
	domains []map[string]int64
	weights []float64
	ignored []bool
	// allKeys is false for the default constraints: nodes lacking a key are not ignored.
	allKeys bool
}

// ZoneLabel is the well-known zone label of the default spread constraints.
const ZoneLabel = "topology.kubernetes.io/zone"

// defaultConstraints are kube-scheduler's system defaults, for pods whose Services or
// controller select them.
func defaultConstraints(dst []sim.TopologySpreadConstraint, sel *sim.LabelSelector) []sim.TopologySpreadConstraint {
	return append(dst[:0],
		sim.TopologySpreadConstraint{MaxSkew: 3, TopologyKey: sim.HostnameLabel, WhenUnsatisfiable: sim.ScheduleAnyway, Selector: sel},
		sim.TopologySpreadConstraint{MaxSkew: 5, TopologyKey: ZoneLabel, WhenUnsatisfiable: sim.ScheduleAnyway, Selector: sel})
}

// Name implements Plugin.
func (*PodTopologySpread) Name() string { return PodTopologySpreadName }

// constraints appends the pod's constraints with the given action to dst[:0].
func constraints(dst []sim.TopologySpreadConstraint, p *sim.Pod, action string) []sim.TopologySpreadConstraint {
	dst = dst[:0]
	for _, c := range p.TopologySpread {
		if c.WhenUnsatisfiable == action {
			dst = append(dst, c)
		}
	}
	return dst
}

func hasKeys(n *sim.Node, cs []sim.TopologySpreadConstraint) bool {
	for i := range cs {
		if _, ok := n.Labels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// includes reports whether n counts for constraint c of pod p under its node inclusion
// policies.
func includes(c *sim.TopologySpreadConstraint, p *sim.Pod, n *sim.Node) bool {
	if c.NodeAffinityPolicy != sim.PolicyIgnore && !p.MatchesNode(n) {
		return false
	}
	if c.NodeTaintsPolicy == sim.PolicyHonor && !p.ToleratesNode(n) {
		return false
	}
	return true
}

// matching counts the pods on n in namespace ns that sel selects. An empty selector counts
// none, as upstream's countPodsMatchSelector.
func matching(n *sim.Node, sel *sim.LabelSelector, ns string) int {
	if sel == nil || sel.Empty() {
		return 0
	}
	k := 0
	for _, q := range n.Pods() {
		if q.Namespace == ns && sel.Matches(q.Labels) {
			k++
		}
	}
	return k
}

// PreFilter implements PreFilterPlugin.
func (pl *PodTopologySpread) PreFilter(st *State, p *sim.Pod) *Status {
	pl.hard = constraints(pl.hard, p, sim.DoNotSchedule)
	if len(pl.hard) == 0 {
		return statusSkip
	}
	pl.counts = pl.counts[:0]
	for range pl.hard {
		pl.counts = append(pl.counts, map[string]int{})
	}
	for _, n := range st.Cluster.Nodes() {
		if n.Removed || !hasKeys(n, pl.hard) {
			continue
		}
		for i := range pl.hard {
			c := &pl.hard[i]
			if includes(c, p, n) {
				pl.counts[i][n.Labels[c.TopologyKey]] += matching(n, c.Selector, p.Namespace)
			}
		}
	}
	pl.minMatch = pl.minMatch[:0]
	for i := range pl.hard {
		pl.minMatch = append(pl.minMatch, pl.lowest(i))
	}
	return nil
}

// lowest returns the fewest matching pods in an eligible domain of constraint i, 0 while
// there are fewer domains than minDomains.
func (pl *PodTopologySpread) lowest(i int) int {
	if len(pl.counts[i]) < int(max(pl.hard[i].MinDomains, 1)) {
		return 0
	}
	low := math.MaxInt32
	for _, k := range pl.counts[i] {
		low = min(low, k)
	}
	return low
}

// RemovePod implements PreFilterExtensions.
func (pl *PodTopologySpread) RemovePod(_ *State, p, gone *sim.Pod, n *sim.Node) {
	pl.update(p, gone, n, -1)
}

// AddPod implements PreFilterExtensions.
func (pl *PodTopologySpread) AddPod(_ *State, p, back *sim.Pod, n *sim.Node) {
	pl.update(p, back, n, 1)
}

// update adds d for placed pod q on n to the domains it counts in.
func (pl *PodTopologySpread) update(p, q *sim.Pod, n *sim.Node, d int) {
	if q.Namespace != p.Namespace || !hasKeys(n, pl.hard) {
		return
	}
	for i := range pl.hard {
		c := &pl.hard[i]
		if !c.Selector.Matches(q.Labels) || !includes(c, p, n) {
			continue
		}
		pl.counts[i][n.Labels[c.TopologyKey]] += d
		pl.minMatch[i] = pl.lowest(i)
	}
}

// Filter implements FilterPlugin.
func (pl *PodTopologySpread) Filter(_ *State, p *sim.Pod, n *sim.Node) *Status {
	for i := range pl.hard {
		c := &pl.hard[i]
		v, ok := n.Labels[c.TopologyKey]
		if !ok {
			return statusSpreadLabel
		}
		self := 0
		if c.Selector.Matches(p.Labels) {
			self = 1
		}
		if pl.counts[i][v]+self-pl.minMatch[i] > int(c.MaxSkew) {
			return statusSpread
		}
	}
	return nil
}

// PreScore implements PreScorer.
func (pl *PodTopologySpread) PreScore(st *State, p *sim.Pod, nodes []*sim.Node) bool {
	pl.soft = constraints(pl.soft, p, sim.ScheduleAnyway)
	pl.allKeys = true
	if len(p.TopologySpread) == 0 && p.DefaultSpread != nil && !p.DefaultSpread.Empty() {
		pl.soft, pl.allKeys = defaultConstraints(pl.soft, p.DefaultSpread), false
	}
	if len(pl.soft) == 0 {
		return true
	}
	pl.domains = pl.domains[:0]
	for range pl.soft {
		pl.domains = append(pl.domains, map[string]int64{})
	}
	pl.ignored = pl.ignored[:0]
	ignored := 0
	for _, n := range nodes {
		skip := pl.allKeys && !hasKeys(n, pl.soft)
		pl.ignored = append(pl.ignored, skip)
		if skip {
			ignored++
			continue
		}
		for i := range pl.soft {
			if key := pl.soft[i].TopologyKey; key != sim.HostnameLabel {
				pl.domains[i][n.Labels[key]] += 0
			}
		}
	}
	pl.weights = pl.weights[:0]
	for i := range pl.soft {
		size := len(pl.domains[i])
		if pl.soft[i].TopologyKey == sim.HostnameLabel {
			size = len(nodes) - ignored
		}
		pl.weights = append(pl.weights, math.Log(float64(size+2)))
	}
	for _, n := range st.Cluster.Nodes() {
		if n.Removed || pl.allKeys && !hasKeys(n, pl.soft) {
			continue
		}
		for i := range pl.soft {
			c := &pl.soft[i]
			if !includes(c, p, n) {
				continue
			}
			v := n.Labels[c.TopologyKey]
			if k, ok := pl.domains[i][v]; ok {
				pl.domains[i][v] = k + int64(matching(n, c.Selector, p.Namespace))
			}
		}
	}
	return false
}

// Score implements ScorePlugin: lower means fewer matching pods where the node is.
func (pl *PodTopologySpread) Score(_ *State, p *sim.Pod, n *sim.Node) int64 {
	if pl.allKeys && !hasKeys(n, pl.soft) {
		return 0
	}
	var s float64
	for i := range pl.soft {
		c := &pl.soft[i]
		v, ok := n.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var k int64
		if c.TopologyKey == sim.HostnameLabel {
			k = int64(matching(n, c.Selector, p.Namespace))
		} else {
			k = pl.domains[i][v]
		}
		s += float64(k)*pl.weights[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(s))
}

// NormalizeScore implements ScoreNormalizer: 100 x (highest + lowest - score) / highest, every
// node 100 if the highest is 0, and 0 for nodes without the topology keys.
func (pl *PodTopologySpread) NormalizeScore(_ *State, _ *sim.Pod, s []int64) {
	lo, hi := int64(math.MaxInt64), int64(0)
	for i, v := range s {
		if !pl.ignored[i] {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	for i, v := range s {
		switch {
		case pl.ignored[i]:
			s[i] = 0
		case hi == 0:
			s[i] = MaxNodeScore
		default:
			s[i] = MaxNodeScore * (hi + lo - v) / hi
		}
	}
}

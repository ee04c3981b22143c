package scheduler

import (
	"math"

	"github.com/jikken-dev/jikken/sim"
)

// Names of the plugins that place pods relative to other pods, as in kube-scheduler.
const (
	NodePortsName         = "NodePorts"
	InterPodAffinityName  = "InterPodAffinity"
	PodTopologySpreadName = "PodTopologySpread"
)

var (
	statusSkip         = &Status{Code: Skip}
	statusPortsTaken   = &Status{Code: Unschedulable, Reason: "node(s) didn't have free ports for the requested pod ports"}
	statusAffinity     = &Status{Code: UnschedulableAndUnresolvable, Reason: "node(s) didn't match pod affinity rules"}
	statusAntiAffinity = &Status{Code: Unschedulable, Reason: "node(s) didn't match pod anti-affinity rules"}
	statusExistingAnti = &Status{Code: Unschedulable, Reason: "node(s) didn't satisfy existing pods anti-affinity rules"}
)

// NodePorts filters out nodes where a pod already binds a host port the pod wants: the same
// protocol and port on the same address, or on any address when either side binds 0.0.0.0.
type NodePorts struct{}

// Name implements Plugin.
func (NodePorts) Name() string { return NodePortsName }

// PreFilter implements PreFilterPlugin: a pod without host ports skips the filter.
func (NodePorts) PreFilter(_ *State, p *sim.Pod) *Status {
	if len(p.HostPorts) == 0 {
		return statusSkip
	}
	return nil
}

// Filter implements FilterPlugin.
func (NodePorts) Filter(st *State, p *sim.Pod, n *sim.Node) *Status {
	if len(p.HostPorts) == 0 {
		return nil
	}
	for _, q := range n.Pods() {
		if len(q.HostPorts) == 0 || st.Removed(q) {
			continue
		}
		for _, used := range q.HostPorts {
			for _, want := range p.HostPorts {
				if want.Conflicts(used) {
					return statusPortsTaken
				}
			}
		}
	}
	return nil
}

// topologyPair is one topology domain: a node label and its value.
type topologyPair struct{ key, value string }

// InterPodAffinity places pods relative to the pods already placed, as kube-scheduler's
// plugin of that name with its default arguments (hardPodAffinityWeight 1, preferred terms of
// existing pods honoured). The filter enforces the pod's required affinity and anti-affinity
// and the required anti-affinity of the pods placed; the score adds, per topology domain, the
// weights of the preferred terms (both the pod's and the placed pods') that hold, and 1 per
// placed pod whose required affinity the pod satisfies, then scales the feasible nodes to
// 0..100 between the lowest and highest.
//
// PreFilter counts matching pods per domain once per attempt, as upstream; the plugin keeps
// that state itself, since the framework runs one attempt at a time. When neither the pod nor
// any placed pod has terms that matter, the filter and the score are skipped in O(1).
type InterPodAffinity struct {
	active bool
	// existingAnti counts, per domain, placed pods with a required anti-affinity term that
	// selects the pod; affinity counts pods that match all of the pod's required affinity
	// terms, anti those that match one of its required anti-affinity terms.
	existingAnti map[topologyPair]int
	affinity     map[topologyPair]int
	anti         map[topologyPair]int
	// topoScore is the score of each domain, by topology key and value.
	topoScore map[string]map[string]int64
}

// Name implements Plugin.
func (*InterPodAffinity) Name() string { return InterPodAffinityName }

func requiredAffinity(p *sim.Pod) []sim.PodAffinityTerm {
	if p.PodAffinity == nil {
		return nil
	}
	return p.PodAffinity.Required
}

func requiredAntiAffinity(p *sim.Pod) []sim.PodAffinityTerm {
	if p.PodAntiAffinity == nil {
		return nil
	}
	return p.PodAntiAffinity.Required
}

// matchesAll reports whether target matches every term owner carries; no terms match nothing.
func matchesAll(terms []sim.PodAffinityTerm, owner, target *sim.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(owner, target) {
			return false
		}
	}
	return true
}

// count adds d to the domain of n for key, dropping domains that reach 0: the filter tells
// an empty map from one with counts.
func count(m map[topologyPair]int, n *sim.Node, key string, d int) {
	if v, ok := n.Labels[key]; ok {
		tp := topologyPair{key, v}
		if m[tp] += d; m[tp] == 0 {
			delete(m, tp)
		}
	}
}

// PreFilter implements PreFilterPlugin.
func (pl *InterPodAffinity) PreFilter(st *State, p *sim.Pod) *Status {
	c := st.Cluster
	req, anti := requiredAffinity(p), requiredAntiAffinity(p)
	pl.active = len(req) > 0 || len(anti) > 0 || c.PodsWithRequiredAntiAffinity() > 0
	if !pl.active {
		return statusSkip
	}
	if pl.existingAnti == nil {
		pl.existingAnti, pl.affinity, pl.anti = map[topologyPair]int{}, map[topologyPair]int{}, map[topologyPair]int{}
	}
	clear(pl.existingAnti)
	clear(pl.affinity)
	clear(pl.anti)
	for _, n := range c.Nodes() {
		if n.PodsWithRequiredAntiAffinity() > 0 {
			for _, q := range n.Pods() {
				terms := requiredAntiAffinity(q)
				for i := range terms {
					if terms[i].Matches(q, p) {
						count(pl.existingAnti, n, terms[i].TopologyKey, 1)
					}
				}
			}
		}
		if len(req) == 0 && len(anti) == 0 {
			continue
		}
		for _, q := range n.Pods() {
			if matchesAll(req, p, q) {
				for i := range req {
					count(pl.affinity, n, req[i].TopologyKey, 1)
				}
			}
			for i := range anti {
				if anti[i].Matches(p, q) {
					count(pl.anti, n, anti[i].TopologyKey, 1)
				}
			}
		}
	}
	if pl.active = len(req) > 0 || len(anti) > 0 || len(pl.existingAnti) > 0; !pl.active {
		return statusSkip
	}
	return nil
}

// RemovePod implements PreFilterExtensions.
func (pl *InterPodAffinity) RemovePod(_ *State, p, gone *sim.Pod, n *sim.Node) {
	pl.update(p, gone, n, -1)
}

// AddPod implements PreFilterExtensions.
func (pl *InterPodAffinity) AddPod(_ *State, p, back *sim.Pod, n *sim.Node) {
	pl.update(p, back, n, 1)
}

// update adds d times what placed pod q on n counts for p.
func (pl *InterPodAffinity) update(p, q *sim.Pod, n *sim.Node, d int) {
	if !pl.active {
		return
	}
	terms := requiredAntiAffinity(q)
	for i := range terms {
		if terms[i].Matches(q, p) {
			count(pl.existingAnti, n, terms[i].TopologyKey, d)
		}
	}
	req, anti := requiredAffinity(p), requiredAntiAffinity(p)
	if matchesAll(req, p, q) {
		for i := range req {
			count(pl.affinity, n, req[i].TopologyKey, d)
		}
	}
	for i := range anti {
		if anti[i].Matches(p, q) {
			count(pl.anti, n, anti[i].TopologyKey, d)
		}
	}
}

// Filter implements FilterPlugin.
func (pl *InterPodAffinity) Filter(_ *State, p *sim.Pod, n *sim.Node) *Status {
	if !pl.active {
		return nil
	}
	if req := requiredAffinity(p); len(req) > 0 {
		found := true
		for i := range req {
			v, ok := n.Labels[req[i].TopologyKey]
			if !ok {
				return statusAffinity
			}
			if pl.affinity[topologyPair{req[i].TopologyKey, v}] <= 0 {
				found = false
			}
		}
		// The first of a group of pods with affinity to each other goes anywhere the
		// topologies exist, as long as no pod in the cluster matches yet.
		if !found && (len(pl.affinity) > 0 || !matchesAll(req, p, p)) {
			return statusAffinity
		}
	}
	if len(pl.anti) > 0 {
		anti := requiredAntiAffinity(p)
		for i := range anti {
			if v, ok := n.Labels[anti[i].TopologyKey]; ok && pl.anti[topologyPair{anti[i].TopologyKey, v}] > 0 {
				return statusAntiAffinity
			}
		}
	}
	if len(pl.existingAnti) > 0 {
		for k, v := range n.Labels {
			if pl.existingAnti[topologyPair{k, v}] > 0 {
				return statusExistingAnti
			}
		}
	}
	return nil
}

func hasPreferred(p *sim.Pod) bool {
	return p.PodAffinity != nil && len(p.PodAffinity.Preferred) > 0 ||
		p.PodAntiAffinity != nil && len(p.PodAntiAffinity.Preferred) > 0
}

// PreScore implements PreScorer: it sums the term weights per topology domain over the placed
// pods (all of them if the pod has preferred terms, else only those with affinity terms).
func (pl *InterPodAffinity) PreScore(st *State, p *sim.Pod, _ []*sim.Node) bool {
	c := st.Cluster
	own := hasPreferred(p)
	if !own && c.PodsWithAffinity() == 0 {
		return true
	}
	if pl.topoScore == nil {
		pl.topoScore = map[string]map[string]int64{}
	}
	clear(pl.topoScore)
	for _, n := range c.Nodes() {
		if !own && n.PodsWithAffinity() == 0 || len(n.Labels) == 0 {
			continue
		}
		for _, q := range n.Pods() {
			if own || q.HasPodAffinity() {
				pl.addExisting(p, q, n)
			}
		}
	}
	// No term held anywhere: every node scores the same, as upstream's PreScore skips.
	return len(pl.topoScore) == 0
}

// addExisting adds what placed pod q on node n contributes to the domains of n.
func (pl *InterPodAffinity) addExisting(p, q *sim.Pod, n *sim.Node) {
	if a := p.PodAffinity; a != nil {
		for i := range a.Preferred {
			pl.term(&a.Preferred[i].Term, a.Preferred[i].Weight, p, q, n)
		}
	}
	if a := p.PodAntiAffinity; a != nil {
		for i := range a.Preferred {
			pl.term(&a.Preferred[i].Term, -a.Preferred[i].Weight, p, q, n)
		}
	}
	if a := q.PodAffinity; a != nil {
		for i := range a.Required {
			pl.term(&a.Required[i], hardPodAffinityWeight, q, p, n)
		}
		for i := range a.Preferred {
			pl.term(&a.Preferred[i].Term, a.Preferred[i].Weight, q, p, n)
		}
	}
	if a := q.PodAntiAffinity; a != nil {
		for i := range a.Preferred {
			pl.term(&a.Preferred[i].Term, -a.Preferred[i].Weight, q, p, n)
		}
	}
}

// hardPodAffinityWeight is InterPodAffinityArgs' default: what a placed pod's required
// affinity term that selects the pod adds to its domain's score.
const hardPodAffinityWeight = 1

// term adds weight to the domain of n when the term, carried by owner, selects target.
func (pl *InterPodAffinity) term(t *sim.PodAffinityTerm, weight int32, owner, target *sim.Pod, n *sim.Node) {
	if !t.Matches(owner, target) {
		return
	}
	v, ok := n.Labels[t.TopologyKey]
	if !ok {
		return
	}
	m := pl.topoScore[t.TopologyKey]
	if m == nil {
		m = map[string]int64{}
		pl.topoScore[t.TopologyKey] = m
	}
	m[v] += int64(weight)
}

// Score implements ScorePlugin: the summed scores of the node's domains.
func (pl *InterPodAffinity) Score(_ *State, _ *sim.Pod, n *sim.Node) int64 {
	var s int64
	for key, values := range pl.topoScore {
		if v, ok := n.Labels[key]; ok {
			s += values[v]
		}
	}
	return s
}

// NormalizeScore implements ScoreNormalizer: scores are scaled linearly so the lowest becomes
// 0 and the highest 100 (all 0 when they are equal), in floating point as upstream.
func (pl *InterPodAffinity) NormalizeScore(_ *State, _ *sim.Pod, s []int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, v := range s {
		lo, hi = min(lo, v), max(hi, v)
	}
	for i, v := range s {
		f := 0.0
		if hi > lo {
			f = float64(MaxNodeScore) * (float64(v-lo) / float64(hi-lo))
		}
		s[i] = int64(f)
	}
}

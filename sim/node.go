package sim

// Node is one machine. Its spec (name, labels, taints, capacity) comes from the scenario; the
// engine keeps Allocated and the pod list up to date incrementally as pods start and stop.
type Node struct {
	ID       int
	Name     string
	Group    string
	Labels   map[string]string
	Taints   []Taint
	Capacity Resources

	Allocated Resources
	// NonZeroAllocated sums the NonZeroRequests (CPU, memory) of the pods on the node, which
	// kube-scheduler's NodeResourcesFit scoring counts instead of their requests.
	NonZeroAllocated [2]int64
	// Version changes whenever Allocated does, so schedulers can cache per-node results.
	Version uint64
	// Up is false while the node is failed; Cordoned stops new pods (drain, cordon); Removed
	// marks a node deleted from the cluster. Only nodes that are up, not cordoned and not
	// removed accept pods.
	Up       bool
	Cordoned bool
	Removed  bool

	pods     []*Pod
	affinity affinityCounts
}

// Schedulable reports whether the node accepts new pods.
func (n *Node) Schedulable() bool { return n.Up && !n.Cordoned && !n.Removed }

// UnschedulableTaint is the taint Kubernetes gives a cordoned node (spec.unschedulable). A pod
// that tolerates it may still go there, as kube-scheduler's NodeUnschedulable allows
// (DaemonSet pods do).
var UnschedulableTaint = Taint{Key: "node.kubernetes.io/unschedulable", Effect: NoSchedule}

// Accepts reports whether the node takes p now: it is schedulable, or only cordoned and p
// tolerates UnschedulableTaint.
func (n *Node) Accepts(p *Pod) bool {
	if n.Schedulable() {
		return true
	}
	return n.Up && !n.Removed && p.Tolerates(&UnschedulableTaint)
}

// Free returns capacity minus allocation.
func (n *Node) Free() Resources {
	f := n.Capacity
	f.Sub(&n.Allocated)
	return f
}

// FitsRequest reports whether r fits in the node's free capacity, without copying vectors.
func (n *Node) FitsRequest(r *Resources) bool {
	for i := range r {
		if r[i] > n.Capacity[i]-n.Allocated[i] {
			return false
		}
	}
	return true
}

// Pods returns the pods running or assumed on the node. The slice is owned by the engine.
func (n *Node) Pods() []*Pod { return n.pods }

// NodeSpec describes a node to create.
type NodeSpec struct {
	Name     string
	Group    string
	Labels   map[string]string
	Taints   []Taint
	Capacity Resources
}

// TaintEffect is what a taint does to pods that do not tolerate it.
type TaintEffect string

// Taint effects, as in Kubernetes.
const (
	NoSchedule       TaintEffect = "NoSchedule"
	PreferNoSchedule TaintEffect = "PreferNoSchedule"
	NoExecute        TaintEffect = "NoExecute"
)

// Taint repels pods that do not tolerate it.
type Taint struct {
	Key    string      `json:"key"`
	Value  string      `json:"value,omitempty"`
	Effect TaintEffect `json:"effect"`
}

// Toleration lets a pod run on a node with a matching taint.
type Toleration struct {
	Key string `json:"key,omitempty"`
	// Operator is Equal (default) or Exists.
	Operator string      `json:"operator,omitempty"`
	Value    string      `json:"value,omitempty"`
	Effect   TaintEffect `json:"effect,omitempty"`
}

// Tolerates reports whether the toleration matches the taint, with Kubernetes rules: an empty
// effect matches every effect, an empty key with Exists matches every taint.
func (t *Toleration) Tolerates(taint *Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "Exists":
		return true
	case "", "Equal":
		return t.Value == taint.Value
	}
	return false
}

// Tolerates reports whether the pod tolerates taint.
func (p *Pod) Tolerates(taint *Taint) bool {
	for i := range p.Tolerations {
		if p.Tolerations[i].Tolerates(taint) {
			return true
		}
	}
	return false
}

// NodeAffinity mirrors Kubernetes' node affinity: a required selector (terms ORed, expressions
// within a term ANDed) and weighted preferences.
type NodeAffinity struct {
	Required  []NodeSelectorTerm        `json:"required,omitempty"`
	Preferred []PreferredSchedulingTerm `json:"preferred,omitempty"`
}

// NodeSelectorTerm is a conjunction of label expressions.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// PreferredSchedulingTerm is a preference with a weight in 1..100.
type PreferredSchedulingTerm struct {
	Weight     int32            `json:"weight"`
	Preference NodeSelectorTerm `json:"preference"`
}

// NodeSelectorRequirement is one label expression: In, NotIn, Exists, DoesNotExist, Gt, Lt.
type NodeSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// Matches reports whether the labels satisfy every expression of the term. An empty term
// matches nothing, as in Kubernetes.
func (t *NodeSelectorTerm) Matches(labels map[string]string) bool {
	if len(t.MatchExpressions) == 0 {
		return false
	}
	for i := range t.MatchExpressions {
		if !t.MatchExpressions[i].Matches(labels) {
			return false
		}
	}
	return true
}

// Matches reports whether labels satisfy the requirement.
func (r *NodeSelectorRequirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case "In":
		return ok && contains(r.Values, v)
	case "NotIn":
		return !ok || !contains(r.Values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(r.Values) != 1 {
			return false
		}
		a, err1 := parseInt(v)
		b, err2 := parseInt(r.Values[0])
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == "Gt" {
			return a > b
		}
		return a < b
	}
	return false
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// MatchesNode reports whether the node's labels satisfy the pod's node selector and required
// node affinity.
func (p *Pod) MatchesNode(n *Node) bool {
	if len(p.NodeSelector) == 0 && p.Affinity == nil {
		return true
	}
	for k, v := range p.NodeSelector {
		if n.Labels[k] != v {
			return false
		}
	}
	if p.Affinity != nil && len(p.Affinity.Required) > 0 {
		for i := range p.Affinity.Required {
			if p.Affinity.Required[i].Matches(n.Labels) {
				return true
			}
		}
		return false
	}
	return true
}

// ToleratesNode reports whether the pod tolerates every NoSchedule and NoExecute taint of n.
func (p *Pod) ToleratesNode(n *Node) bool {
	for i := range n.Taints {
		t := &n.Taints[i]
		if t.Effect == PreferNoSchedule {
			continue
		}
		if !p.Tolerates(t) {
			return false
		}
	}
	return true
}

// Constrained reports whether the pod has any node constraint beyond resources.
func (p *Pod) Constrained() bool {
	return len(p.NodeSelector) > 0 || (p.Affinity != nil && len(p.Affinity.Required) > 0)
}

// Feasible reports whether the pod may run on n now: node accepting the pod, resources free,
// taints tolerated, selector and required affinity matched.
func (p *Pod) Feasible(n *Node) bool {
	return n.Accepts(p) && n.FitsRequest(&p.Requests) && p.ToleratesNode(n) && p.MatchesNode(n)
}

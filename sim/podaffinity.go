package sim

// HostPort is a port a pod's container binds on its node (a containerPort with a hostPort).
type HostPort struct {
	Port int32 `json:"port"`
	// Protocol is TCP (the default when empty), UDP or SCTP.
	Protocol string `json:"protocol,omitempty"`
	// HostIP is the node address bound; empty means 0.0.0.0, every address.
	HostIP string `json:"hostIP,omitempty"`
}

// Conflicts reports whether two host ports cannot be bound on one node, as kube-scheduler's
// NodePorts decides: the same protocol and port on the same address, or on any address when
// either binds 0.0.0.0.
func (h HostPort) Conflicts(o HostPort) bool {
	if h.Port <= 0 || h.Port != o.Port || protocolOrTCP(h.Protocol) != protocolOrTCP(o.Protocol) {
		return false
	}
	a, b := anyAddress(h.HostIP), anyAddress(o.HostIP)
	return a == b || a == allAddresses || b == allAddresses
}

const allAddresses = "0.0.0.0"

func protocolOrTCP(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}

func anyAddress(ip string) string {
	if ip == "" {
		return allAddresses
	}
	return ip
}

// LabelSelector selects objects by their labels, as metav1.LabelSelector: every MatchLabels
// pair and every expression (In, NotIn, Exists, DoesNotExist) must hold. A nil selector
// selects nothing and an empty one everything, as Kubernetes converts them.
type LabelSelector struct {
	MatchLabels      map[string]string         `json:"matchLabels,omitempty"`
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Matches reports whether labels satisfy the selector.
func (s *LabelSelector) Matches(labels map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	for i := range s.MatchExpressions {
		if !s.MatchExpressions[i].Matches(labels) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector is set but has no requirement (it selects everything).
func (s *LabelSelector) Empty() bool {
	return s != nil && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// NamespaceNameLabel is the label Kubernetes gives every namespace, its name. The simulator
// has no Namespace objects, so a namespace's labels are this one only.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// PodAffinity is a set of pod (anti-)affinity terms: required ones filter nodes, preferred
// ones score them.
type PodAffinity struct {
	Required  []PodAffinityTerm         `json:"required,omitempty"`
	Preferred []WeightedPodAffinityTerm `json:"preferred,omitempty"`
}

// PodAffinityTerm selects pods and a topology: the term holds on a node when a selected pod
// runs in the node's domain of TopologyKey (a node label).
type PodAffinityTerm struct {
	Selector *LabelSelector `json:"labelSelector,omitempty"`
	// Namespaces and NamespaceSelector say whose pods count; with neither, the namespace of
	// the pod that carries the term. NamespaceSelector sees only NamespaceNameLabel; an empty
	// one selects every namespace.
	Namespaces        []string       `json:"namespaces,omitempty"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	TopologyKey       string         `json:"topologyKey"`
}

// WeightedPodAffinityTerm is a preferred term with a weight in 1..100.
type WeightedPodAffinityTerm struct {
	Weight int32           `json:"weight"`
	Term   PodAffinityTerm `json:"podAffinityTerm"`
}

// Matches reports whether target is one of the pods the term, carried by owner, selects.
func (t *PodAffinityTerm) Matches(owner, target *Pod) bool {
	return t.coversNamespace(owner.Namespace, target.Namespace) && t.Selector.Matches(target.Labels)
}

func (t *PodAffinityTerm) coversNamespace(own, ns string) bool {
	if len(t.Namespaces) == 0 && t.NamespaceSelector == nil {
		return ns == own
	}
	if contains(t.Namespaces, ns) {
		return true
	}
	return t.NamespaceSelector.Matches(map[string]string{NamespaceNameLabel: ns})
}

// Whether a topology spread constraint filters or scores.
const (
	DoNotSchedule  = "DoNotSchedule"
	ScheduleAnyway = "ScheduleAnyway"
)

// Node inclusion policies of a topology spread constraint.
const (
	PolicyHonor  = "Honor"
	PolicyIgnore = "Ignore"
)

// TopologySpreadConstraint limits how unevenly the pods Selector matches (in the pod's
// namespace) may spread over the domains of TopologyKey, as v1.TopologySpreadConstraint.
type TopologySpreadConstraint struct {
	MaxSkew     int32  `json:"maxSkew"`
	TopologyKey string `json:"topologyKey"`
	// WhenUnsatisfiable is DoNotSchedule (a filter) or ScheduleAnyway (a preference).
	WhenUnsatisfiable string         `json:"whenUnsatisfiable"`
	Selector          *LabelSelector `json:"labelSelector,omitempty"`
	// MinDomains (0 means 1) counts the global minimum as 0 while fewer domains are eligible.
	MinDomains int32 `json:"minDomains,omitempty"`
	// NodeAffinityPolicy (default Honor) and NodeTaintsPolicy (default Ignore) say whether
	// nodes the pod's node affinity excludes, or whose taints it does not tolerate, count.
	NodeAffinityPolicy string `json:"nodeAffinityPolicy,omitempty"`
	NodeTaintsPolicy   string `json:"nodeTaintsPolicy,omitempty"`
}

// HasPodAffinity reports whether the pod has pod affinity or anti-affinity terms of any kind.
func (p *Pod) HasPodAffinity() bool { return p.PodAffinity != nil || p.PodAntiAffinity != nil }

// HasRequiredAntiAffinity reports whether the pod has required anti-affinity terms, which
// constrain where other pods may go.
func (p *Pod) HasRequiredAntiAffinity() bool {
	return p.PodAntiAffinity != nil && len(p.PodAntiAffinity.Required) > 0
}

// affinityCounts counts placed pods with pod affinity, so schedulers can skip inter-pod work
// in O(1) when no pod has any, as kube-scheduler's node lists of pods with affinity do.
type affinityCounts struct {
	withAffinity     int
	withRequiredAnti int
}

func (a *affinityCounts) add(p *Pod, d int) {
	a.withAffinity += d
	if p.HasRequiredAntiAffinity() {
		a.withRequiredAnti += d
	}
}

// PodsWithAffinity returns how many pods on the node have pod (anti-)affinity terms.
func (n *Node) PodsWithAffinity() int { return n.affinity.withAffinity }

// PodsWithRequiredAntiAffinity returns how many pods on the node have required
// anti-affinity terms.
func (n *Node) PodsWithRequiredAntiAffinity() int { return n.affinity.withRequiredAnti }

// PodsWithAffinity returns how many placed pods have pod (anti-)affinity terms.
func (c *Cluster) PodsWithAffinity() int { return c.affinity.withAffinity }

// PodsWithRequiredAntiAffinity returns how many placed pods have required anti-affinity terms.
func (c *Cluster) PodsWithRequiredAntiAffinity() int { return c.affinity.withRequiredAnti }

// trackAffinity updates the counts as p is placed on (d = 1) or taken off (d = -1) its node.
func (c *Cluster) trackAffinity(p *Pod, n *Node, d int) {
	if p.HasPodAffinity() {
		n.affinity.add(p, d)
		c.affinity.add(p, d)
	}
}

package kube

// ObjectMeta is the subset of metav1.ObjectMeta the simulator uses.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	UID         string            `json:"uid,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// OwnerReferences name the pod's controller, whose selector kube-scheduler's default
	// topology spread uses.
	OwnerReferences []OwnerReference `json:"ownerReferences,omitempty"`
}

// OwnerReference mirrors metav1.OwnerReference.
type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Controller *bool  `json:"controller,omitempty"`
}

// Pod is the subset of v1.Pod the simulator reads and writes.
type Pod struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       PodSpec    `json:"spec"`
	Status     PodStatus  `json:"status,omitempty"`
}

// PodSpec is the subset of v1.PodSpec the simulator uses.
type PodSpec struct {
	Containers        []Container       `json:"containers,omitempty"`
	InitContainers    []Container       `json:"initContainers,omitempty"`
	NodeSelector      map[string]string `json:"nodeSelector,omitempty"`
	NodeName          string            `json:"nodeName,omitempty"`
	Affinity          *Affinity         `json:"affinity,omitempty"`
	Tolerations       []Toleration      `json:"tolerations,omitempty"`
	Priority          *int32            `json:"priority,omitempty"`
	PriorityClassName string            `json:"priorityClassName,omitempty"`
	SchedulerName     string            `json:"schedulerName,omitempty"`
	Overhead          map[string]string `json:"overhead,omitempty"`
	// TopologySpreadConstraints mirror v1.TopologySpreadConstraint.
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}

// PodStatus is the subset of v1.PodStatus the simulator writes.
type PodStatus struct {
	Phase string `json:"phase,omitempty"`
}

// Container is the subset of v1.Container the simulator uses.
type Container struct {
	Name      string               `json:"name,omitempty"`
	Image     string               `json:"image,omitempty"`
	Resources ResourceRequirements `json:"resources,omitempty"`
	Ports     []ContainerPort      `json:"ports,omitempty"`
	// RestartPolicy Always makes an init container a sidecar, which runs as long as the pod
	// (its host ports stay bound).
	RestartPolicy string `json:"restartPolicy,omitempty"`
}

// ContainerPort mirrors v1.ContainerPort; only ports with a hostPort matter to scheduling.
type ContainerPort struct {
	Name          string `json:"name,omitempty"`
	ContainerPort int32  `json:"containerPort"`
	HostPort      int32  `json:"hostPort,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	HostIP        string `json:"hostIP,omitempty"`
}

// ResourceRequirements holds quantities as strings, as the API serialises them.
type ResourceRequirements struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// Toleration mirrors v1.Toleration.
type Toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Affinity mirrors v1.Affinity.
type Affinity struct {
	NodeAffinity    *NodeAffinity `json:"nodeAffinity,omitempty"`
	PodAffinity     *PodAffinity  `json:"podAffinity,omitempty"`
	PodAntiAffinity *PodAffinity  `json:"podAntiAffinity,omitempty"`
}

// PodAffinity mirrors v1.PodAffinity and v1.PodAntiAffinity, which have the same fields.
type PodAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  []PodAffinityTerm         `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PodAffinityTerm mirrors v1.PodAffinityTerm.
type PodAffinityTerm struct {
	LabelSelector     *LabelSelector `json:"labelSelector,omitempty"`
	Namespaces        []string       `json:"namespaces,omitempty"`
	TopologyKey       string         `json:"topologyKey"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	MatchLabelKeys    []string       `json:"matchLabelKeys,omitempty"`
	MismatchLabelKeys []string       `json:"mismatchLabelKeys,omitempty"`
}

// WeightedPodAffinityTerm mirrors v1.WeightedPodAffinityTerm.
type WeightedPodAffinityTerm struct {
	Weight          int32           `json:"weight"`
	PodAffinityTerm PodAffinityTerm `json:"podAffinityTerm"`
}

// LabelSelector mirrors metav1.LabelSelector.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement mirrors metav1.LabelSelectorRequirement.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// TopologySpreadConstraint mirrors v1.TopologySpreadConstraint.
type TopologySpreadConstraint struct {
	MaxSkew            int32          `json:"maxSkew"`
	TopologyKey        string         `json:"topologyKey"`
	WhenUnsatisfiable  string         `json:"whenUnsatisfiable"`
	LabelSelector      *LabelSelector `json:"labelSelector,omitempty"`
	MinDomains         *int32         `json:"minDomains,omitempty"`
	NodeAffinityPolicy *string        `json:"nodeAffinityPolicy,omitempty"`
	NodeTaintsPolicy   *string        `json:"nodeTaintsPolicy,omitempty"`
	MatchLabelKeys     []string       `json:"matchLabelKeys,omitempty"`
}

// NodeAffinity mirrors v1.NodeAffinity.
type NodeAffinity struct {
	RequiredDuringSchedulingIgnoredDuringExecution  *NodeSelector             `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeSelector mirrors v1.NodeSelector.
type NodeSelector struct {
	NodeSelectorTerms []NodeSelectorTerm `json:"nodeSelectorTerms"`
}

// NodeSelectorTerm mirrors v1.NodeSelectorTerm.
type NodeSelectorTerm struct {
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// NodeSelectorRequirement mirrors v1.NodeSelectorRequirement.
type NodeSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// PreferredSchedulingTerm mirrors v1.PreferredSchedulingTerm.
type PreferredSchedulingTerm struct {
	Weight     int32            `json:"weight"`
	Preference NodeSelectorTerm `json:"preference"`
}

// Node is the subset of v1.Node the simulator writes for extenders.
type Node struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       NodeSpec   `json:"spec,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

// NodeSpec mirrors the used part of v1.NodeSpec.
type NodeSpec struct {
	Unschedulable bool    `json:"unschedulable,omitempty"`
	Taints        []Taint `json:"taints,omitempty"`
}

// Taint mirrors v1.Taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// NodeStatus mirrors the used part of v1.NodeStatus.
type NodeStatus struct {
	Capacity    map[string]string `json:"capacity,omitempty"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
}

// NodeList mirrors v1.NodeList.
type NodeList struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Items      []Node `json:"items"`
}

package extender

import "github.com/jikken-dev/jikken/sim/kube"

// The wire types mirror k8s.io/kube-scheduler/extender/v1. Like the upstream structs they carry
// no JSON tags, so field names go on the wire as written (Pod, Nodes, NodeNames, ...), exactly
// as kube-scheduler sends them.

// Args is ExtenderArgs, the body of filter and prioritize calls.
type Args struct {
	Pod       *kube.Pod
	Nodes     *kube.NodeList
	NodeNames *[]string
}

// FailedNodesMap maps a node name to why it was filtered out.
type FailedNodesMap map[string]string

// FilterResult is ExtenderFilterResult.
type FilterResult struct {
	Nodes                      *kube.NodeList
	NodeNames                  *[]string
	FailedNodes                FailedNodesMap
	FailedAndUnresolvableNodes FailedNodesMap
	Error                      string
}

// HostPriority is one node's score in [0, MaxPriority].
type HostPriority struct {
	Host  string
	Score int64
}

// MaxPriority is the top of an extender's score range (extenderv1.MaxExtenderPriority).
const MaxPriority = 10

// BindingArgs is ExtenderBindingArgs.
type BindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       string
	Node         string
}

// BindingResult is ExtenderBindingResult.
type BindingResult struct {
	Error string
}

// Victims are the pods to evict on one node.
type Victims struct {
	Pods             []*kube.Pod
	NumPDBViolations int64
}

// MetaPod identifies a pod by UID.
type MetaPod struct {
	UID string
}

// MetaVictims are victims by UID.
type MetaVictims struct {
	Pods             []*MetaPod
	NumPDBViolations int64
}

// PreemptionArgs is ExtenderPreemptionArgs.
type PreemptionArgs struct {
	Pod                   *kube.Pod
	NodeNameToVictims     map[string]*Victims
	NodeNameToMetaVictims map[string]*MetaVictims
}

// PreemptionResult is ExtenderPreemptionResult.
type PreemptionResult struct {
	NodeNameToMetaVictims map[string]*MetaVictims
}

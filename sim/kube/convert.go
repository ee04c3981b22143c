package kube

import (
	"fmt"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/sim"
)

// Annotations and labels the simulator reads from Pod manifests.
const (
	// DurationAnnotation is how long the pod runs: seconds ("3600") or a Go duration ("1h").
	DurationAnnotation = "sim.jikken.dev/duration"
	// SubmitAnnotation is when the pod is submitted, in seconds from the start.
	SubmitAnnotation = "sim.jikken.dev/submit"
	// UserAnnotation names the submitting user; the namespace is used without it.
	UserAnnotation = "sim.jikken.dev/user"
	// SimSpecAnnotation is k8s-cluster-simulator's phase list (YAML: "- seconds: 5 ..."); the
	// duration is the sum of the phases' seconds.
	SimSpecAnnotation = "simSpec"
	// PodGroupLabel names the pod's gang, as the coscheduling plugin does.
	PodGroupLabel = "scheduling.x-k8s.io/pod-group"
	// PodGroupSizeAnnotation is the gang's size; without it the number of pods in the trace
	// with the same group is used.
	PodGroupSizeAnnotation = "sim.jikken.dev/pod-group-size"
	// PodGroupMinMemberAnnotation is how many members must start together (the PodGroup's
	// minMember; default all); PodGroupTimeoutAnnotation is how long members placed early
	// wait for the rest (its scheduleTimeoutSeconds; seconds or a Go duration).
	PodGroupMinMemberAnnotation = "sim.jikken.dev/pod-group-min-member"
	PodGroupTimeoutAnnotation   = "sim.jikken.dev/pod-group-timeout"
)

type simPhase struct {
	Seconds float64 `json:"seconds"`
}

// Duration returns the pod's simulated run time from its annotations.
func (p *Pod) Duration() (sim.Time, error) {
	if s, ok := p.Metadata.Annotations[DurationAnnotation]; ok {
		d, err := sim.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("annotation %s: %w", DurationAnnotation, err)
		}
		return d, nil
	}
	if s, ok := p.Metadata.Annotations[SimSpecAnnotation]; ok {
		var phases []simPhase
		if err := yaml.Unmarshal([]byte(s), &phases); err != nil {
			return 0, fmt.Errorf("annotation %s: %w", SimSpecAnnotation, err)
		}
		var total float64
		for i, ph := range phases {
			if ph.Seconds < 0 {
				return 0, fmt.Errorf("annotation %s: phase %d has negative seconds", SimSpecAnnotation, i)
			}
			total += ph.Seconds
		}
		return sim.Seconds(total), nil
	}
	return 0, fmt.Errorf("no duration: add annotation %s (seconds or 1h30m) or a %s phase list", DurationAnnotation, SimSpecAnnotation)
}

// Submit returns the submit time from the annotation, or 0.
func (p *Pod) Submit() (float64, error) {
	s, ok := p.Metadata.Annotations[SubmitAnnotation]
	if !ok {
		return 0, nil
	}
	d, err := sim.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("annotation %s: %w", SubmitAnnotation, err)
	}
	return d.Seconds(), nil
}

// Requests returns the pod's effective request as the scheduler computes it: the sum over
// containers, at least the largest init container, plus overhead. A container with limits but
// no requests requests its limits, as the API server defaults it.
func (p *Pod) Requests(names *sim.Names) (sim.Resources, error) {
	return p.requests(names, false)
}

// requests sums the containers' requests; with nonZero, a container that sets no CPU or
// memory request (nor limit) counts kube-scheduler's scoring defaults instead.
func (p *Pod) requests(names *sim.Names, nonZero bool) (sim.Resources, error) {
	var total, initMax sim.Resources
	for i := range p.Spec.Containers {
		r, err := containerRequests(&p.Spec.Containers[i], names, nonZero)
		if err != nil {
			return total, fmt.Errorf("container %d: %w", i, err)
		}
		total.Add(&r)
	}
	for i := range p.Spec.InitContainers {
		r, err := containerRequests(&p.Spec.InitContainers[i], names, nonZero)
		if err != nil {
			return total, fmt.Errorf("init container %d: %w", i, err)
		}
		for j := range r {
			initMax[j] = max(initMax[j], r[j])
		}
	}
	for j := range total {
		total[j] = max(total[j], initMax[j])
	}
	if len(p.Spec.Overhead) > 0 {
		o, err := names.Parse(p.Spec.Overhead)
		if err != nil {
			return total, fmt.Errorf("overhead: %w", err)
		}
		total.Add(&o)
	}
	return total, nil
}

func containerRequests(c *Container, names *sim.Names, nonZero bool) (sim.Resources, error) {
	q := map[string]string{}
	for k, v := range c.Resources.Limits {
		q[k] = v
	}
	for k, v := range c.Resources.Requests {
		q[k] = v
	}
	r, err := names.Parse(q)
	if nonZero {
		if _, ok := q[sim.CPU]; !ok {
			r[sim.CPUIndex] = sim.DefaultCPURequest
		}
		if _, ok := q[sim.Memory]; !ok {
			r[sim.MemoryIndex] = sim.DefaultMemoryRequest
		}
	}
	return r, err
}

// ToSim converts the manifest into a simulator pod (without its submit time).
func (p *Pod) ToSim(names *sim.Names) (*sim.Pod, error) {
	req, err := p.Requests(names)
	if err != nil {
		return nil, err
	}
	nz, err := p.requests(names, true)
	if err != nil {
		return nil, err
	}
	d, err := p.Duration()
	if err != nil {
		return nil, err
	}
	sp := &sim.Pod{Name: p.Metadata.Name, Namespace: p.Metadata.Namespace, Labels: p.Metadata.Labels,
		Requests: req, NonZero: [2]int64{nz[sim.CPUIndex], nz[sim.MemoryIndex]}, Duration: d, NodeSelector: p.Spec.NodeSelector}
	if sp.Namespace == "" {
		sp.Namespace = "default"
	}
	sp.User = p.Metadata.Annotations[UserAnnotation]
	if sp.User == "" {
		sp.User = sp.Namespace
	}
	if p.Spec.Priority != nil {
		sp.Priority = *p.Spec.Priority
	}
	for _, t := range p.Spec.Tolerations {
		sp.Tolerations = append(sp.Tolerations, sim.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: sim.TaintEffect(t.Effect)})
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		na := &sim.NodeAffinity{}
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for _, t := range r.NodeSelectorTerms {
				na.Required = append(na.Required, termToSim(t))
			}
		}
		for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			na.Preferred = append(na.Preferred, sim.PreferredSchedulingTerm{Weight: t.Weight, Preference: termToSim(t.Preference)})
		}
		sp.Affinity = na
	}
	sp.HostPorts = p.Spec.hostPorts()
	if a := p.Spec.Affinity; a != nil {
		if sp.PodAffinity, err = podAffinityToSim(a.PodAffinity, p.Metadata.Labels, "podAffinity"); err != nil {
			return nil, err
		}
		if sp.PodAntiAffinity, err = podAffinityToSim(a.PodAntiAffinity, p.Metadata.Labels, "podAntiAffinity"); err != nil {
			return nil, err
		}
	}
	if sp.TopologySpread, err = spreadToSim(p.Spec.TopologySpreadConstraints, p.Metadata.Labels); err != nil {
		return nil, err
	}
	sp.Gang = p.Metadata.Labels[PodGroupLabel]
	if s, ok := p.Metadata.Annotations[PodGroupSizeAnnotation]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("annotation %s: %q must be a positive integer", PodGroupSizeAnnotation, s)
		}
		sp.GangSize = n
	}
	if s, ok := p.Metadata.Annotations[PodGroupMinMemberAnnotation]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("annotation %s: %q must be a positive integer", PodGroupMinMemberAnnotation, s)
		}
		sp.GangMin = n
	}
	if s, ok := p.Metadata.Annotations[PodGroupTimeoutAnnotation]; ok {
		d, err := sim.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", PodGroupTimeoutAnnotation, err)
		}
		sp.GangTimeout = d
	}
	if sp.Gang == "" && (sp.GangMin != 0 || sp.GangTimeout != 0) {
		return nil, fmt.Errorf("annotations %s and %s need the label %s", PodGroupMinMemberAnnotation, PodGroupTimeoutAnnotation, PodGroupLabel)
	}
	return sp, nil
}

func termToSim(t NodeSelectorTerm) sim.NodeSelectorTerm {
	var out sim.NodeSelectorTerm
	for _, e := range t.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, sim.NodeSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	return out
}

func termFromSim(t sim.NodeSelectorTerm) NodeSelectorTerm {
	var out NodeSelectorTerm
	for _, e := range t.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, NodeSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	return out
}

// FromSim renders a simulator pod as a manifest with one container holding its requests,
// as an extender receives it.
func FromSim(p *sim.Pod, names *sim.Names) Pod {
	prio := p.Priority
	req := p.Requests
	req[sim.PodsIndex] = 0
	kp := Pod{APIVersion: "v1", Kind: "Pod",
		Metadata: ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: UID(p), Labels: p.Labels,
			Annotations: map[string]string{DurationAnnotation: strconv.FormatFloat(p.Duration.Seconds(), 'f', -1, 64), UserAnnotation: p.User}},
		Spec: PodSpec{Containers: []Container{{Name: "main", Resources: ResourceRequirements{Requests: names.Map(&req)}}},
			NodeSelector: p.NodeSelector, Priority: &prio},
		Status: PodStatus{Phase: p.Phase.String()},
	}
	if p.Node != nil && !p.Assumed() {
		kp.Spec.NodeName = p.Node.Name
	}
	if p.Gang != "" {
		if kp.Metadata.Labels == nil {
			kp.Metadata.Labels = map[string]string{}
		}
		kp.Metadata.Labels[PodGroupLabel] = p.Gang
	}
	for _, t := range p.Tolerations {
		kp.Spec.Tolerations = append(kp.Spec.Tolerations, Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: string(t.Effect)})
	}
	if a := p.Affinity; a != nil {
		na := &NodeAffinity{}
		if len(a.Required) > 0 {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &NodeSelector{}
			for _, t := range a.Required {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, termFromSim(t))
			}
		}
		for _, t := range a.Preferred {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, PreferredSchedulingTerm{Weight: t.Weight, Preference: termFromSim(t.Preference)})
		}
		kp.Spec.Affinity = &Affinity{NodeAffinity: na}
	}
	if p.PodAffinity != nil || p.PodAntiAffinity != nil {
		if kp.Spec.Affinity == nil {
			kp.Spec.Affinity = &Affinity{}
		}
		kp.Spec.Affinity.PodAffinity = podAffinityFromSim(p.PodAffinity)
		kp.Spec.Affinity.PodAntiAffinity = podAffinityFromSim(p.PodAntiAffinity)
	}
	for _, hp := range p.HostPorts {
		c := &kp.Spec.Containers[0]
		c.Ports = append(c.Ports, ContainerPort{ContainerPort: hp.Port, HostPort: hp.Port, Protocol: hp.Protocol, HostIP: hp.HostIP})
	}
	kp.Spec.TopologySpreadConstraints = spreadFromSim(p.TopologySpread)
	return kp
}

// UID is the stable UID the simulator gives a pod in API payloads.
func UID(p *sim.Pod) string { return "sim-pod-" + strconv.Itoa(p.ID) }

// NodeFromSim renders a node as the API would show it; allocatable is what is still free, so
// an extender sees current availability without tracking bound pods.
func NodeFromSim(n *sim.Node, names *sim.Names) Node {
	free := n.Free()
	kn := Node{APIVersion: "v1", Kind: "Node", Metadata: ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec:   NodeSpec{Unschedulable: n.Cordoned},
		Status: NodeStatus{Capacity: names.Map(&n.Capacity), Allocatable: names.Map(&free)}}
	for _, t := range n.Taints {
		kn.Spec.Taints = append(kn.Spec.Taints, Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	return kn
}

package kubehost

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
)

// Epoch is the wall-clock instant simulated time 0 stands for in API objects (creation and
// queue timestamps); a fixed instant keeps the objects the same run after run.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func wallTime(t sim.Time) time.Time { return Epoch.Add(t.Duration()) }

// objects converts simulated pods and nodes to API objects once and keeps them, by ID.
type objects struct {
	names *sim.Names
	pods  []*podInfo
	nodes []*nodeInfo
	// generation numbers node views as kube-scheduler's NodeInfo generation does.
	generation int64
	lastPod    *v1.Pod
	lastSim    *sim.Pod
	// made counts the pod views made since the last sweep.
	made int
}

// sweep drops the views of pods that ended for good once the views made since the last sweep
// reach half the pods seen (and at least 1,024): a long run keeps the objects of live pods
// only, at O(1) amortised cost per pod.
func (o *objects) sweep(queued []*queuedPod) {
	if o.made < 1024 || o.made < len(o.pods)/2 {
		return
	}
	o.made = 0
	for i, pi := range o.pods {
		if pi != nil && (pi.sp.Phase == sim.Succeeded || pi.sp.Phase == sim.Failed) {
			o.pods[i] = nil
			if i < len(queued) {
				queued[i] = nil
			}
		}
	}
	o.lastPod, o.lastSim = nil, nil
}

// podInfo is the simulator's fwk.PodInfo: the pod as an API object, made once.
type podInfo struct {
	sp  *sim.Pod
	pod *v1.Pod
	res fwk.PodResource
}

var _ fwk.PodInfo = (*podInfo)(nil)

// pod returns the cached view of p, with the node name it is bound or assumed to now.
func (o *objects) pod(p *sim.Pod) *podInfo {
	for len(o.pods) <= p.ID {
		o.pods = append(o.pods, nil)
	}
	pi := o.pods[p.ID]
	if pi == nil || pi.sp != p {
		pi = &podInfo{sp: p, pod: o.newPod(p)}
		o.made++
		cpu, mem := p.NonZeroRequests()
		pi.res = fwk.PodResource{Resource: o.resource(&p.Requests), Non0CPU: cpu, Non0Mem: mem / sim.Milli}
		o.pods[p.ID] = pi
	}
	node, phase := "", v1.PodPending
	if p.Node != nil {
		node = p.Node.Name
	}
	switch {
	case p.Phase == sim.Running && !p.Assumed():
		phase = v1.PodRunning
	case p.Phase == sim.Succeeded:
		phase = v1.PodSucceeded
	case p.Phase == sim.Failed:
		phase = v1.PodFailed
	}
	if pi.pod.Spec.NodeName != node || pi.pod.Status.Phase != phase {
		// A new object, as the API would give: a plugin may still hold the old one.
		cp := *pi.pod
		cp.Spec.NodeName, cp.Status.Phase = node, phase
		pi.pod = &cp
	}
	return pi
}

// simPod finds the simulated pod behind an API pod the host handed out. The pod of the
// attempt under way is asked for once per node and plugin, so the last answer is kept.
func (o *objects) simPod(pod *v1.Pod) (*sim.Pod, bool) {
	if pod == o.lastPod {
		return o.lastSim, true
	}
	id, ok := podID(pod.UID)
	if !ok || id >= len(o.pods) || o.pods[id] == nil {
		return nil, false
	}
	o.lastPod, o.lastSim = pod, o.pods[id].sp
	return o.lastSim, true
}

func podID(uid types.UID) (int, bool) {
	const prefix = "sim-pod-"
	s := string(uid)
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return 0, false
	}
	id, err := strconv.Atoi(s[len(prefix):])
	return id, err == nil && id >= 0
}

func (o *objects) newPod(p *sim.Pod) *v1.Pod {
	prio := p.Priority
	ns := p.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	req := p.Requests
	req[sim.PodsIndex] = 0
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, UID: types.UID(kube.UID(p)), Labels: p.Labels,
			CreationTimestamp: metav1.NewTime(wallTime(p.Submit)),
			Annotations: map[string]string{kube.DurationAnnotation: strconv.FormatFloat(p.Duration.Seconds(), 'f', -1, 64),
				kube.UserAnnotation: p.User}},
		Spec: v1.PodSpec{SchedulerName: v1.DefaultSchedulerName, Priority: &prio, NodeSelector: p.NodeSelector,
			Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{Requests: o.list(&req)}}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	if p.Gang != "" {
		pod.Labels = make(map[string]string, len(p.Labels)+1)
		for k, v := range p.Labels {
			pod.Labels[k] = v
		}
		pod.Labels[kube.PodGroupLabel] = p.Gang
	}
	for _, t := range p.Tolerations {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, v1.Toleration{Key: t.Key, Operator: v1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: v1.TaintEffect(t.Effect)})
	}
	if a := p.Affinity; a != nil {
		na := &v1.NodeAffinity{}
		if len(a.Required) > 0 {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
			for _, t := range a.Required {
				na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
					na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, term(t))
			}
		}
		for _, t := range a.Preferred {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: t.Weight, Preference: term(t.Preference)})
		}
		pod.Spec.Affinity = &v1.Affinity{NodeAffinity: na}
	}
	return pod
}

func term(t sim.NodeSelectorTerm) v1.NodeSelectorTerm {
	var out v1.NodeSelectorTerm
	for _, e := range t.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, v1.NodeSelectorRequirement{Key: e.Key,
			Operator: v1.NodeSelectorOperator(e.Operator), Values: e.Values})
	}
	return out
}

// list renders a vector as a resource list; quantities stay exact (milli-units where needed).
func (o *objects) list(r *sim.Resources) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < o.names.Len(); i++ {
		if r[i] == 0 {
			continue
		}
		format := resource.DecimalSI
		if i == sim.MemoryIndex || o.names.Name(i) == string(v1.ResourceEphemeralStorage) {
			format = resource.BinarySI
		}
		var q *resource.Quantity
		if r[i]%sim.Milli == 0 && i != sim.CPUIndex {
			q = resource.NewQuantity(r[i]/sim.Milli, format)
		} else {
			q = resource.NewMilliQuantity(r[i], format)
		}
		out[v1.ResourceName(o.names.Name(i))] = *q
	}
	return out
}

// GetPod implements fwk.PodInfo.
func (pi *podInfo) GetPod() *v1.Pod { return pi.pod }

// The host gives hosted plugins no pod affinity (kube-default models it), so a pod has no
// affinity terms.

// GetRequiredAffinityTerms implements fwk.PodInfo.
func (pi *podInfo) GetRequiredAffinityTerms() []fwk.AffinityTerm { return nil }

// GetRequiredAntiAffinityTerms implements fwk.PodInfo.
func (pi *podInfo) GetRequiredAntiAffinityTerms() []fwk.AffinityTerm { return nil }

// GetPreferredAffinityTerms implements fwk.PodInfo.
func (pi *podInfo) GetPreferredAffinityTerms() []fwk.WeightedAffinityTerm { return nil }

// GetPreferredAntiAffinityTerms implements fwk.PodInfo.
func (pi *podInfo) GetPreferredAntiAffinityTerms() []fwk.WeightedAffinityTerm { return nil }

// CalculateResource implements fwk.PodInfo.
func (pi *podInfo) CalculateResource() fwk.PodResource { return pi.res }

// res is the simulator's fwk.Resource, in the units kube-scheduler uses: milli-CPU, bytes,
// and counts for pods and extended resources.
type res struct {
	milliCPU, memory, ephemeral int64
	pods                        int
	scalar                      map[v1.ResourceName]int64
}

var _ fwk.Resource = (*res)(nil)

func (o *objects) resource(r *sim.Resources) *res {
	out := &res{milliCPU: r[sim.CPUIndex], memory: r[sim.MemoryIndex] / sim.Milli, pods: int(r[sim.PodsIndex] / sim.Milli)}
	for i := sim.GPUIndex; i < o.names.Len(); i++ {
		if i == sim.PodsIndex || r[i] == 0 {
			continue
		}
		name := v1.ResourceName(o.names.Name(i))
		if name == v1.ResourceEphemeralStorage {
			out.ephemeral = r[i] / sim.Milli
			continue
		}
		if out.scalar == nil {
			out.scalar = map[v1.ResourceName]int64{}
		}
		out.scalar[name] = r[i] / sim.Milli
	}
	return out
}

// GetMilliCPU implements fwk.Resource.
func (r *res) GetMilliCPU() int64 { return r.milliCPU }

// GetMemory implements fwk.Resource.
func (r *res) GetMemory() int64 { return r.memory }

// GetEphemeralStorage implements fwk.Resource.
func (r *res) GetEphemeralStorage() int64 { return r.ephemeral }

// GetAllowedPodNumber implements fwk.Resource.
func (r *res) GetAllowedPodNumber() int { return r.pods }

// GetScalarResources implements fwk.Resource.
func (r *res) GetScalarResources() map[v1.ResourceName]int64 { return r.scalar }

// SetMaxResource implements fwk.Resource: each quantity becomes the larger of its own and rl's.
func (r *res) SetMaxResource(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.milliCPU = max(r.milliCPU, q.MilliValue())
		case v1.ResourceMemory:
			r.memory = max(r.memory, q.Value())
		case v1.ResourceEphemeralStorage:
			r.ephemeral = max(r.ephemeral, q.Value())
		case v1.ResourcePods:
			r.pods = max(r.pods, int(q.Value()))
		default:
			if r.scalar == nil {
				r.scalar = map[v1.ResourceName]int64{}
			}
			r.scalar[name] = max(r.scalar[name], q.Value())
		}
	}
}

// nodeInfo is the simulator's fwk.NodeInfo. A live view follows its simulated node (sn) and
// refreshes itself when the node's allocation or schedulability changed; Snapshot and the
// mutating methods give a detached copy that plugins may change freely (as preemption does
// with kube-scheduler's NodeInfo clones).
type nodeInfo struct {
	o  *objects
	sn *sim.Node
	// live is false for a detached copy.
	live bool

	node       *v1.Node
	version    uint64
	cordoned   bool
	generation int64
	requested  sim.Resources
	nonZero    [2]int64
	pods       []fwk.PodInfo
	podsFresh  bool
	reqRes     *res
	nonZeroRes *res
	allocRes   *res
}

var _ fwk.NodeInfo = (*nodeInfo)(nil)

// node returns the live view of n.
func (o *objects) node(n *sim.Node) *nodeInfo {
	for len(o.nodes) <= n.ID {
		o.nodes = append(o.nodes, nil)
	}
	ni := o.nodes[n.ID]
	if ni == nil || !ni.live || ni.sn != n {
		ni = &nodeInfo{o: o, sn: n, live: true, node: o.newNode(n), version: n.Version, cordoned: n.Cordoned}
		ni.load()
		o.nodes[n.ID] = ni
	}
	ni.sync()
	return ni
}

func (o *objects) newNode(n *sim.Node) *v1.Node {
	alloc := o.list(&n.Capacity)
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: types.UID("sim-node-" + strconv.Itoa(n.ID)), Labels: n.Labels},
		Spec:       v1.NodeSpec{Unschedulable: n.Cordoned},
		Status: v1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
	for _, t := range n.Taints {
		node.Spec.Taints = append(node.Spec.Taints, v1.Taint{Key: t.Key, Value: t.Value, Effect: v1.TaintEffect(t.Effect)})
	}
	return node
}

// sync refreshes a live view whose node changed since it was made.
func (ni *nodeInfo) sync() {
	if !ni.live || (ni.version == ni.sn.Version && ni.cordoned == ni.sn.Cordoned) {
		return
	}
	if ni.cordoned != ni.sn.Cordoned {
		node := ni.node.DeepCopy()
		node.Spec.Unschedulable = ni.sn.Cordoned
		ni.node, ni.cordoned = node, ni.sn.Cordoned
	}
	ni.version = ni.sn.Version
	ni.load()
}

func (ni *nodeInfo) load() {
	ni.o.generation++
	ni.generation = ni.o.generation
	ni.requested, ni.nonZero = ni.sn.Allocated, ni.sn.NonZeroAllocated
	ni.pods, ni.podsFresh = nil, false // a plugin may keep the old slice
	ni.reqRes, ni.nonZeroRes = nil, nil
}

// simNode returns the simulated node a view stands for: the node itself for a live view, a
// copy carrying the view's pods and allocation for a detached one.
func (ni *nodeInfo) simNode() *sim.Node {
	if ni.live {
		ni.sync()
		return ni.sn
	}
	n := *ni.sn
	n.Allocated, n.NonZeroAllocated = ni.requested, ni.nonZero
	n.Cordoned = ni.node.Spec.Unschedulable
	return &n
}

// detach turns a live view a plugin is about to change into a copy; the host makes a new
// live view the next time it needs one.
func (ni *nodeInfo) detach() {
	if !ni.live {
		return
	}
	ni.sync()
	ni.GetPods()
	ni.pods = append([]fwk.PodInfo(nil), ni.pods...)
	ni.live = false
}

// Node implements fwk.NodeInfo.
func (ni *nodeInfo) Node() *v1.Node {
	ni.sync()
	return ni.node
}

// GetPods implements fwk.NodeInfo: the pods running on or reserved for the node.
func (ni *nodeInfo) GetPods() []fwk.PodInfo {
	ni.sync()
	if ni.live && !ni.podsFresh {
		for _, p := range ni.sn.Pods() {
			ni.pods = append(ni.pods, ni.o.pod(p))
		}
		ni.podsFresh = true
	}
	return ni.pods
}

// GetPodsWithAffinity implements fwk.NodeInfo; hosted plugins see no pod affinity.
func (ni *nodeInfo) GetPodsWithAffinity() []fwk.PodInfo { return nil }

// GetPodsWithRequiredAntiAffinity implements fwk.NodeInfo.
func (ni *nodeInfo) GetPodsWithRequiredAntiAffinity() []fwk.PodInfo { return nil }

// GetPodsWithRequiredNonHostScopedAntiAffinity implements fwk.NodeInfo.
func (ni *nodeInfo) GetPodsWithRequiredNonHostScopedAntiAffinity() []fwk.PodInfo { return nil }

// GetUsedPorts implements fwk.NodeInfo; hosted plugins see no host ports (kube-default's
// NodePorts does).
func (ni *nodeInfo) GetUsedPorts() fwk.HostPortInfo { return nil }

// GetRequested implements fwk.NodeInfo.
func (ni *nodeInfo) GetRequested() fwk.Resource {
	ni.sync()
	if ni.reqRes == nil {
		ni.reqRes = ni.o.resource(&ni.requested)
	}
	return ni.reqRes
}

// GetNonZeroRequested implements fwk.NodeInfo.
func (ni *nodeInfo) GetNonZeroRequested() fwk.Resource {
	ni.sync()
	if ni.nonZeroRes == nil {
		r := ni.requested
		r[sim.CPUIndex], r[sim.MemoryIndex] = ni.nonZero[0], ni.nonZero[1]
		ni.nonZeroRes = ni.o.resource(&r)
	}
	return ni.nonZeroRes
}

// GetAllocatable implements fwk.NodeInfo.
func (ni *nodeInfo) GetAllocatable() fwk.Resource {
	if ni.allocRes == nil {
		ni.allocRes = ni.o.resource(&ni.sn.Capacity)
	}
	return ni.allocRes
}

// GetImageStates implements fwk.NodeInfo; the simulator models no images.
func (ni *nodeInfo) GetImageStates() map[string]*fwk.ImageStateSummary { return nil }

// GetPVCRefCounts implements fwk.NodeInfo; the simulator models no volumes.
func (ni *nodeInfo) GetPVCRefCounts() map[string]int { return nil }

// GetGeneration implements fwk.NodeInfo.
func (ni *nodeInfo) GetGeneration() int64 {
	ni.sync()
	return ni.generation
}

// GetNodeDeclaredFeatures implements fwk.NodeInfo; simulated nodes declare none.
func (ni *nodeInfo) GetNodeDeclaredFeatures() ndf.FeatureSet { return ndf.FeatureSet{} }

// Snapshot implements fwk.NodeInfo: a detached copy.
func (ni *nodeInfo) Snapshot() fwk.NodeInfo {
	ni.sync()
	cp := *ni
	cp.live = false
	cp.pods = append([]fwk.PodInfo(nil), ni.GetPods()...)
	cp.podsFresh = true
	return &cp
}

// String implements fwk.NodeInfo.
func (ni *nodeInfo) String() string {
	return fmt.Sprintf("&NodeInfo{Node:%s, Pods:%d, Requested:%s, Generation:%d}", ni.node.Name, len(ni.GetPods()),
		ni.o.names.Format(&ni.requested), ni.generation)
}

// AddPodInfo implements fwk.NodeInfo on a detached copy (a live view detaches first).
func (ni *nodeInfo) AddPodInfo(pi fwk.PodInfo) {
	ni.detach()
	r, nz := ni.o.vector(pi)
	ni.requested.Add(&r)
	ni.nonZero[0] += nz[0]
	ni.nonZero[1] += nz[1]
	ni.pods = append(ni.pods, pi)
	ni.changed()
}

// RemovePod implements fwk.NodeInfo on a detached copy (a live view detaches first).
func (ni *nodeInfo) RemovePod(_ klog.Logger, pod *v1.Pod) error {
	ni.detach()
	for i, pi := range ni.pods {
		if pi.GetPod().UID != pod.UID {
			continue
		}
		r, nz := ni.o.vector(pi)
		ni.requested.Sub(&r)
		ni.nonZero[0] -= nz[0]
		ni.nonZero[1] -= nz[1]
		ni.pods = append(ni.pods[:i:i], ni.pods[i+1:]...)
		ni.changed()
		return nil
	}
	return fmt.Errorf("no pod %s/%s on node %s", pod.Namespace, pod.Name, ni.node.Name)
}

// SetNode implements fwk.NodeInfo on a detached copy (a live view detaches first).
func (ni *nodeInfo) SetNode(node *v1.Node) {
	ni.detach()
	ni.node = node
	ni.changed()
}

func (ni *nodeInfo) changed() {
	ni.o.generation++
	ni.generation = ni.o.generation
	ni.reqRes, ni.nonZeroRes = nil, nil
}

// vector returns a pod's requests as a simulator vector and its non-zero CPU and memory.
func (o *objects) vector(pi fwk.PodInfo) (sim.Resources, [2]int64) {
	if p, ok := pi.(*podInfo); ok {
		cpu, mem := p.sp.NonZeroRequests()
		return p.sp.Requests, [2]int64{cpu, mem}
	}
	pr := pi.CalculateResource()
	var r sim.Resources
	r[sim.CPUIndex] = pr.Resource.GetMilliCPU()
	r[sim.MemoryIndex] = pr.Resource.GetMemory() * sim.Milli
	r[sim.PodsIndex] = sim.Milli
	for name, v := range pr.Resource.GetScalarResources() {
		if i, ok := o.names.Lookup(string(name)); ok {
			r[i] = v * sim.Milli
		}
	}
	if i, ok := o.names.Lookup(string(v1.ResourceEphemeralStorage)); ok {
		r[i] = pr.Resource.GetEphemeralStorage() * sim.Milli
	}
	return r, [2]int64{pr.Non0CPU, pr.Non0Mem * sim.Milli}
}

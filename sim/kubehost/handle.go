package kubehost

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
)

// ErrNoAPIServer is what a request through Handle.ClientSet (or KubeConfig) fails with when
// the simulation does not model it: there is no API server. The simulation answers reads of
// nodes and pods and the deletion of a running pod; anything else a plugin needs should come
// from the snapshot (SnapshotSharedLister).
var ErrNoAPIServer = errors.New("not available in simulation: jikken sim has no API server (it answers GET of nodes and pods and DELETE of a running pod only); read objects from Handle.SnapshotSharedLister() instead")

// Event is one event a plugin recorded through Handle.EventRecorder.
type Event struct {
	Time      sim.Time
	Regarding string // namespace/name of the object, or its kind when it has no name
	Type      string // Normal or Warning
	Reason    string
	Action    string
	Note      string
}

// recorder keeps the events plugins record, stamped with simulated time.
type recorder struct{ h *Host }

func (r recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	ref := fmt.Sprintf("%T", regarding)
	switch o := regarding.(type) {
	case *v1.Pod:
		ref = podRef(o)
	case *v1.Node:
		ref = o.Name
	}
	var now sim.Time
	if r.h.c != nil {
		now = r.h.c.Now()
	}
	r.h.events = append(r.h.events, Event{Time: now, Regarding: ref, Type: eventtype, Reason: reason, Action: action,
		Note: fmt.Sprintf(note, args...)})
}

func (r recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

// sequential is a Parallelizer that runs the pieces one after another, in order, so plugins
// that fan out still produce the same results every run.
type sequential struct{}

func (sequential) Until(ctx context.Context, pieces int, work workqueue.DoWorkPieceFunc, _ string) {
	for i := 0; i < pieces && ctx.Err() == nil; i++ {
		work(i)
	}
}

// handle is the simulator's fwk.Handle, given to every plugin factory.
type handle struct {
	h         *Host
	client    clientset.Interface
	informers informers.SharedInformerFactory
}

var _ fwk.Handle = (*handle)(nil)

func newHandle(h *Host) (*handle, error) {
	client, err := clientset.NewForConfig(api{h}.config())
	if err != nil {
		return nil, fmt.Errorf("kubehost: client: %w", err)
	}
	return &handle{h: h, client: client, informers: informers.NewSharedInformerFactory(client, 0)}, nil
}

// SnapshotSharedLister implements fwk.Handle: the cluster as the current attempt sees it.
func (hd *handle) SnapshotSharedLister() fwk.SharedLister { return lister{hd.h} }

// MutableSnapshotSharedLister implements fwk.Handle; mutations are refused (the simulator has
// no pod-group scheduling cycles, which use them).
func (hd *handle) MutableSnapshotSharedLister() fwk.MutableSnapshotSharedLister { return lister{hd.h} }

// IterateOverWaitingPods implements fwk.Handle, in the order the pods started waiting.
func (hd *handle) IterateOverWaitingPods(f func(fwk.WaitingPod)) {
	for _, w := range hd.h.waiting {
		if !w.done {
			f(w)
		}
	}
}

// GetWaitingPod implements fwk.Handle.
func (hd *handle) GetWaitingPod(uid types.UID) fwk.WaitingPod {
	for _, w := range hd.h.waiting {
		if !w.done && w.pod.UID == uid {
			return w
		}
	}
	return nil
}

// RejectWaitingPod implements fwk.Handle.
func (hd *handle) RejectWaitingPod(uid types.UID) bool {
	if w, ok := hd.GetWaitingPod(uid).(*waitingPod); ok {
		return w.Reject("", "removed")
	}
	return false
}

// The binding cycle runs to completion inside a pass, so no pod is ever caught in PreBind.

// AddPodInPreBind implements fwk.Handle.
func (hd *handle) AddPodInPreBind(types.UID, context.CancelCauseFunc) {}

// GetPodInPreBind implements fwk.Handle.
func (hd *handle) GetPodInPreBind(types.UID) fwk.PodInPreBind { return nil }

// RemovePodInPreBind implements fwk.Handle.
func (hd *handle) RemovePodInPreBind(types.UID) {}

// ClientSet implements fwk.Handle: a client the simulation answers (see ErrNoAPIServer).
func (hd *handle) ClientSet() clientset.Interface { return hd.client }

// KubeConfig implements fwk.Handle: a configuration for the same answers as ClientSet.
func (hd *handle) KubeConfig() *restclient.Config { return api{hd.h}.config() }

// EventRecorder implements fwk.Handle: events are kept with their simulated time (Host.Events).
func (hd *handle) EventRecorder() events.EventRecorderLogger { return recorder{hd.h} }

// SharedInformerFactory implements fwk.Handle: a factory over ClientSet that is never started,
// so its listers are empty; plugins should read the snapshot instead.
func (hd *handle) SharedInformerFactory() informers.SharedInformerFactory { return hd.informers }

// SharedDRAManager implements fwk.Handle; the simulator models no dynamic resource allocation.
func (hd *handle) SharedDRAManager() fwk.SharedDRAManager { return nil }

// SharedCSIManager implements fwk.Handle; the simulator models no volumes.
func (hd *handle) SharedCSIManager() fwk.CSIManager { return nil }

// RunFilterPluginsWithNominatedPods implements fwk.Handle. The host keeps no nominated pods,
// so this is RunFilterPlugins.
func (hd *handle) RunFilterPluginsWithNominatedPods(ctx context.Context, st fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	return hd.RunFilterPlugins(ctx, st, pod, ni)
}

// Extenders implements fwk.Handle; hosted profiles have no extenders.
func (hd *handle) Extenders() []fwk.Extender { return nil }

// Parallelizer implements fwk.Handle: sequential, for determinism.
func (hd *handle) Parallelizer() fwk.Parallelizer { return sequential{} }

// APIDispatcher implements fwk.Handle: nil, as in a kube-scheduler without asynchronous API
// calls.
func (hd *handle) APIDispatcher() fwk.APIDispatcher { return nil }

// APICacher implements fwk.Handle: nil, as APIDispatcher.
func (hd *handle) APICacher() fwk.APICacher { return nil }

// ProfileName implements fwk.Handle.
func (hd *handle) ProfileName() string { return hd.h.profile }

// PodGroupManager implements fwk.Handle; the simulator has no PodGroup API objects.
func (hd *handle) PodGroupManager() fwk.PodGroupManager { return nil }

// SignPod implements fwk.Handle; pod signatures (batched scheduling) are off.
func (hd *handle) SignPod(context.Context, *v1.Pod) fwk.PodSignature { return nil }

// Activate implements fwk.PodActivator: every pending pod is tried at each pass anyway.
func (hd *handle) Activate(klog.Logger, map[string]*v1.Pod) {}

// The host keeps no nominations: they reserve room for a preemptor while its victims
// terminate, and an eviction here (deleting a pod through ClientSet) frees the room at once;
// the preemptor is tried again at the same instant.

// AddNominatedPod implements fwk.PodNominator.
func (hd *handle) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}

// DeleteNominatedPodIfExists implements fwk.PodNominator.
func (hd *handle) DeleteNominatedPodIfExists(*v1.Pod) {}

// UpdateNominatedPod implements fwk.PodNominator.
func (hd *handle) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo) {}

// NominatedPodsForNode implements fwk.PodNominator.
func (hd *handle) NominatedPodsForNode(string) []fwk.PodInfo { return nil }

// RunPreScorePlugins implements fwk.PluginsRunner.
func (hd *handle) RunPreScorePlugins(ctx context.Context, st fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	return hd.h.runPreScore(ctx, stateOf(st), pod, nodes)
}

// RunScorePlugins implements fwk.PluginsRunner.
func (hd *handle) RunScorePlugins(ctx context.Context, st fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]fwk.NodePluginScores, *fwk.Status) {
	return hd.h.runScore(ctx, stateOf(st), pod, nodes, true)
}

// RunFilterPlugins implements fwk.PluginsRunner.
func (hd *handle) RunFilterPlugins(ctx context.Context, st fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	return hd.h.runFilter(ctx, stateOf(st), pod, ni)
}

// RunPreFilterExtensionAddPod implements fwk.PluginsRunner.
func (hd *handle) RunPreFilterExtensionAddPod(ctx context.Context, st fwk.CycleState, pod *v1.Pod, add fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	for _, pl := range hd.h.preFilter {
		if ext := pl.PreFilterExtensions(); ext != nil {
			if s := ext.AddPod(ctx, st, pod, add, ni); !s.IsSuccess() {
				return s.WithPlugin(pl.Name())
			}
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod implements fwk.PluginsRunner.
func (hd *handle) RunPreFilterExtensionRemovePod(ctx context.Context, st fwk.CycleState, pod *v1.Pod, rm fwk.PodInfo, ni fwk.NodeInfo) *fwk.Status {
	for _, pl := range hd.h.preFilter {
		if ext := pl.PreFilterExtensions(); ext != nil {
			if s := ext.RemovePod(ctx, st, pod, rm, ni); !s.IsSuccess() {
				return s.WithPlugin(pl.Name())
			}
		}
	}
	return nil
}

// RunReservePluginsReserve implements fwk.PluginsRunner.
func (hd *handle) RunReservePluginsReserve(ctx context.Context, st fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	for _, pl := range hd.h.reserve {
		if s := pl.Reserve(ctx, st, pod, node); !s.IsSuccess() {
			return s.WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve implements fwk.PluginsRunner, in reverse order as kube-scheduler.
func (hd *handle) RunReservePluginsUnreserve(ctx context.Context, st fwk.CycleState, pod *v1.Pod, node string) {
	for i := len(hd.h.reserve) - 1; i >= 0; i-- {
		hd.h.reserve[i].Unreserve(ctx, st, pod, node)
	}
}

// stateOf accepts any CycleState a plugin passes back; the host's skip sets only apply to
// its own.
func stateOf(st fwk.CycleState) fwk.CycleState {
	if st == nil {
		return newCycleState()
	}
	return st
}

// lister is the simulator's SharedLister and NodeInfoLister: every node that is up and not
// removed, in creation order.
type lister struct{ h *Host }

var _ fwk.MutableSnapshotSharedLister = lister{}

// NodeInfos implements fwk.SharedLister.
func (l lister) NodeInfos() fwk.NodeInfoLister { return l }

// StorageInfos implements fwk.SharedLister; no volumes are modelled.
func (l lister) StorageInfos() fwk.StorageInfoLister { return noStorage{} }

// PodGroupStates implements fwk.SharedLister; there are no PodGroup objects.
func (l lister) PodGroupStates() fwk.PodGroupStateLister { return nil }

// PodGroups implements fwk.SharedLister.
func (l lister) PodGroups() fwk.PodGroupLister { return nil }

// CompositePodGroupStates implements fwk.SharedLister.
func (l lister) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }

// CompositePodGroups implements fwk.SharedLister.
func (l lister) CompositePodGroups() fwk.CompositePodGroupLister { return nil }

var errMutations = errors.New("kubehost: the snapshot cannot be mutated in simulation (pod-group scheduling cycles are not modelled)")

// StartMutations implements fwk.MutableSnapshotSharedLister.
func (l lister) StartMutations() error { return errMutations }

// EndMutations implements fwk.MutableSnapshotSharedLister.
func (l lister) EndMutations() error { return errMutations }

// AddPod implements fwk.MutableSnapshotSharedLister.
func (l lister) AddPod(fwk.PodInfo, string) error { return errMutations }

// RemovePod implements fwk.MutableSnapshotSharedLister.
func (l lister) RemovePod(klog.Logger, *v1.Pod, string) error { return errMutations }

// List implements fwk.NodeInfoLister.
func (l lister) List() ([]fwk.NodeInfo, error) { return slices.Clone(l.h.list()), nil }

// The host gives hosted plugins no pod affinity (its v1 pods carry none; kube-default models
// it): no node has pods with affinity.

// HavePodsWithAffinityList implements fwk.NodeInfoLister.
func (l lister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) { return nil, nil }

// HavePodsWithRequiredAntiAffinityList implements fwk.NodeInfoLister.
func (l lister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) { return nil, nil }

// HavePodsWithRequiredNonHostScopedAntiAffinityList implements fwk.NodeInfoLister.
func (l lister) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return nil, nil
}

// Get implements fwk.NodeInfoLister.
func (l lister) Get(name string) (fwk.NodeInfo, error) {
	if l.h.c != nil {
		if n := l.h.c.Node(name); n != nil && n.Up {
			return l.h.o.node(n), nil
		}
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

type noStorage struct{}

func (noStorage) IsPVCUsedByPods(string) bool { return false }

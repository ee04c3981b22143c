package kubehost

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
)

// cycleState is the simulator's fwk.CycleState: one scheduling attempt's scratch space.
type cycleState struct {
	data                                                map[fwk.StateKey]fwk.StateData
	skipFilter, skipScore, skipPreBind, parallelPreBind sets.Set[string]
}

var _ fwk.CycleState = (*cycleState)(nil)

func newCycleState() *cycleState { return &cycleState{} }

// ShouldRecordPluginMetrics implements fwk.CycleState; the host records no metrics.
func (*cycleState) ShouldRecordPluginMetrics() bool { return false }

// GetSkipFilterPlugins implements fwk.CycleState.
func (s *cycleState) GetSkipFilterPlugins() sets.Set[string] { return s.skipFilter }

// SetSkipFilterPlugins implements fwk.CycleState.
func (s *cycleState) SetSkipFilterPlugins(p sets.Set[string]) { s.skipFilter = p }

// GetSkipScorePlugins implements fwk.CycleState.
func (s *cycleState) GetSkipScorePlugins() sets.Set[string] { return s.skipScore }

// SetSkipScorePlugins implements fwk.CycleState.
func (s *cycleState) SetSkipScorePlugins(p sets.Set[string]) { s.skipScore = p }

// GetSkipPreBindPlugins implements fwk.CycleState.
func (s *cycleState) GetSkipPreBindPlugins() sets.Set[string] { return s.skipPreBind }

// SetSkipPreBindPlugins implements fwk.CycleState.
func (s *cycleState) SetSkipPreBindPlugins(p sets.Set[string]) { s.skipPreBind = p }

// GetParallelPreBindPlugins implements fwk.CycleState.
func (s *cycleState) GetParallelPreBindPlugins() sets.Set[string] { return s.parallelPreBind }

// SetParallelPreBindPlugins implements fwk.CycleState.
func (s *cycleState) SetParallelPreBindPlugins(p sets.Set[string]) { s.parallelPreBind = p }

// ShouldSkipAllPostFilterPlugins implements fwk.CycleState.
func (*cycleState) ShouldSkipAllPostFilterPlugins() bool { return false }

// Read implements fwk.CycleState.
func (s *cycleState) Read(key fwk.StateKey) (fwk.StateData, error) {
	if v, ok := s.data[key]; ok {
		return v, nil
	}
	return nil, fwk.ErrNotFound
}

// Write implements fwk.CycleState.
func (s *cycleState) Write(key fwk.StateKey, val fwk.StateData) {
	if s.data == nil {
		s.data = map[fwk.StateKey]fwk.StateData{}
	}
	s.data[key] = val
}

// Delete implements fwk.CycleState.
func (s *cycleState) Delete(key fwk.StateKey) { delete(s.data, key) }

// Clone implements fwk.CycleState.
func (s *cycleState) Clone() fwk.CycleState {
	cp := &cycleState{data: make(map[fwk.StateKey]fwk.StateData, len(s.data)), skipFilter: s.skipFilter.Clone(),
		skipScore: s.skipScore.Clone(), skipPreBind: s.skipPreBind.Clone(), parallelPreBind: s.parallelPreBind.Clone()}
	for k, v := range s.data {
		if v != nil {
			v = v.Clone()
		}
		cp.data[k] = v
	}
	return cp
}

// The simulator has no pod-group scheduling cycles.

// IsPodGroupSchedulingCycle implements fwk.CycleState.
func (*cycleState) IsPodGroupSchedulingCycle() bool { return false }

// GetPodGroupSchedulingCycle implements fwk.CycleState.
func (*cycleState) GetPodGroupSchedulingCycle() fwk.PodGroupCycleState { return nil }

// GetPlacementCycleState implements fwk.CycleState.
func (*cycleState) GetPlacementCycleState() fwk.PlacementCycleState { return nil }

// queuedPod is the simulator's fwk.QueuedEntityInfo, what QueueSort plugins compare.
type queuedPod struct {
	pi       *podInfo
	attempts int
	first    *time.Time
}

var _ fwk.QueuedEntityInfo = (*queuedPod)(nil)

// Type implements fwk.QueuedEntityInfo.
func (*queuedPod) Type() fwk.EntityKeyType { return fwk.PodKeyType }

// GetPriority implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetPriority() int32 { return q.pi.sp.Priority }

// GetTimestamp implements fwk.QueuedEntityInfo: when the pod was submitted, in simulated time
// from Epoch.
func (q *queuedPod) GetTimestamp() time.Time { return wallTime(q.pi.sp.Submit) }

// GetAttempts implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetAttempts() int { return q.attempts }

// GetBackoffExpiration implements fwk.QueuedEntityInfo; the host does not back off.
func (q *queuedPod) GetBackoffExpiration() time.Time { return time.Time{} }

// GetUnschedulableCount implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetUnschedulableCount() int { return max(q.attempts-1, 0) }

// GetConsecutiveErrorsCount implements fwk.QueuedEntityInfo; a plugin error ends the run.
func (q *queuedPod) GetConsecutiveErrorsCount() int { return 0 }

// GetInitialAttemptTimestamp implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetInitialAttemptTimestamp() *time.Time { return q.first }

// GetUnschedulablePlugins implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetUnschedulablePlugins() sets.Set[string] { return nil }

// GetPendingPlugins implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetPendingPlugins() sets.Set[string] { return nil }

// GetGatingPlugin implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetGatingPlugin() string { return "" }

// GetGatingPluginEvents implements fwk.QueuedEntityInfo.
func (q *queuedPod) GetGatingPluginEvents() []fwk.ClusterEvent { return nil }

// GetPodInfo returns the queued pod, for QueueSort plugins that compare pods rather than
// priorities and timestamps (assert the entity to interface{ GetPodInfo() fwk.PodInfo }).
func (q *queuedPod) GetPodInfo() fwk.PodInfo { return q.pi }

// nodeStatuses is the simulator's fwk.NodeToStatusReader: why each filtered node failed. The
// failures are kept in a list and indexed only if a PostFilter plugin asks.
type nodeStatuses struct {
	failed []failure
	byNode map[string]*fwk.Status
	// absent is the status of the nodes not in failed: those a PreFilter result left out, or
	// every node when no node had room.
	absent *fwk.Status
}

type failure struct {
	node   string
	status *fwk.Status
}

var _ fwk.NodeToStatusReader = (*nodeStatuses)(nil)

// Get implements fwk.NodeToStatusReader.
func (m *nodeStatuses) Get(name string) *fwk.Status {
	if m.byNode == nil && len(m.failed) > 0 {
		m.byNode = make(map[string]*fwk.Status, len(m.failed))
		for _, f := range m.failed {
			m.byNode[f.node] = f.status
		}
	}
	if s, ok := m.byNode[name]; ok {
		return s
	}
	return m.absent
}

// NodesForStatusCode implements fwk.NodeToStatusReader.
func (m *nodeStatuses) NodesForStatusCode(l fwk.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	all, err := l.List()
	if err != nil {
		return nil, err
	}
	var out []fwk.NodeInfo
	for _, ni := range all {
		if m.Get(ni.Node().Name).Code() == code {
			out = append(out, ni)
		}
	}
	return out, nil
}

// podRef is how a status message names a pod.
func podRef(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// simDuration converts a plugin's timeout to simulated time, at least one tick of the clock.
func simDuration(d time.Duration) sim.Time { return max(sim.Time(d/time.Microsecond), 1) }

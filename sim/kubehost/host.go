package kubehost

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// maxPermitWait caps a Permit plugin's wait, as kube-scheduler does (15 minutes).
const maxPermitWait = 15 * time.Minute

type weightedScore struct {
	pl     fwk.ScorePlugin
	weight int64
}

// Host is a sim.Scheduler that runs kube-scheduler framework plugins. Build it with New.
type Host struct {
	profile    string
	o          *objects
	hd         *handle
	ctx        context.Context
	rng        *rand.Rand
	percentage int

	preEnqueue []fwk.PreEnqueuePlugin
	queueSort  fwk.QueueSortPlugin
	preFilter  []fwk.PreFilterPlugin
	filter     []fwk.FilterPlugin
	postFilter []fwk.PostFilterPlugin
	preScore   []fwk.PreScorePlugin
	score      []weightedScore
	reserve    []fwk.ReservePlugin
	permit     []fwk.PermitPlugin
	preBind    []fwk.PreBindPlugin
	bind       []fwk.BindPlugin
	postBind   []fwk.PostBindPlugin

	// c is the cluster of the pass under way (nil between passes).
	c *sim.Cluster
	// next is kube-scheduler's nextStartNodeIndex.
	next    int
	queued  []*queuedPod // by pod ID
	queue   []*queuedPod
	waiting []*waitingPod
	events  []Event

	nodes    []fwk.NodeInfo
	feasible []fwk.NodeInfo
	total    []int64
	scores   fwk.NodeScoreList
	// failed is the buffer of the attempt's filter failures, reused by the next attempt.
	failed []failure
}

// Events returns the events plugins recorded so far, in order.
func (h *Host) Events() []Event { return h.events }

// Schedule implements sim.Scheduler: it settles the pods waiting in Permit, then attempts every
// pending pod once in QueueSort order.
func (h *Host) Schedule(c *sim.Cluster) error {
	h.c = c
	defer func() { h.c = nil }()
	h.o.sweep(h.queued)
	if err := h.settleWaiting(); err != nil {
		return err
	}
	h.queue = h.queue[:0]
	for _, p := range c.Pending() {
		if p.Phase != sim.Pending || p.Assumed() {
			continue
		}
		q := h.entry(p)
		gated, err := h.gated(q)
		if err != nil {
			return err
		}
		if !gated {
			h.queue = append(h.queue, q)
		}
	}
	slices.SortStableFunc(h.queue, func(a, b *queuedPod) int {
		switch {
		case h.queueSort.Less(a, b):
			return -1
		case h.queueSort.Less(b, a):
			return 1
		}
		return cmp.Compare(a.pi.sp.ID, b.pi.sp.ID)
	})
	for _, q := range h.queue {
		if q.pi.sp.Phase != sim.Pending || q.pi.sp.Assumed() {
			continue
		}
		if err := h.scheduleOne(q); err != nil {
			return err
		}
		if err := h.settleWaiting(); err != nil {
			return err
		}
	}
	clear(h.queue)
	h.wakeForTimeouts()
	return nil
}

func (h *Host) entry(p *sim.Pod) *queuedPod {
	for len(h.queued) <= p.ID {
		h.queued = append(h.queued, nil)
	}
	q := h.queued[p.ID]
	if q == nil || q.pi.sp != p {
		q = &queuedPod{pi: h.o.pod(p)}
		h.queued[p.ID] = q
	}
	h.o.pod(p)
	return q
}

// gated runs the PreEnqueue plugins: a pod any of them rejects is not attempted this pass.
func (h *Host) gated(q *queuedPod) (bool, error) {
	for _, pl := range h.preEnqueue {
		s := pl.PreEnqueue(h.ctx, q.pi.pod)
		if s.IsError() {
			return false, h.pluginError(pl, "PreEnqueue", q.pi.pod, s)
		}
		if !s.IsSuccess() {
			return true, nil
		}
	}
	return false, nil
}

// PluginError is a plugin's Error status, which ends the simulation: in a simulation a plugin
// error is a bug to fix, not a condition to retry.
type PluginError struct {
	Plugin string
	Point  string
	Pod    string
	Status *fwk.Status
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("plugin %s (%s) on pod %s: %s", e.Plugin, e.Point, e.Pod, e.Status.Message())
}

// Unwrap returns the error inside the status, such as ErrNoAPIServer.
func (e *PluginError) Unwrap() error { return e.Status.AsError() }

func (h *Host) pluginError(pl fwk.Plugin, point string, pod *v1.Pod, s *fwk.Status) error {
	return &PluginError{Plugin: pl.Name(), Point: point, Pod: podRef(pod), Status: s}
}

// list returns the live views of every node that is up and not removed. The slice is reused
// by the next call.
func (h *Host) list() []fwk.NodeInfo {
	h.nodes = h.nodes[:0]
	if h.c == nil {
		return h.nodes
	}
	for _, n := range h.c.Nodes() {
		if n.Up && !n.Removed {
			h.nodes = append(h.nodes, h.o.node(n))
		}
	}
	return h.nodes
}

// scheduleOne runs one scheduling cycle for the pod, and its binding cycle unless a Permit
// plugin makes it wait.
func (h *Host) scheduleOne(q *queuedPod) error {
	q.attempts++
	if q.first == nil {
		t := wallTime(h.c.Now())
		q.first = &t
	}
	pod, p := q.pi.pod, q.pi.sp
	st := newCycleState()
	nodes := h.list()
	feasible, statuses, err := h.findFeasible(st, q.pi, nodes)
	if err != nil {
		return err
	}
	var best fwk.NodeInfo
	switch len(feasible) {
	case 0:
		return h.runPostFilter(st, pod, statuses)
	case 1:
		best = feasible[0]
	default:
		if best, err = h.selectHost(st, pod, feasible); err != nil {
			return err
		}
	}
	n := best.(*nodeInfo).sn
	if err := h.c.Assume(p, n); err != nil {
		return fmt.Errorf("kubehost: %w", err)
	}
	if s := h.hd.RunReservePluginsReserve(h.ctx, st, pod, n.Name); !s.IsSuccess() {
		h.unreserve(st, pod, p, n)
		if s.IsError() {
			return &PluginError{Plugin: s.Plugin(), Point: "Reserve", Pod: podRef(pod), Status: s}
		}
		return nil
	}
	w, err := h.runPermit(st, q.pi, pod, n)
	if err != nil || w == nil {
		return err
	}
	if len(w.pending) > 0 {
		h.waiting = append(h.waiting, w)
		return h.c.Park(p)
	}
	return h.bindCycle(w)
}

func (h *Host) unreserve(st fwk.CycleState, pod *v1.Pod, p *sim.Pod, n *sim.Node) {
	h.hd.RunReservePluginsUnreserve(h.ctx, st, pod, n.Name)
	h.c.Forget(p)
}

// findFeasible runs PreFilter and Filter, scanning from where the last attempt stopped until
// enough nodes pass (percentageOfNodesToScore), as kube-scheduler does.
func (h *Host) findFeasible(st *cycleState, pi *podInfo, nodes []fwk.NodeInfo) ([]fwk.NodeInfo, *nodeStatuses, error) {
	pod := pi.pod
	statuses := &nodeStatuses{failed: h.failed[:0]}
	defer func() { h.failed = statuses.failed }()
	var allowed *fwk.PreFilterResult
	var skip sets.Set[string]
	for _, pl := range h.preFilter {
		r, s := pl.PreFilter(h.ctx, st, pod, nodes)
		switch {
		case s.IsSkip():
			if skip == nil {
				skip = sets.New[string]()
			}
			skip.Insert(pl.Name())
			continue
		case s.IsError():
			return nil, nil, h.pluginError(pl, "PreFilter", pod, s)
		case !s.IsSuccess():
			statuses.absent = s.WithPlugin(pl.Name())
			return nil, statuses, nil
		}
		allowed = allowed.Merge(r)
	}
	st.SetSkipFilterPlugins(skip)
	if !allowed.AllNodes() {
		statuses.absent = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) PreFilter's node selection")
	}
	h.feasible = h.feasible[:0]
	all := len(nodes)
	if all == 0 {
		return h.feasible, statuses, nil
	}
	if p := pi.sp; allowed.AllNodes() && !p.Tolerates(&sim.UnschedulableTaint) && !p.Requests.Fits(h.c.MaxFree()) {
		// The simulator's free-capacity bound proves that the host's own check fails on every
		// node before any plugin runs, so a scan would only collect the same status for each;
		// as after a full scan, the next attempt starts where this one would have.
		statuses.absent = statusNoRoom
		return h.feasible, statuses, nil
	}
	want := scheduler.NumFeasibleNodesToFind(all, h.percentage)
	start := h.next % all
	processed := all
	for i := 0; i < all && len(h.feasible) < want; i++ {
		ni := nodes[(start+i)%all]
		name := ni.Node().Name
		if !allowed.AllNodes() && !allowed.NodeNames.Has(name) {
			continue
		}
		s := h.runFilter(h.ctx, st, pod, ni)
		if s.IsError() {
			return nil, nil, &PluginError{Plugin: s.Plugin(), Point: "Filter", Pod: podRef(pod), Status: s}
		}
		if !s.IsSuccess() {
			statuses.failed = append(statuses.failed, failure{name, s})
			continue
		}
		h.feasible = append(h.feasible, ni)
		if len(h.feasible) == want {
			processed = i + 1
		}
	}
	h.next = (start + processed) % all
	return h.feasible, statuses, nil
}

var (
	statusNoRoom = fwk.NewStatus(fwk.Unschedulable, "node has too little free capacity (the simulator never overcommits a node)")
	statusClosed = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node does not accept pods in the simulation (cordoned)")
)

// runFilter runs the filters on one node. Before any plugin, the host checks what the
// simulator itself enforces, free capacity and a node that accepts pods, so a profile without
// NodeResourcesFit still never overcommits a node.
func (h *Host) runFilter(ctx context.Context, st fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if own, ok := ni.(*nodeInfo); ok {
		if p, ok := h.o.simPod(pod); ok {
			sn := own.simNode()
			if !sn.FitsRequest(&p.Requests) {
				return statusNoRoom
			}
			if !sn.Accepts(p) {
				return statusClosed
			}
		}
	}
	skip := st.GetSkipFilterPlugins()
	for _, pl := range h.filter {
		if skip.Has(pl.Name()) {
			continue
		}
		if s := pl.Filter(ctx, st, pod, ni); !s.IsSuccess() {
			if !s.IsRejected() {
				s = fwk.AsStatus(s.AsError())
			}
			return s.WithPlugin(pl.Name())
		}
	}
	return nil
}

func (h *Host) runPostFilter(st *cycleState, pod *v1.Pod, statuses *nodeStatuses) error {
	for _, pl := range h.postFilter {
		_, s := pl.PostFilter(h.ctx, st, pod, statuses)
		if s.IsError() {
			return h.pluginError(pl, "PostFilter", pod, s)
		}
		if s.IsSuccess() {
			// Victims a plugin deleted through ClientSet are gone already, so the pass that
			// follows at the same instant places the pod; no nomination is needed.
			return nil
		}
	}
	return nil
}

// runPreScore runs PreScore; the names of plugins that returned Skip go into the state's
// skip-score set.
func (h *Host) runPreScore(ctx context.Context, st fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	var skip sets.Set[string]
	for _, pl := range h.preScore {
		s := pl.PreScore(ctx, st, pod, nodes)
		if s.IsSkip() {
			if skip == nil {
				skip = sets.New[string]()
			}
			skip.Insert(pl.Name())
			continue
		}
		if !s.IsSuccess() {
			return fwk.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
	}
	st.SetSkipScorePlugins(skip)
	return nil
}

// runScore scores every node with every plugin not skipped, normalises, and applies weights:
// each node's total goes to h.total, and with detail, each plugin's weighted score to out.
func (h *Host) runScore(ctx context.Context, st fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, detail bool) ([]fwk.NodePluginScores, *fwk.Status) {
	var out []fwk.NodePluginScores
	if detail {
		out = make([]fwk.NodePluginScores, len(nodes))
		for i, ni := range nodes {
			out[i].Name = ni.Node().Name
		}
	}
	h.total = slices.Grow(h.total[:0], len(nodes))[:len(nodes)]
	clear(h.total)
	skip := st.GetSkipScorePlugins()
	list := slices.Grow(h.scores[:0], len(nodes))[:len(nodes)]
	h.scores = list
	for _, ws := range h.score {
		name := ws.pl.Name()
		if skip.Has(name) {
			continue
		}
		for i, ni := range nodes {
			s, status := ws.pl.Score(ctx, st, pod, ni)
			if !status.IsSuccess() {
				return nil, fwk.AsStatus(fmt.Errorf("running Score plugin %q: %w", name, status.AsError())).WithPlugin(name)
			}
			list[i] = fwk.NodeScore{Score: s}
		}
		if ext := ws.pl.ScoreExtensions(); ext != nil {
			for i, ni := range nodes {
				list[i].Name = ni.Node().Name
			}
			if s := ext.NormalizeScore(ctx, st, pod, list); !s.IsSuccess() {
				return nil, fwk.AsStatus(fmt.Errorf("running NormalizeScore of plugin %q: %w", name, s.AsError())).WithPlugin(name)
			}
		}
		for i := range list {
			if s := list[i].Score; s < fwk.MinScore || s > fwk.MaxScore {
				return nil, fwk.AsStatus(fmt.Errorf("plugin %q returns an invalid score %d for node %s; scores must be within [%d, %d] after NormalizeScore",
					name, s, nodes[i].Node().Name, fwk.MinScore, fwk.MaxScore)).WithPlugin(name)
			}
			w := list[i].Score * ws.weight
			h.total[i] += w
			if detail {
				out[i].Scores = append(out[i].Scores, fwk.PluginScore{Name: name, Score: w})
				out[i].TotalScore += w
			}
		}
	}
	return out, nil
}

// selectHost runs PreScore and Score over the feasible nodes and picks the highest total,
// breaking ties at random with the host's seeded generator.
func (h *Host) selectHost(st *cycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (fwk.NodeInfo, error) {
	if s := h.runPreScore(h.ctx, st, pod, nodes); !s.IsSuccess() {
		return nil, &PluginError{Plugin: s.Plugin(), Point: "PreScore", Pod: podRef(pod), Status: s}
	}
	if _, s := h.runScore(h.ctx, st, pod, nodes, false); !s.IsSuccess() {
		return nil, &PluginError{Plugin: s.Plugin(), Point: "Score", Pod: podRef(pod), Status: s}
	}
	return nodes[scheduler.Best(h.total[:len(nodes)], h.rng)], nil
}

// waitingPod is a reserved pod and what its Permit step decided: the plugins it still waits
// for, the simulated time its wait ends, and whether a plugin rejected it. pod is the object
// the scheduling cycle started with (no node name, as upstream); the binding cycle gets it too.
type waitingPod struct {
	h        *Host
	pi       *podInfo
	pod      *v1.Pod
	node     *sim.Node
	st       *cycleState
	pending  map[string]bool
	deadline sim.Time
	rejected string
	// done marks a pod whose wait is over (bound or released).
	done bool
}

var _ fwk.WaitingPod = (*waitingPod)(nil)

// GetPod implements fwk.WaitingPod.
func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

// GetPendingPlugins implements fwk.WaitingPod, in sorted order.
func (w *waitingPod) GetPendingPlugins() []string {
	out := make([]string, 0, len(w.pending))
	for n := range w.pending {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Allow implements fwk.WaitingPod: the pod binds once no plugin is pending.
func (w *waitingPod) Allow(plugin string) { delete(w.pending, plugin) }

// Reject implements fwk.WaitingPod: the pod's reservation is undone.
func (w *waitingPod) Reject(plugin, msg string) bool {
	if w.done || w.rejected != "" {
		return false
	}
	w.rejected = fmt.Sprintf("rejected by %q at Permit: %s", plugin, msg)
	return true
}

// Preempt implements fwk.WaitingPod as Reject.
func (w *waitingPod) Preempt(plugin, msg string) bool { return w.Reject(plugin, msg) }

// runPermit runs the Permit plugins. It returns nil when a plugin rejected the pod (its
// reservation is then undone), else the pod with the plugins it waits for, if any.
func (h *Host) runPermit(st *cycleState, pi *podInfo, pod *v1.Pod, n *sim.Node) (*waitingPod, error) {
	w := &waitingPod{h: h, pi: pi, pod: pod, node: n, st: st, pending: map[string]bool{}}
	wait := time.Duration(-1)
	for _, pl := range h.permit {
		s, timeout := pl.Permit(h.ctx, st, pod, n.Name)
		switch {
		case s.IsWait():
			w.pending[pl.Name()] = true
			timeout = min(timeout, maxPermitWait)
			if wait < 0 || timeout < wait {
				wait = timeout
			}
		case s.IsError():
			h.unreserve(st, pod, pi.sp, n)
			return nil, h.pluginError(pl, "Permit", pod, s)
		case !s.IsSuccess():
			h.unreserve(st, pod, pi.sp, n)
			return nil, nil
		}
	}
	if wait >= 0 {
		w.deadline = h.c.Now() + simDuration(wait)
	}
	return w, nil
}

// settleWaiting binds the waiting pods every plugin allowed and releases those rejected,
// timed out, or whose reservation the simulator dropped (their node failed), in the order
// they started waiting.
func (h *Host) settleWaiting() error {
	kept := h.waiting[:0]
	for _, w := range h.waiting {
		p := w.pi.sp
		switch {
		case !p.Assumed() || p.Node != w.node:
			w.done = true
			h.hd.RunReservePluginsUnreserve(h.ctx, w.st, w.pod, w.node.Name)
		case w.rejected != "":
			w.done = true
			h.unreserve(w.st, w.pod, p, w.node)
		case len(w.pending) == 0:
			w.done = true
			if err := h.bindCycle(w); err != nil {
				return err
			}
		case h.c.Now() >= w.deadline:
			w.done = true
			h.unreserve(w.st, w.pod, p, w.node)
		default:
			kept = append(kept, w)
		}
	}
	clear(h.waiting[len(kept):])
	h.waiting = kept
	return nil
}

// wakeForTimeouts asks for a pass when the earliest Permit wait times out.
func (h *Host) wakeForTimeouts() {
	next := sim.Never
	for _, w := range h.waiting {
		next = min(next, w.deadline)
	}
	if next < sim.Never {
		h.c.WakeAt(next)
	}
}

// bindCycle runs PreBind, Bind and PostBind for a reserved pod, and starts it in the cluster
// after the first Bind plugin that does not skip it.
func (h *Host) bindCycle(w *waitingPod) error {
	pod, p, n, st := w.pod, w.pi.sp, w.node, w.st
	fail := func(pl fwk.Plugin, point string, s *fwk.Status) error {
		h.unreserve(st, pod, p, n)
		if s.IsError() {
			return h.pluginError(pl, point, pod, s)
		}
		return nil
	}
	var skip sets.Set[string]
	for _, pl := range h.preBind {
		if _, s := pl.PreBindPreFlight(h.ctx, st, pod, n.Name); s.IsSkip() {
			if skip == nil {
				skip = sets.New[string]()
			}
			skip.Insert(pl.Name())
		} else if !s.IsSuccess() {
			return fail(pl, "PreBindPreFlight", s)
		}
	}
	st.SetSkipPreBindPlugins(skip)
	for _, pl := range h.preBind {
		if skip.Has(pl.Name()) {
			continue
		}
		if s := pl.PreBind(h.ctx, st, pod, n.Name); !s.IsSuccess() {
			return fail(pl, "PreBind", s)
		}
	}
	bound := false
	for _, pl := range h.bind {
		s := pl.Bind(h.ctx, st, pod, n.Name)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			return fail(pl, "Bind", s)
		}
		bound = true
		break
	}
	if !bound {
		h.unreserve(st, pod, p, n)
		return fmt.Errorf("kubehost: no Bind plugin bound pod %s (every one skipped it); add DefaultBinder to the profile's bind list", podRef(pod))
	}
	if err := h.c.Bind(p, n); err != nil {
		return fmt.Errorf("kubehost: %w", err)
	}
	for _, pl := range h.postBind {
		pl.PostBind(h.ctx, st, pod, n.Name)
	}
	return nil
}

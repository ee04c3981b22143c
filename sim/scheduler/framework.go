package scheduler

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/jikken-dev/jikken/sim"
)

// MaxNodeScore is the highest score a score plugin may give after normalisation, as in
// kube-scheduler.
const MaxNodeScore int64 = 100

// Code is the outcome of a plugin call.
type Code int

// Status codes, as in kube-scheduler's framework.
const (
	Success Code = iota
	// Unschedulable: the pod does not fit now but might after preemption.
	Unschedulable
	// UnschedulableAndUnresolvable: preemption cannot help (taints, selectors).
	UnschedulableAndUnresolvable
	// Error aborts the simulation.
	Error
	// Skip lets a bind plugin pass the pod to the next binder; from a pre-filter, it says the
	// plugin's filter has nothing to check for this pod.
	Skip
)

// Status is a plugin's verdict; nil means success.
type Status struct {
	Code   Code
	Reason string
}

// IsSuccess reports whether s is nil or Success.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success }

var (
	statusUnschedulable = &Status{Code: Unschedulable, Reason: "insufficient resources"}
	statusUnresolvable  = &Status{Code: UnschedulableAndUnresolvable, Reason: "node constraints not met"}
)

// State is per-attempt scratch space shared by the plugins scheduling one pod.
type State struct {
	Cluster *sim.Cluster
	data    map[string]any
	// removed are pods preemption is weighing as victims: filters treat them as gone.
	removed []*sim.Pod
}

// Removed reports whether preemption treats q as gone from its node in this check. A filter
// that looks at the pods on a node skips these; one that counts pods in its pre-filter
// implements PreFilterExtensions instead.
func (s *State) Removed(q *sim.Pod) bool {
	return len(s.removed) > 0 && slices.Contains(s.removed, q)
}

// Read returns what a plugin stored under key in this attempt.
func (s *State) Read(key string) (any, bool) {
	v, ok := s.data[key]
	return v, ok
}

// Write stores v under key for the rest of this attempt.
func (s *State) Write(key string, v any) {
	if s.data == nil {
		s.data = map[string]any{}
	}
	s.data[key] = v
}

func (s *State) reset(c *sim.Cluster) {
	s.Cluster = c
	clear(s.data)
	s.removed = s.removed[:0]
}

// Plugin is anything registered at an extension point.
type Plugin interface {
	Name() string
}

// QueueSortPlugin orders the pending queue.
type QueueSortPlugin interface {
	Plugin
	// Less reports whether a should be attempted before b.
	Less(a, b *sim.Pod) bool
}

// PreFilterPlugin checks a pod once per attempt before any node is looked at, and may compute
// what the plugin's filter needs; returning Skip leaves the plugin's filter out of the attempt.
type PreFilterPlugin interface {
	Plugin
	PreFilter(s *State, p *sim.Pod) *Status
}

// FilterPlugin rules nodes out. It must not change cluster state.
type FilterPlugin interface {
	Plugin
	Filter(s *State, p *sim.Pod, n *sim.Node) *Status
}

// PreFilterExtensions lets preemption update what a plugin's pre-filter counted when it weighs
// the node without a pod (RemovePod) and with it again (AddPod), as kube-scheduler's
// extensions of the same name.
type PreFilterExtensions interface {
	RemovePod(s *State, p, gone *sim.Pod, n *sim.Node)
	AddPod(s *State, p, back *sim.Pod, n *sim.Node)
}

// ScorePlugin ranks feasible nodes. Scores must end in [0, MaxNodeScore], after NormalizeScore
// if the plugin also implements ScoreNormalizer.
type ScorePlugin interface {
	Plugin
	Score(s *State, p *sim.Pod, n *sim.Node) int64
}

// RequestScorer marks a score plugin whose score depends only on the pod's requests and the
// node's capacity and allocation. The framework caches its scores per node until the node's
// allocation changes, which saves most of the scoring work when consecutive pods have the same
// size.
type RequestScorer interface {
	ScorePlugin
	DependsOnRequestsOnly()
}

// ScoreNormalizer rescales one plugin's raw scores over all feasible nodes.
type ScoreNormalizer interface {
	NormalizeScore(s *State, p *sim.Pod, scores []int64)
}

// ReservePlugin is told when a pod's resources are reserved on a node, and when that
// reservation is undone (a gang member or a later plugin failed).
type ReservePlugin interface {
	Plugin
	Reserve(s *State, p *sim.Pod, n *sim.Node) *Status
	Unreserve(s *State, p *sim.Pod, n *sim.Node)
}

// BindPlugin binds a reserved pod; returning a Skip status hands it to the next binder. The
// framework itself starts the pod in the cluster after the first binder that succeeds.
type BindPlugin interface {
	Plugin
	Bind(s *State, p *sim.Pod, n *sim.Node) *Status
}

// PostFilterPlugin runs when no node is feasible; a preemption plugin evicts pods and returns
// the node the pod should go to, or nil.
type PostFilterPlugin interface {
	Plugin
	PostFilter(s *State, p *sim.Pod) (*sim.Node, *Status)
}

// Extender is a scheduler extender as the framework consumes it: an out-of-process filter,
// prioritizer, binder and preemption verifier (package sim/extender speaks the HTTP protocol).
type Extender interface {
	Name() string
	// IsInterested reports whether the extender cares about the pod (managed resources).
	IsInterested(p *sim.Pod) bool
	// IsIgnorable reports whether errors from the extender are ignored instead of aborting.
	IsIgnorable() bool
	Filter(c *sim.Cluster, p *sim.Pod, nodes []*sim.Node) ([]*sim.Node, error)
	// Prioritize returns one score in [0, 10] per node and the extender's weight.
	Prioritize(c *sim.Cluster, p *sim.Pod, nodes []*sim.Node) (scores []int64, weight int64, err error)
	IsBinder() bool
	Bind(c *sim.Cluster, p *sim.Pod, n *sim.Node) error
	SupportsPreemption() bool
	// ProcessPreemption may drop candidate nodes or change their victims.
	ProcessPreemption(c *sim.Cluster, p *sim.Pod, candidates []Candidate) ([]Candidate, error)
}

// Candidate is a node where a pod fits after evicting Victims.
type Candidate struct {
	Node    *sim.Node
	Victims []*sim.Pod
}

// maxExtenderPriority is the top of an extender's score range in the extender protocol.
const maxExtenderPriority = 10

type weightedScore struct {
	plugin ScorePlugin
	weight int64
	// The optional interfaces the plugin implements, asserted once in New rather than on
	// every attempt.
	skipper    ScoreSkipper
	preScorer  PreScorer
	normalizer ScoreNormalizer
	byRequest  bool
	// cache holds, per node ID, the last raw score and what it was computed for; it is
	// used only for RequestScorer plugins.
	cache []cachedScore
}

// cacheWays is how many request sizes the score cache keeps per node: pods of a few sizes
// alternate, and one entry per node would be overwritten by each size in turn.
const cacheWays = 4

type cachedScore struct {
	version uint64
	req     uint32 // index into Framework.reqs + 1; 0 marks an empty entry
	score   int64
}

// ScoreSkipper lets a score plugin declare, before scoring, that it would give every node the
// same score for this pod (kube-scheduler's PreScore returning Skip). A constant score moves
// no node ahead of another, so the framework leaves it out.
type ScoreSkipper interface {
	SkipScore(s *State, p *sim.Pod) bool
}

// PreScorer is a score plugin that prepares, once per attempt, what its scores need from the
// feasible nodes (kube-scheduler's PreScore). Returning true skips the plugin for this pod: it
// would give every node the same score. Score and NormalizeScore follow in the order of nodes.
type PreScorer interface {
	PreScore(s *State, p *sim.Pod, nodes []*sim.Node) (skip bool)
}

// FilterSkipper lets a filter plugin declare, before any node is filtered, that it would pass
// every node for this pod (kube-scheduler's PreFilter returning Skip, which skips the plugin's
// Filter). The framework leaves such a filter out of the attempt.
type FilterSkipper interface {
	SkipFilter(s *State, p *sim.Pod) bool
}

// Framework runs one profile: a plugin set per extension point. It implements sim.Scheduler
// by attempting every pending pod once per pass, in queue-sort order, without head-of-line
// blocking (like kube-scheduler, which moves an unschedulable pod aside and goes on).
type Framework struct {
	queueSort QueueSortPlugin
	preFilter []PreFilterPlugin
	filter    []FilterPlugin
	// skipped names the plugins whose pre-filter returned Skip for the current attempt.
	skipped    []string
	score      []weightedScore
	reserve    []ReservePlugin
	bind       []BindPlugin
	postFilter []PostFilterPlugin
	extenders  []Extender
	percentage int
	rng        *rand.Rand

	// next is kube-scheduler's nextStartNodeIndex: each attempt starts filtering where the last
	// one stopped, so partial scans (percentageOfNodesToScore) spread over the cluster.
	next     int
	state    State
	queue    []*sim.Pod
	feasible []*sim.Node
	// ids holds the IDs of the feasible nodes, so scoring finds cached scores without
	// touching each node.
	ids []int32
	// active holds the filters of the current attempt: those whose pre-filter did not return
	// Skip and that did not declare, through FilterSkipper, that they pass every node.
	active []FilterPlugin
	scores [][]int64
	total  []int64
	gangs  map[string]bool
	// reqIDs numbers the distinct request vectors seen, so score-cache entries compare one
	// integer instead of a whole vector.
	reqIDs map[reqKey]uint32
	// exhaustive turns off the free-GPU index and the score cache; tests use it to check
	// that both leave results unchanged.
	exhaustive bool
	// fitFilters records that NodeResourcesFit filters, so the free-capacity bound may
	// short-cut a scan.
	fitFilters bool
}

// reqKey is what a RequestScorer's score depends on besides the node.
type reqKey struct {
	requests sim.Resources
	nonZero  [2]int64
}

func (f *Framework) cmp(a, b *sim.Pod) int {
	if f.queueSort.Less(a, b) {
		return -1
	}
	if f.queueSort.Less(b, a) {
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// Schedule implements sim.Scheduler.
func (f *Framework) Schedule(c *sim.Cluster) error {
	f.queue = append(f.queue[:0], c.Pending()...)
	if !slices.IsSortedFunc(f.queue, f.cmp) {
		slices.SortStableFunc(f.queue, f.cmp)
	}
	clear(f.gangs)
	for _, p := range f.queue {
		if p.Phase != sim.Pending || p.Assumed() {
			continue
		}
		if g := p.Group(); g != nil && !g.Started() {
			if f.gangs[p.Gang] {
				continue
			}
			f.gangs[p.Gang] = true
			if err := f.scheduleGang(c, p); err != nil {
				return err
			}
			continue
		}
		if _, err := f.scheduleOne(c, p, false); err != nil {
			return err
		}
	}
	clear(f.queue)
	return nil
}

// scheduleGang places p's gang through Cluster.ScheduleGang, coscheduling's protocol (all
// or at least the minimum together, reservations held up to the schedule timeout), reserving
// each member with a cycle that stops after Reserve. Gangs do not preempt.
func (f *Framework) scheduleGang(c *sim.Cluster, p *sim.Pod) error {
	_, err := c.ScheduleGang(p, (*gangCycle)(f))
	return err
}

// gangCycle runs the framework's cycles for Cluster.ScheduleGang.
type gangCycle Framework

func (g *gangCycle) Reserve(c *sim.Cluster, p *sim.Pod) (bool, error) {
	n, err := (*Framework)(g).scheduleOne(c, p, true)
	return n != nil, err
}

func (g *gangCycle) Unreserve(c *sim.Cluster, p *sim.Pod) {
	n := p.Node
	for _, r := range g.reserve {
		r.Unreserve(&g.state, p, n)
	}
	c.Forget(p)
}

func (g *gangCycle) Bind(c *sim.Cluster, p *sim.Pod) error {
	return (*Framework)(g).bindPod(c, p, p.Node)
}

// scheduleOne runs one scheduling cycle for p. With reserveOnly it stops after Reserve and
// leaves the pod assumed. It returns the chosen node, or nil when the pod stays pending.
func (f *Framework) scheduleOne(c *sim.Cluster, p *sim.Pod, reserveOnly bool) (*sim.Node, error) {
	st := &f.state
	st.reset(c)
	if ok, err := f.preFilters(st, p); !ok {
		return nil, err
	}
	f.setActive(st, p)
	feasible := f.findFeasible(c, st, p)
	if len(feasible) > 0 && len(f.extenders) > 0 {
		var err error
		if feasible, err = f.extenderFilter(c, p, feasible); err != nil {
			return nil, err
		}
	}
	var n *sim.Node
	switch {
	case len(feasible) == 0:
		if reserveOnly {
			return nil, nil
		}
		for _, pl := range f.postFilter {
			node, s := pl.PostFilter(st, p)
			if s != nil && s.Code == Error {
				return nil, asError(pl, s)
			}
			if node != nil {
				n = node
				break
			}
		}
		if n == nil {
			return nil, nil
		}
		// Preemption changed the cluster: what the pre-filters computed (other pods' spread and
		// affinity) must be computed again before the node is checked.
		if ok, err := f.preFilters(st, p); !ok {
			return nil, err
		}
		f.setActive(st, p)
		if !f.passesFilters(st, p, n) {
			return nil, nil
		}
	case len(feasible) == 1:
		n = feasible[0]
	default:
		var err error
		ids := f.ids
		if len(f.extenders) > 0 {
			// The extenders may have dropped nodes.
			ids = nodeIDs(ids[:0], feasible)
			f.ids = ids
		}
		if n, err = f.selectHost(c, st, p, feasible, ids); err != nil {
			return nil, err
		}
	}
	if err := c.Assume(p, n); err != nil {
		return nil, err
	}
	for i, pl := range f.reserve {
		if s := pl.Reserve(st, p, n); !s.IsSuccess() {
			for _, r := range f.reserve[:i+1] {
				r.Unreserve(st, p, n)
			}
			c.Forget(p)
			return nil, asError(pl, s)
		}
	}
	if reserveOnly {
		return n, nil
	}
	return n, f.bindPod(c, p, n)
}

// preFilters runs the pre-filters and notes those that returned Skip: setActive leaves their
// filters out, as kube-scheduler does, so plugins that have nothing to check for the pod cost
// nothing per node. It reports false when a pre-filter rejected the
// pod, with the error if that was an Error status.
func (f *Framework) preFilters(st *State, p *sim.Pod) (bool, error) {
	skipped := f.skipped[:0]
	for _, pl := range f.preFilter {
		s := pl.PreFilter(st, p)
		if s != nil && s.Code == Skip {
			skipped = append(skipped, pl.Name())
			continue
		}
		if !s.IsSuccess() {
			return false, asError(pl, s)
		}
	}
	f.skipped = skipped
	return true, nil
}

func asError(pl Plugin, s *Status) error {
	if s.Code == Error {
		return &PluginError{Plugin: pl.Name(), Reason: s.Reason}
	}
	return nil
}

// PluginError is returned when a plugin reports an Error status.
type PluginError struct {
	Plugin string
	Reason string
}

func (e *PluginError) Error() string { return "plugin " + e.Plugin + ": " + e.Reason }

func (f *Framework) bindPod(c *sim.Cluster, p *sim.Pod, n *sim.Node) error {
	for _, e := range f.extenders {
		if e.IsBinder() && e.IsInterested(p) {
			if err := e.Bind(c, p, n); err != nil {
				return err
			}
			return c.Bind(p, n)
		}
	}
	st := &f.state
	for _, pl := range f.bind {
		s := pl.Bind(st, p, n)
		if s != nil && s.Code == Skip {
			continue
		}
		if !s.IsSuccess() {
			c.Forget(p)
			return asError(pl, s)
		}
		break
	}
	return c.Bind(p, n)
}

// NumFeasibleNodesToFind follows kube-scheduler: all nodes below 100, otherwise an adaptive
// percentage (50% minus 1% per 125 nodes, at least 5%) unless percentage is set (1..100),
// never fewer than 100 nodes.
func NumFeasibleNodesToFind(all, percentage int) int {
	if all < 100 || percentage >= 100 {
		return all
	}
	pct := percentage
	if pct <= 0 {
		pct = max(50-all/125, 5)
	}
	return max(all*pct/100, 100)
}

func (f *Framework) numFeasibleNodesToFind(all int) int {
	return NumFeasibleNodesToFind(all, f.percentage)
}

// setActive picks the filters of p's attempt into f.active.
func (f *Framework) setActive(st *State, p *sim.Pod) {
	f.active = f.active[:0]
	for _, pl := range f.filter {
		if len(f.skipped) > 0 && slices.Contains(f.skipped, pl.Name()) {
			continue
		}
		if sk, ok := pl.(FilterSkipper); ok && !f.exhaustive && sk.SkipFilter(st, p) {
			continue
		}
		f.active = append(f.active, pl)
	}
}

// passesFilters runs the attempt's filters (f.active) on n.
func (f *Framework) passesFilters(st *State, p *sim.Pod, n *sim.Node) bool {
	if !n.Accepts(p) {
		return false
	}
	for _, pl := range f.active {
		if !pl.Filter(st, p, n).IsSuccess() {
			return false
		}
	}
	return true
}

func (f *Framework) findFeasible(c *sim.Cluster, st *State, p *sim.Pod) []*sim.Node {
	f.feasible = f.feasible[:0]
	f.ids = f.ids[:0]
	nodes := c.Nodes()
	all := len(nodes)
	if all == 0 {
		return f.feasible
	}
	// The free-capacity bound and the free-GPU index cover schedulable nodes only; a pod that
	// tolerates the unschedulable taint may also go to cordoned ones, so it takes a full scan.
	shortcut := f.fitFilters && !f.exhaustive && !p.Tolerates(&sim.UnschedulableTaint)
	if shortcut && !p.Requests.Fits(c.MaxFree()) {
		// The free-capacity bound proves no node fits, so skip the scan: with NodeResourcesFit
		// among the filters a full scan would reach the same outcome.
		return f.feasible
	}
	want := f.numFeasibleNodesToFind(all)
	start := f.next % all
	processed := all
	if set := c.NodesWithFreeGPUs(int(p.Requests[sim.GPUIndex] / sim.Milli)); shortcut && set != nil {
		// Visit only nodes with enough whole GPUs free, in the same circular order from start;
		// the others would fail NodeResourcesFit, so the feasible list and the next start
		// index come out as a full scan would leave them.
		if last := f.scanSet(c, st, p, nodes, set, start, want); len(f.feasible) >= want {
			processed = (last-start+all)%all + 1
		}
	} else {
		for i := 0; i < all && len(f.feasible) < want; i++ {
			n := nodes[(start+i)%all]
			if f.passesFilters(st, p, n) {
				f.feasible = append(f.feasible, n)
				f.ids = append(f.ids, int32(n.ID))
				if len(f.feasible) == want {
					processed = i + 1
				}
			}
		}
	}
	f.next = (start + processed) % all
	if len(f.feasible) == 0 {
		c.TightenMaxFree()
	}
	return f.feasible
}

// scanSet filters the nodes in set from start onwards, wrapping around, until want are
// feasible; it returns the index of the last node visited. The nodes in set are schedulable,
// so when NodeResourcesFit is the only filter left, a node is feasible exactly when the pod's
// requests fit its free capacity, which the cluster keeps in a dense array.
func (f *Framework) scanSet(c *sim.Cluster, st *State, p *sim.Pod, nodes []*sim.Node, set []uint64, start, want int) int {
	fitOnly := false
	if len(f.active) == 1 {
		_, fitOnly = f.active[0].(*NodeResourcesFit)
	}
	last := -1
	for _, r := range [2][2]int{{start, len(nodes)}, {0, start}} {
		lo, hi := r[0], r[1]
		for w := lo >> 6; w < len(set) && w<<6 < hi; w++ {
			word := set[w]
			if w == lo>>6 {
				word &= ^uint64(0) << (lo & 63)
			}
			for word != 0 {
				i := w<<6 + bits.TrailingZeros64(word)
				word &= word - 1
				if i >= hi {
					break
				}
				last = i
				var ok bool
				if fitOnly {
					ok = p.Requests.Fits(c.NodeFree(i))
				} else {
					ok = f.passesFilters(st, p, nodes[i])
				}
				if ok {
					f.feasible = append(f.feasible, nodes[i])
					f.ids = append(f.ids, int32(i))
					if len(f.feasible) >= want {
						return last
					}
				}
			}
		}
	}
	return last
}

func (f *Framework) extenderFilter(c *sim.Cluster, p *sim.Pod, nodes []*sim.Node) ([]*sim.Node, error) {
	for _, e := range f.extenders {
		if !e.IsInterested(p) {
			continue
		}
		kept, err := e.Filter(c, p, nodes)
		if err != nil {
			if e.IsIgnorable() {
				continue
			}
			return nil, err
		}
		nodes = kept
		if len(nodes) == 0 {
			break
		}
	}
	return nodes, nil
}

// nodeIDs appends the IDs of nodes to ids.
func nodeIDs(ids []int32, nodes []*sim.Node) []int32 {
	for _, n := range nodes {
		ids = append(ids, int32(n.ID))
	}
	return ids
}

// scoreNodes fills f.total with each node's weighted score for p; ids holds the nodes' IDs.
func (f *Framework) scoreNodes(c *sim.Cluster, st *State, p *sim.Pod, nodes []*sim.Node, ids []int32) error {
	k := len(nodes)
	f.total = slices.Grow(f.total[:0], k)[:k]
	clear(f.total)
	for len(f.scores) < len(f.score) {
		f.scores = append(f.scores, nil)
	}
	key := reqKey{p.Requests, p.NonZero}
	req, ok := f.reqIDs[key]
	if !ok {
		req = uint32(len(f.reqIDs) + 1)
		f.reqIDs[key] = req
	}
	for i := range f.score {
		ws := &f.score[i]
		if ws.skipper != nil && !f.exhaustive && ws.skipper.SkipScore(st, p) {
			continue
		}
		if ws.preScorer != nil && ws.preScorer.PreScore(st, p, nodes) {
			continue
		}
		s := slices.Grow(f.scores[i][:0], k)[:k]
		f.scores[i] = s
		if ws.byRequest && !f.exhaustive {
			if n := len(c.Nodes()) * cacheWays; len(ws.cache) < n {
				ws.cache = append(ws.cache, make([]cachedScore, n-len(ws.cache))...)
			}
			way := int(req % cacheWays)
			for j, id := range ids {
				e := &ws.cache[int(id)*cacheWays+way]
				if v := c.NodeVersion(int(id)); e.req != req || e.version != v {
					*e = cachedScore{version: v, req: req, score: ws.plugin.Score(st, p, nodes[j])}
				}
				s[j] = e.score
			}
		} else {
			for j, n := range nodes {
				s[j] = ws.plugin.Score(st, p, n)
			}
		}
		if ws.normalizer != nil {
			ws.normalizer.NormalizeScore(st, p, s)
		}
		for j := range s {
			f.total[j] += s[j] * ws.weight
		}
	}
	for _, e := range f.extenders {
		if !e.IsInterested(p) {
			continue
		}
		s, w, err := e.Prioritize(c, p, nodes)
		if err != nil {
			if e.IsIgnorable() {
				continue
			}
			return err
		}
		for j := range s {
			if j < k {
				f.total[j] += s[j] * w * (MaxNodeScore / maxExtenderPriority)
			}
		}
	}
	return nil
}

func (f *Framework) selectHost(c *sim.Cluster, st *State, p *sim.Pod, nodes []*sim.Node, ids []int32) (*sim.Node, error) {
	if err := f.scoreNodes(c, st, p, nodes, ids); err != nil {
		return nil, err
	}
	return nodes[Best(f.total[:len(nodes)], f.rng)], nil
}

// Best returns the index of the highest total, ties broken by reservoir sampling with rng, as
// kube-scheduler's selectHost breaks them with its global generator: the same totals and the
// same generator state give the same node.
func Best(totals []int64, rng *rand.Rand) int {
	best, ties := 0, 1
	for j := 1; j < len(totals); j++ {
		switch {
		case totals[j] > totals[best]:
			best, ties = j, 1
		case totals[j] == totals[best]:
			ties++
			if rng.IntN(ties) == 0 {
				best = j
			}
		}
	}
	return best
}

// NodeScore is a feasible node and its weighted total score.
type NodeScore struct {
	Node  *sim.Node
	Score int64
}

// Scores runs p's pre-filters, filters and scores against the cluster as it is, without
// placing p or moving the next scan's start: the feasible nodes (all of them, whatever
// percentageOfNodesToScore says) with their weighted totals. The highest total is where p
// would go, a random one among equals. It explains a decision and lets tests compare one with
// kube-scheduler's.
func (f *Framework) Scores(c *sim.Cluster, p *sim.Pod) ([]NodeScore, error) {
	st := &State{}
	st.reset(c)
	if ok, err := f.preFilters(st, p); !ok {
		return nil, err
	}
	f.setActive(st, p)
	var nodes []*sim.Node
	for _, n := range c.Nodes() {
		if f.passesFilters(st, p, n) {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) > 0 && len(f.extenders) > 0 {
		var err error
		if nodes, err = f.extenderFilter(c, p, nodes); err != nil {
			return nil, err
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	if err := f.scoreNodes(c, st, p, nodes, nodeIDs(nil, nodes)); err != nil {
		return nil, err
	}
	out := make([]NodeScore, len(nodes))
	for i, n := range nodes {
		out[i] = NodeScore{Node: n, Score: f.total[i]}
	}
	return out, nil
}

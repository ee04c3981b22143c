package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Scheduler places pending pods. It is the contract both the kube-scheduler-like framework
// (package sim/scheduler) and whole-queue research policies (package sim/policy) satisfy.
type Scheduler interface {
	// Schedule is called after all events of one instant were applied, when pods are pending
	// and the cluster changed since the last call (an arrival, freed resources, a node coming
	// up, a tick, or a wake-up the scheduler asked for with c.WakeAt). It places pods with
	// c.Bind, may reserve with c.Assume/c.Forget, and may evict running pods with c.Preempt.
	// When a pass frees capacity (a preemption), another pass follows at the same instant, so
	// freed resources never wait for an unrelated event. An error aborts the simulation.
	Schedule(c *Cluster) error
}

// Submitter injects pods. Step is first called at time 0 and then at each time it asks for.
type Submitter interface {
	// Step returns the pods to submit now and the next time the submitter wants to be called,
	// which must not be earlier than now; Never means it is done. The status lets feedback
	// submitters react to the cluster. Pods must be new values; the engine takes ownership.
	Step(now Time, s Status) (pods []*Pod, next Time, err error)
}

// Observer receives records as the simulation produces them. Observers stand outside the event
// order: how often they sample never changes what the scheduler sees or when it runs.
type Observer interface {
	// Sampled is called once per sampling instant, in time order, with the state after that
	// instant's events and scheduling passes (the state of the last instant before it when
	// nothing happened at the sampling instant itself).
	Sampled(s *Sample)
	// PodDone is called once per pod when it succeeds or fails for good.
	PodDone(p *Pod)
}

// Status is the cluster summary a submitter sees.
type Status struct {
	Now       Time
	Pending   int
	Running   int
	Finished  int
	NodesUp   int
	Allocated Resources
	Capacity  Resources
}

// Sample is one point of the time series.
type Sample struct {
	Time      Time
	Allocated Resources // requests of running pods
	Capacity  Resources // capacity of nodes that are up
	Pending   int
	Running   int
	NodesUp   int
	// FreeGPU is the free GPU capacity of schedulable nodes; FragmentedGPU is the part of it on
	// nodes whose free GPUs are fewer than the smallest GPU request waiting in the queue, so
	// no pending pod can use it (0 when no GPU pod waits).
	FreeGPU       int64
	FragmentedGPU int64
	// UserGPU is each user's GPU allocation (milli-units), in the order of Cluster.Users at
	// the time of the sample: users who appear later are missing from earlier samples.
	UserGPU []int64
}

// PodFailure makes pod runs fail at random with retries and exponential backoff, like a Job's
// backoffLimit.
type PodFailure struct {
	// Probability that a run fails; the failure time is uniform over the run.
	Probability float64
	// MaxRetries is how many failures a pod survives; the next one fails it for good.
	MaxRetries int
	// Backoff is the delay before the first retry; it doubles per failure up to MaxBackoff.
	Backoff    Time
	MaxBackoff Time
}

// FailureModel fails and repairs nodes at random: time to failure and time to repair are
// drawn per node with means MTBF and MTTR, from a Weibull distribution with the given shape
// (0 or 1 is exponential; below 1 models infant mortality, above 1 wear-out).
type FailureModel struct {
	// Group limits the model to nodes of one group; empty means all nodes.
	Group string
	MTBF  Time
	MTTR  Time
	Shape float64
}

// EventKind names a scheduled cluster event.
type EventKind string

// Cluster events a scenario may schedule.
const (
	NodeFail     EventKind = "nodeFail"
	NodeRecover  EventKind = "nodeRecover"
	NodeAdd      EventKind = "nodeAdd"
	NodeRemove   EventKind = "nodeRemove"
	NodeDrain    EventKind = "nodeDrain"
	NodeCordon   EventKind = "nodeCordon"
	NodeUncordon EventKind = "nodeUncordon"
)

// ClusterEvent is a change to the cluster at a fixed time. Node names the node for every kind
// but NodeAdd, which creates Spec. Draining cordons a node and evicts its pods (kubectl drain);
// removing evicts them and deletes the node.
type ClusterEvent struct {
	At   Time
	Kind EventKind
	Node string
	Spec *NodeSpec
}

// Config is everything a simulation needs. Rand must be set (a seeded PCG), so that two runs
// with the same config are identical.
type Config struct {
	Names      *Names
	Nodes      []NodeSpec
	Scheduler  Scheduler
	Submitters []Submitter
	Rand       *rand.Rand
	Observer   Observer

	// Tick, when positive, forces a scheduling pass every Tick, for policies whose decisions
	// change with time alone (attained service, aging).
	Tick Time
	// TickOnly makes the scheduler run at ticks only, as in a tick-based simulator (such as
	// k8s-cluster-simulator's one-second loop): events between ticks are applied at their exact
	// times, but pods wait for the next tick to be placed.
	TickOnly bool
	// SampleEvery is the interval of time-series samples; 0 means no samples.
	SampleEvery Time
	// StopAt ends the simulation at that time if positive; StopAfterPods ends it once that many
	// pods have finished (succeeded or failed) if positive. Otherwise it ends when every
	// submitter is done and no pod is pending, running or backing off, or when pods are left
	// pending with nothing more that could ever change the cluster.
	StopAt        Time
	StopAfterPods int

	PodFailure PodFailure
	Events     []ClusterEvent
	Failures   []FailureModel
}

// NewRand returns the seeded generator the simulator expects: PCG with the given seed and a
// stream number, so independent components draw from independent streams of one seed.
func NewRand(seed, stream uint64) *Rand { return rand.New(rand.NewPCG(seed, stream)) }

// Engine drives a simulation: it pops events, applies them to the Cluster and calls the
// scheduler. It is not safe for concurrent use.
type Engine struct {
	c          *Cluster
	cfg        Config
	sched      Scheduler
	submitters []Submitter
	active     int
	started    bool
	done       bool
	tickNow    bool
	wakeNow    bool
	// nextSample is the next sampling instant (Never when sampling is off). Samples are not
	// events: they are taken between instants, so they cannot change the schedule.
	nextSample Time
	// sampled caches the sample of the current state, which stays valid until the next
	// instant is handled.
	sampled      Sample
	sampledValid bool
}

// Stats counts what the engine did, for the summary.
type Stats struct {
	Events      uint64
	Passes      uint64
	Submitted   int
	Finished    int
	Preemptions int
	Restarts    int
	LostWork    Time
	// GangTimeouts counts gangs whose reserved members were released after waiting too long.
	GangTimeouts int
	// AllocArea and CapArea integrate allocation and capacity over time (milli-units x
	// seconds), for time-weighted utilisation.
	AllocArea [MaxResources]float64
	CapArea   [MaxResources]float64
}

// New checks the config and builds an engine at time 0.
func New(cfg Config) (*Engine, error) {
	if cfg.Names == nil {
		cfg.Names = NewNames()
	}
	if cfg.Scheduler == nil {
		return nil, errors.New("sim: no scheduler configured; set Config.Scheduler")
	}
	if cfg.Rand == nil {
		return nil, errors.New("sim: no random generator configured; set Config.Rand to sim.NewRand(seed, 0)")
	}
	if cfg.TickOnly && cfg.Tick <= 0 {
		return nil, errors.New("sim: TickOnly needs a positive Tick")
	}
	if cfg.PodFailure.Probability < 0 || cfg.PodFailure.Probability > 1 {
		return nil, fmt.Errorf("sim: pod failure probability %v must be in [0, 1]", cfg.PodFailure.Probability)
	}
	for i, m := range cfg.Failures {
		if m.MTBF <= 0 || m.MTTR <= 0 {
			return nil, fmt.Errorf("sim: failure model %d: mtbf and mttr must be positive", i)
		}
		if m.Shape < 0 || math.IsNaN(m.Shape) || math.IsInf(m.Shape, 0) {
			return nil, fmt.Errorf("sim: failure model %d: weibull shape %v must be a positive number (1 is exponential)", i, m.Shape)
		}
	}
	c := &Cluster{
		names:       cfg.Names,
		byName:      map[string]*Node{},
		rng:         cfg.Rand,
		runningPrio: map[int32]int{},
		userAlloc:   map[string]*Resources{},
		gangs:       map[string]*Gang{},
		podFailure:  cfg.PodFailure,
		failures:    cfg.Failures,
		obs:         cfg.Observer,
		wake:        Never,
		tickOnly:    cfg.TickOnly,
	}
	for i := range cfg.Nodes {
		if _, err := c.addNode(&cfg.Nodes[i]); err != nil {
			return nil, err
		}
	}
	for _, ev := range cfg.Events {
		if ev.Kind == NodeAdd && ev.Spec != nil {
			c.addShape(&ev.Spec.Capacity)
		}
	}
	e := &Engine{c: c, cfg: cfg, sched: cfg.Scheduler, submitters: cfg.Submitters}
	for i, ev := range cfg.Events {
		kind, ok := eventKinds[ev.Kind]
		if !ok {
			return nil, fmt.Errorf("sim: event %d: unknown kind %q; use one of nodeFail, nodeRecover, nodeAdd, nodeRemove, nodeDrain, nodeCordon, nodeUncordon", i, ev.Kind)
		}
		if ev.Kind == NodeAdd {
			if ev.Spec == nil {
				return nil, fmt.Errorf("sim: event %d: nodeAdd needs a node spec", i)
			}
		} else if !e.nodeWillExist(ev.Node, i) {
			return nil, fmt.Errorf("sim: event %d (%s): no node named %q", i, ev.Kind, ev.Node)
		}
		if ev.At < 0 {
			return nil, fmt.Errorf("sim: event %d: time %v is negative", i, ev.At)
		}
		c.push(event{t: ev.At, kind: kind, idx: i, foreground: true})
	}
	return e, nil
}

func (e *Engine) nodeWillExist(name string, before int) bool {
	if _, ok := e.c.byName[name]; ok {
		return true
	}
	for _, ev := range e.cfg.Events[:before] {
		if ev.Kind == NodeAdd && ev.Spec.Name == name {
			return true
		}
	}
	return false
}

var eventKinds = map[EventKind]eventKind{
	NodeFail: evNodeFail, NodeRecover: evNodeRecover, NodeAdd: evNodeAdd, NodeRemove: evNodeRemove,
	NodeDrain: evNodeDrain, NodeCordon: evNodeCordon, NodeUncordon: evNodeUncordon,
}

// Cluster returns the cluster state, for inspection between steps.
func (e *Engine) Cluster() *Cluster { return e.c }

// Done reports whether the simulation has ended.
func (e *Engine) Done() bool { return e.done }

// Run steps until the simulation ends.
func (e *Engine) Run() error {
	for !e.done {
		if err := e.Step(); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) start() {
	e.started = true
	c := e.c
	for i := range e.submitters {
		c.push(event{t: 0, kind: evSubmit, idx: i, foreground: true})
	}
	e.active = len(e.submitters)
	e.nextSample = Never
	if e.cfg.SampleEvery > 0 {
		e.nextSample = 0
	}
	if e.cfg.Tick > 0 {
		c.push(event{t: e.cfg.Tick, kind: evTick})
	}
	for _, n := range c.nodes {
		c.scheduleFailure(n)
	}
}

// Step advances the clock to the next event time, applies every event of that instant in
// (time, sequence) order, runs scheduling passes while they are needed, and emits the samples
// that fall up to that instant.
func (e *Engine) Step() error {
	if e.done {
		return nil
	}
	if !e.started {
		e.start()
	}
	c := e.c
	if c.queue.len() == 0 || e.finished() {
		e.done = true
		return nil
	}
	t := c.queue.peek().t
	if e.cfg.StopAt > 0 && t > e.cfg.StopAt {
		e.sampleBefore(e.cfg.StopAt + 1)
		c.advance(e.cfg.StopAt)
		e.done = true
		return nil
	}
	e.sampleBefore(t)
	c.advance(t)
	e.sampledValid = false
	for c.queue.len() > 0 && c.queue.peek().t == t {
		ev := c.queue.pop()
		if ev.foreground {
			c.foreground--
		}
		c.stats.Events++
		if err := e.handle(&ev); err != nil {
			return err
		}
	}
	if err := e.schedule(); err != nil {
		return err
	}
	e.sampleBefore(t + 1)
	if e.finished() {
		e.done = true
	}
	return nil
}

// maxPassesPerInstant bounds the passes at one instant beyond the pod count: a scheduler that
// keeps preempting without converging is an error, not an endless loop.
const maxPassesPerInstant = 1000

// schedule runs scheduling passes until one leaves free capacity unchanged: a pass that
// preempts frees resources, and the pods it requeued (or others) may use them at once.
func (e *Engine) schedule() error {
	c := e.c
	pass := e.tickNow || e.wakeNow || !e.cfg.TickOnly
	e.tickNow, e.wakeNow = false, false
	for n := 0; c.dirty && c.numPending > 0 && pass; n++ {
		if n > maxPassesPerInstant+len(c.pods) {
			return fmt.Errorf("scheduler at %v: %d passes at one instant and it still preempts; the policy does not converge (a pod must only preempt pods it ranks strictly below itself)", c.now, n)
		}
		c.dirty = false
		c.stats.Passes++
		if err := e.sched.Schedule(c); err != nil {
			return fmt.Errorf("scheduler at %v: %w", c.now, err)
		}
		if err := c.checkNoAssumed(); err != nil {
			return err
		}
	}
	return nil
}

// sampleBefore emits every sample due strictly before t. Nothing changes between instants, so
// they all show the state after the last instant handled.
func (e *Engine) sampleBefore(t Time) {
	c := e.c
	for e.nextSample < t {
		if c.obs != nil {
			if !e.sampledValid {
				e.sampled = c.sample()
				e.sampledValid = true
			}
			s := e.sampled
			s.Time = e.nextSample
			c.obs.Sampled(&s)
		}
		if e.nextSample > Never-e.cfg.SampleEvery {
			e.nextSample = Never
		} else {
			e.nextSample += e.cfg.SampleEvery
		}
	}
}

func (e *Engine) finished() bool {
	c := e.c
	if e.cfg.StopAfterPods > 0 && c.stats.Finished >= e.cfg.StopAfterPods {
		return true
	}
	if e.active > 0 || c.running > 0 || c.backoff > 0 {
		return false
	}
	return c.numPending == 0 || c.foreground == 0
}

func (e *Engine) handle(ev *event) error {
	c := e.c
	switch ev.kind {
	case evSubmit:
		return e.submit(ev.idx)
	case evFinish:
		if ev.gen == ev.pod.gen {
			c.finish(ev.pod)
		}
	case evPodFail:
		if ev.gen == ev.pod.gen {
			c.failPod(ev.pod)
		}
	case evRetry:
		c.retry(ev.pod)
	case evTick:
		c.dirty = true
		e.tickNow = true
		if !e.finished() {
			c.push(event{t: c.now + e.cfg.Tick, kind: evTick})
		}
	case evGangTimeout:
		c.gangTimeout(ev.gang, ev.t)
	case evWake:
		if ev.t == c.wake {
			c.wake = Never
			c.dirty = true
			e.wakeNow = true
		}
	case evNodeFail, evNodeRecover, evNodeRemove, evNodeDrain, evNodeCordon, evNodeUncordon:
		n := ev.node
		if n == nil {
			n = c.byName[e.cfg.Events[ev.idx].Node]
		}
		if n == nil {
			return fmt.Errorf("event at %v: node %q does not exist (removed earlier?)", c.now, e.cfg.Events[ev.idx].Node)
		}
		c.nodeEvent(ev.kind, n, ev.model)
	case evNodeAdd:
		n, err := c.addNode(e.cfg.Events[ev.idx].Spec)
		if err != nil {
			return fmt.Errorf("event at %v: %w", c.now, err)
		}
		c.scheduleFailure(n)
	}
	return nil
}

func (e *Engine) submit(i int) error {
	c := e.c
	pods, next, err := e.submitters[i].Step(c.now, c.Status())
	if err != nil {
		return fmt.Errorf("submitter %d at %v: %w", i, c.now, err)
	}
	for _, p := range pods {
		if err := c.admit(p); err != nil {
			return err
		}
	}
	switch {
	case next == Never:
		e.active--
	case next < c.now:
		return fmt.Errorf("submitter %d at %v asked to be called back in the past (%v)", i, c.now, next)
	default:
		c.push(event{t: next, kind: evSubmit, idx: i, foreground: true})
	}
	return nil
}

// maxDuration bounds pod durations so that start + duration can never overflow the clock.
const maxDuration = 100 * 365 * 86400 * Second

// Cluster is the simulated cluster's state and the only way schedulers change it. Methods
// check their preconditions and return errors rather than corrupt state, so a buggy scheduler
// cannot overcommit a node.
type Cluster struct {
	names  *Names
	now    Time
	nodes  []*Node
	byName map[string]*Node
	shapes []Resources
	pods   []*Pod

	pending      []*Pod
	pendingDirty bool
	numPending   int
	running      int
	backoff      int
	dirty        bool
	// version counts changes to pods and nodes (see Version).
	version    uint64
	foreground int

	queue eventQueue
	seq   uint64
	rng   *rand.Rand

	allocated Resources
	capacity  Resources
	// gpuIndex[k-1] is a bitset over node IDs of schedulable nodes with at least k whole
	// GPUs free, kept up to date on every change, so filters can skip full nodes.
	gpuIndex [GPUIndexLevels][]uint64
	maxFree  Resources
	// free holds every schedulable node's free capacity, so TightenMaxFree is cheap.
	free freeTree
	// nodeFree[i] is node i's capacity minus allocation: one dense array, so filters that
	// visit thousands of nodes per pod read one cache line per node.
	nodeFree    []Resources
	nodeVersion []uint64 // nodeVersion[i] is node i's Version, dense for the same reason
	runningPrio map[int32]int
	userAlloc   map[string]*Resources
	users       []string
	gangs       map[string]*Gang
	gangList    []*Gang
	gangScratch []*Pod
	podFailure  PodFailure
	failures    []FailureModel
	obs         Observer
	// wake is the earliest pass the scheduler asked for with WakeAt, or Never.
	wake     Time
	tickOnly bool
	lastT    Time
	stats    Stats
	nodesUp  int
	affinity affinityCounts
}

func (c *Cluster) push(e event) {
	c.seq++
	e.seq = c.seq
	if e.foreground {
		c.foreground++
	}
	c.queue.push(e)
}

// WakeAt asks for a scheduling pass at t, for policies whose decisions change with time alone
// (a job crossing a service threshold, a waiting job due for promotion). Only the earliest
// request is kept, and it is consumed when it fires, so a scheduler asks again on every pass
// for the next time it needs. Requests at or before now are ignored, as are all requests in
// tick-only mode, where passes happen at ticks only. A wake-up does not keep the simulation
// alive on its own.
func (c *Cluster) WakeAt(t Time) {
	if c.tickOnly || t <= c.now || t >= c.wake {
		return
	}
	c.wake = t
	c.push(event{t: t, kind: evWake})
}

// Version changes whenever a pod is submitted, requeued, reserved, started or stopped, or a
// node changes; ticks and wake-ups leave it as it is. A scheduler whose decisions depend only
// on that state can tell that a pass has nothing new to decide.
func (c *Cluster) Version() uint64 { return c.version }

// Now returns the simulated time.
func (c *Cluster) Now() Time { return c.now }

// Names returns the resource table.
func (c *Cluster) Names() *Names { return c.names }

// Rand returns the engine's generator. Schedulers that need randomness should own a
// generator instead, so adding one does not shift the engine's draws.
func (c *Cluster) Rand() *rand.Rand { return c.rng }

// Nodes returns every node ever created, in creation order, including failed and removed ones.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node returns the node with the given name, or nil.
func (c *Cluster) Node(name string) *Node { return c.byName[name] }

// Pods returns every submitted pod in submission order.
func (c *Cluster) Pods() []*Pod { return c.pods }

// Pending returns the pending pods in the order they entered the queue (a requeued pod goes
// to the back). The slice is owned by the cluster and changes on Bind.
func (c *Cluster) Pending() []*Pod {
	if c.pendingDirty {
		kept := c.pending[:0]
		for _, p := range c.pending {
			if p.Phase == Pending {
				kept = append(kept, p)
			} else {
				p.queued = false
			}
		}
		clear(c.pending[len(kept):])
		c.pending = kept
		c.pendingDirty = false
	}
	return c.pending
}

// NumPending returns how many pods are pending.
func (c *Cluster) NumPending() int { return c.numPending }

// NumRunning returns how many pods run.
func (c *Cluster) NumRunning() int { return c.running }

// Stats returns the counters so far.
func (c *Cluster) Stats() Stats { return c.stats }

// Allocated returns the requests of running and assumed pods; Capacity the capacity of nodes
// that are up.
func (c *Cluster) Allocated() Resources { return c.allocated }

// Capacity returns the capacity of nodes that are up and not removed.
func (c *Cluster) Capacity() Resources { return c.capacity }

// MaxFree returns a per-resource upper bound on any schedulable node's free capacity. A pod
// whose request exceeds it fits nowhere; the reverse does not hold. TightenMaxFree makes the
// bound exact.
func (c *Cluster) MaxFree() *Resources { return &c.maxFree }

// TightenMaxFree makes MaxFree exact, in O(1) (see freeTree). The bound only loosens as pods
// start, so schedulers call this after a full scan found no node.
func (c *Cluster) TightenMaxFree() {
	c.maxFree = c.free.max()
}

// NodeFree returns node id's capacity minus its allocation (Node.Free) from a dense array kept
// up to date on every change. The vector is owned by the cluster.
func (c *Cluster) NodeFree(id int) *Resources { return &c.nodeFree[id] }

// NodeVersion returns node id's Version from a dense array kept up to date on every change.
func (c *Cluster) NodeVersion(id int) uint64 { return c.nodeVersion[id] }

// GPUIndexLevels is how many whole-GPU levels the free-GPU index tracks; nodes with more free
// GPUs count in every level.
const GPUIndexLevels = 16

// NodesWithFreeGPUs returns a bitset over node IDs (bit i of word i/64) holding every
// schedulable node with at least k whole GPUs free, or nil when k is not in 1..GPUIndexLevels.
// A node outside the set cannot fit a pod requesting k or more GPUs. The slice is owned by the
// cluster and changes as pods start and stop.
func (c *Cluster) NodesWithFreeGPUs(k int) []uint64 {
	if k < 1 || k > GPUIndexLevels {
		return nil
	}
	return c.gpuIndex[k-1]
}

// reindex updates the free-GPU index and the free-capacity tree after n's allocation or
// state changed; every such change passes through here.
func (c *Cluster) reindex(n *Node) {
	free := 0
	var avail Resources
	if n.Schedulable() {
		free = int((n.Capacity[GPUIndex] - n.Allocated[GPUIndex]) / Milli)
		avail = n.Free()
	}
	c.free.set(n.ID, &avail)
	for len(c.nodeFree) <= n.ID {
		c.nodeFree = append(c.nodeFree, Resources{})
		c.nodeVersion = append(c.nodeVersion, 0)
	}
	c.nodeFree[n.ID] = n.Free()
	c.nodeVersion[n.ID] = n.Version
	w, bit := n.ID>>6, uint64(1)<<(n.ID&63)
	for k := range c.gpuIndex {
		set := c.gpuIndex[k]
		for len(set) <= w {
			set = append(set, 0)
		}
		if free > k {
			set[w] |= bit
		} else {
			set[w] &^= bit
		}
		c.gpuIndex[k] = set
	}
}

func (c *Cluster) loosenMaxFree(n *Node) {
	if !n.Schedulable() {
		return
	}
	for i := range c.maxFree {
		if f := n.Capacity[i] - n.Allocated[i]; f > c.maxFree[i] {
			c.maxFree[i] = f
		}
	}
}

// Users returns every user who has held resources, in the order they first did. The slice is
// owned by the cluster.
func (c *Cluster) Users() []string { return c.users }

// UserAllocated returns the requests of the user's running and assumed pods.
func (c *Cluster) UserAllocated(user string) Resources {
	if u := c.userAlloc[user]; u != nil {
		return *u
	}
	return Resources{}
}

// MinRunningPriority returns the lowest priority among running pods and whether any runs;
// preemption is pointless for a pod whose priority is not above it.
func (c *Cluster) MinRunningPriority() (int32, bool) {
	first := true
	var m int32
	for p, n := range c.runningPrio {
		if n > 0 && (first || p < m) {
			m, first = p, false
		}
	}
	return m, !first
}

// GangComplete reports whether enough members of the pod's gang have been submitted for it
// to start (its minimum; all members by default).
func (c *Cluster) GangComplete(p *Pod) bool {
	return p.grp == nil || p.grp.Ready()
}

// Status returns the summary submitters see.
func (c *Cluster) Status() Status {
	return Status{Now: c.now, Pending: c.numPending, Running: c.running, Finished: c.stats.Finished,
		NodesUp: c.nodesUp, Allocated: c.allocated, Capacity: c.capacity}
}

func (c *Cluster) advance(t Time) {
	if dt := (t - c.lastT).Seconds(); dt > 0 {
		for i := range c.allocated {
			c.stats.AllocArea[i] += float64(c.allocated[i]) * dt
			c.stats.CapArea[i] += float64(c.capacity[i]) * dt
		}
	}
	c.lastT = t
	c.now = t
}

func (c *Cluster) addShape(r *Resources) {
	for i := range c.shapes {
		if c.shapes[i] == *r {
			return
		}
	}
	c.shapes = append(c.shapes, *r)
}

func (c *Cluster) addNode(s *NodeSpec) (*Node, error) {
	if s.Name == "" {
		return nil, errors.New("node without a name")
	}
	if _, dup := c.byName[s.Name]; dup {
		return nil, fmt.Errorf("node %q defined twice; node names must be unique", s.Name)
	}
	for i, v := range s.Capacity {
		if v < 0 {
			return nil, fmt.Errorf("node %q: capacity of %s is negative", s.Name, c.names.Name(i))
		}
	}
	c.version++
	n := &Node{ID: len(c.nodes), Name: s.Name, Group: s.Group, Labels: hostnameLabelled(s.Labels, s.Name), Taints: s.Taints,
		Capacity: s.Capacity, Up: true}
	c.nodesUp++
	c.nodes = append(c.nodes, n)
	c.byName[n.Name] = n
	c.capacity.Add(&n.Capacity)
	c.addShape(&n.Capacity)
	c.reindex(n)
	c.loosenMaxFree(n)
	c.dirty = true
	return n, nil
}

// HostnameLabel is the label the kubelet gives every node, its name; pod affinity and topology
// spread use it as the per-node topology.
const HostnameLabel = "kubernetes.io/hostname"

// hostnameLabelled returns labels with HostnameLabel set to name unless the spec sets it, in
// a new map: node groups share one label map among their nodes.
func hostnameLabelled(labels map[string]string, name string) map[string]string {
	if _, ok := labels[HostnameLabel]; ok {
		return labels
	}
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[HostnameLabel] = name
	return out
}

func (c *Cluster) admit(p *Pod) error {
	if p.Name == "" {
		p.Name = fmt.Sprintf("pod-%d", len(c.pods))
	}
	if p.Duration < 0 {
		return fmt.Errorf("pod %s: duration %v is negative", p.Name, p.Duration)
	}
	if p.Duration > maxDuration {
		return fmt.Errorf("pod %s: duration %v exceeds 100 years; cap the duration distribution (lognormal max)", p.Name, p.Duration)
	}
	if p.Requests[PodsIndex] == 0 {
		p.Requests[PodsIndex] = Milli
	}
	for i, v := range p.Requests {
		if v < 0 {
			return fmt.Errorf("pod %s: request of %s is negative", p.Name, c.names.Name(i))
		}
	}
	if !c.canEverFit(&p.Requests) {
		i := c.shortestDimension(&p.Requests)
		return fmt.Errorf("pod %s requests %s %s but no node offers that much (largest: %s); lower the request or add a larger node group",
			p.Name, FormatQuantity(p.Requests[i]), c.names.Name(i), FormatQuantity(c.largest(i)))
	}
	if p.Gang != "" {
		if err := c.join(p); err != nil {
			return err
		}
	}
	p.ID = len(c.pods)
	p.Submit = c.now
	p.FirstStart = -1
	p.End = -1
	p.Phase = Pending
	c.pods = append(c.pods, p)
	c.stats.Submitted++
	c.enqueue(p)
	return nil
}

func (c *Cluster) canEverFit(r *Resources) bool {
	for i := range c.shapes {
		if r.Fits(&c.shapes[i]) {
			return true
		}
	}
	return false
}

func (c *Cluster) shortestDimension(r *Resources) int {
	for i := range r {
		if r[i] > c.largest(i) {
			return i
		}
	}
	return GPUIndex
}

func (c *Cluster) largest(i int) int64 {
	var m int64
	for j := range c.shapes {
		m = max(m, c.shapes[j][i])
	}
	return m
}

func (c *Cluster) enqueue(p *Pod) {
	c.version++
	p.Phase = Pending
	c.numPending++
	c.dirty = true
	if !p.queued {
		p.queued = true
		c.pending = append(c.pending, p)
	}
}

func (c *Cluster) place(p *Pod, n *Node) {
	c.version++
	n.Allocated.Add(&p.Requests)
	cpu, mem := p.NonZeroRequests()
	n.NonZeroAllocated[0] += cpu
	n.NonZeroAllocated[1] += mem
	n.Version++
	c.allocated.Add(&p.Requests)
	u := c.userAlloc[p.User]
	if u == nil {
		u = &Resources{}
		c.userAlloc[p.User] = u
		c.users = append(c.users, p.User)
	}
	u.Add(&p.Requests)
	c.reindex(n)
	c.trackAffinity(p, n, 1)
	p.Node = n
	p.nodeSlot = int32(len(n.pods))
	n.pods = append(n.pods, p)
}

func (c *Cluster) unplace(p *Pod) {
	c.version++
	n := p.Node
	n.Allocated.Sub(&p.Requests)
	cpu, mem := p.NonZeroRequests()
	n.NonZeroAllocated[0] -= cpu
	n.NonZeroAllocated[1] -= mem
	n.Version++
	c.allocated.Sub(&p.Requests)
	c.userAlloc[p.User].Sub(&p.Requests)
	c.trackAffinity(p, n, -1)
	last := len(n.pods) - 1
	moved := n.pods[last]
	n.pods[p.nodeSlot] = moved
	moved.nodeSlot = p.nodeSlot
	n.pods[last] = nil
	n.pods = n.pods[:last]
	p.Node = nil
	c.reindex(n)
	c.loosenMaxFree(n)
}

func (c *Cluster) check(p *Pod, n *Node, verb string) error {
	if p.Phase != Pending || p.assumed {
		return fmt.Errorf("%s pod %s: pod is %s, not pending", verb, p.Name, p.Phase)
	}
	if !n.Accepts(p) {
		return fmt.Errorf("%s pod %s on node %s: node does not accept pods", verb, p.Name, n.Name)
	}
	if !n.FitsRequest(&p.Requests) {
		free := n.Free()
		i := p.Requests.FirstShortfall(&free)
		return fmt.Errorf("%s pod %s on node %s: %s request %s exceeds free %s", verb, p.Name, n.Name,
			c.names.Name(i), FormatQuantity(p.Requests[i]), FormatQuantity(free[i]))
	}
	return nil
}

// Assume reserves the pod's resources on n without starting it, as kube-scheduler's Reserve
// does; Bind starts it, Forget releases it. Every assumed pod must be bound or forgotten
// before Schedule returns.
func (c *Cluster) Assume(p *Pod, n *Node) error {
	if err := c.check(p, n, "assume"); err != nil {
		return err
	}
	c.place(p, n)
	p.assumed = true
	return nil
}

// Forget releases an assumed (or held) pod.
func (c *Cluster) Forget(p *Pod) {
	if !p.assumed {
		return
	}
	c.unhold(p)
	p.assumed = false
	c.unplace(p)
}

// Bind starts the pod on n now. If the pod was assumed, n must be the node it was assumed on.
func (c *Cluster) Bind(p *Pod, n *Node) error {
	if p.assumed {
		if p.Node != n {
			return fmt.Errorf("bind pod %s on node %s: it was assumed on node %s", p.Name, n.Name, p.Node.Name)
		}
		c.unhold(p)
		p.assumed = false
	} else {
		if err := c.check(p, n, "bind"); err != nil {
			return err
		}
		c.place(p, n)
	}
	c.start(p)
	return nil
}

func (c *Cluster) start(p *Pod) {
	c.version++
	p.Phase = Running
	p.LastNode = p.Node.Name
	p.Start = c.now
	if p.FirstStart < 0 {
		p.FirstStart = c.now
	}
	c.numPending--
	c.pendingDirty = true
	c.running++
	c.runningPrio[p.Priority]++
	if g := p.grp; g != nil {
		g.running++
		g.version++
	}
	p.gen++
	run := p.Duration - p.Progress
	if f := c.podFailure; f.Probability > 0 && c.rng.Float64() < f.Probability {
		at := c.now + Time(c.rng.Float64()*float64(run))
		c.push(event{t: at, kind: evPodFail, pod: p, gen: p.gen, foreground: true})
		return
	}
	c.push(event{t: c.now + run, kind: evFinish, pod: p, gen: p.gen, foreground: true})
}

// stopRun ends the current run; keep says whether the work done is kept (a checkpoint).
func (c *Cluster) stopRun(p *Pod, keep bool) {
	ran := c.now - p.Start
	p.Ran += ran
	p.Attained += float64(p.Requests[GPUIndex]) * ran.Seconds()
	if keep {
		p.Progress += ran
	} else {
		lost := ran + p.Progress
		p.LostWork += lost
		c.stats.LostWork += lost
		p.Progress = 0
	}
	c.unplace(p)
	c.running--
	c.runningPrio[p.Priority]--
	if g := p.grp; g != nil {
		g.running--
		g.version++
	}
	p.gen++
	c.dirty = true
}

// Preempt evicts a running pod and puts it back in the queue. keepProgress says whether its
// work survives (a checkpointing job suspended by a time-sharing policy) or is lost (a
// Kubernetes preemption, which kills the container). A gang left with fewer running members
// than its minimum is preempted as a whole.
func (c *Cluster) Preempt(victim *Pod, keepProgress bool) error {
	if victim.Phase != Running || victim.assumed {
		return fmt.Errorf("preempt pod %s: pod is %s, not running", victim.Name, victim.Phase)
	}
	c.stopRun(victim, keepProgress)
	victim.Preemptions++
	c.stats.Preemptions++
	c.enqueue(victim)
	c.breakGang(victim.grp, keepProgress, true)
	return nil
}

func (c *Cluster) finish(p *Pod) {
	c.stopRun(p, true)
	p.Phase = Succeeded
	p.End = c.now
	c.stats.Finished++
	if c.obs != nil {
		c.obs.PodDone(p)
	}
}

func (c *Cluster) failPod(p *Pod) {
	c.stopRun(p, false)
	p.Restarts++
	c.stats.Restarts++
	p.failures++
	defer c.breakGang(p.grp, false, false)
	if int(p.failures) > c.podFailure.MaxRetries {
		p.Phase = Failed
		p.End = c.now
		c.stats.Finished++
		if c.obs != nil {
			c.obs.PodDone(p)
		}
		return
	}
	p.Phase = Backoff
	c.backoff++
	d := c.podFailure.Backoff
	for i := 1; i < int(p.failures) && (c.podFailure.MaxBackoff <= 0 || d < c.podFailure.MaxBackoff); i++ {
		d *= 2
	}
	if c.podFailure.MaxBackoff > 0 {
		d = min(d, c.podFailure.MaxBackoff)
	}
	c.push(event{t: c.now + d, kind: evRetry, pod: p, foreground: true})
}

func (c *Cluster) retry(p *Pod) {
	c.backoff--
	c.enqueue(p)
}

// evictAll stops every pod on n and requeues it with its work lost, as a node failure, drain or
// removal does; gangs that lose their quorum stop everywhere. Pods only reserved on n (gang
// members waiting for the rest) are released.
func (c *Cluster) evictAll(n *Node) {
	for len(n.pods) > 0 {
		p := n.pods[len(n.pods)-1]
		if p.assumed {
			c.Forget(p)
			continue
		}
		c.stopRun(p, false)
		p.Restarts++
		c.stats.Restarts++
		c.enqueue(p)
		c.breakGang(p.grp, false, false)
	}
}

func (c *Cluster) nodeEvent(k eventKind, n *Node, model int) {
	if n.Removed {
		return
	}
	c.version++
	defer c.reindex(n)
	switch k {
	case evNodeFail:
		if !n.Up {
			return
		}
		c.evictAll(n)
		n.Up = false
		c.nodesUp--
		c.capacity.Sub(&n.Capacity)
		if model > 0 {
			m := c.failures[model-1]
			c.push(event{t: c.now + c.draw(m.MTTR, m.Shape), kind: evNodeRecover, node: n, model: model, foreground: true})
		}
	case evNodeRecover:
		if n.Up {
			return
		}
		n.Up = true
		c.nodesUp++
		c.capacity.Add(&n.Capacity)
		c.loosenMaxFree(n)
		c.dirty = true
		if model > 0 {
			m := c.failures[model-1]
			c.push(event{t: c.now + c.draw(m.MTBF, m.Shape), kind: evNodeFail, node: n, model: model})
		}
	case evNodeDrain:
		n.Cordoned = true
		c.evictAll(n)
	case evNodeCordon:
		n.Cordoned = true
	case evNodeUncordon:
		n.Cordoned = false
		c.loosenMaxFree(n)
		c.dirty = true
	case evNodeRemove:
		c.evictAll(n)
		if n.Up {
			c.capacity.Sub(&n.Capacity)
			c.nodesUp--
		}
		n.Removed = true
		delete(c.byName, n.Name)
	}
}

func (c *Cluster) scheduleFailure(n *Node) {
	for i, m := range c.failures {
		if m.Group == "" || m.Group == n.Group {
			c.push(event{t: c.now + c.draw(m.MTBF, m.Shape), kind: evNodeFail, node: n, model: i + 1})
			return
		}
	}
}

// draw returns a Weibull time with the given mean and shape (exponential for shape 0 or 1).
func (c *Cluster) draw(mean Time, shape float64) Time {
	var d float64
	if shape == 0 || shape == 1 {
		d = c.rng.ExpFloat64() * float64(mean)
	} else {
		scale := float64(mean) / math.Gamma(1+1/shape)
		d = scale * math.Pow(c.rng.ExpFloat64(), 1/shape)
	}
	if d >= math.MaxInt64/2 {
		return Never / 2
	}
	return max(Time(d), 1)
}

func (c *Cluster) checkNoAssumed() error {
	for _, p := range c.Pending() {
		if p.assumed && !p.held && !p.parked {
			return fmt.Errorf("scheduler left pod %s assumed on node %s; bind, forget or park every assumed pod before returning", p.Name, p.Node.Name)
		}
	}
	return nil
}

func (c *Cluster) sample() Sample {
	s := Sample{Time: c.now, Allocated: c.allocated, Capacity: c.capacity, Pending: c.numPending, Running: c.running}
	minReq := int64(math.MaxInt64)
	for _, p := range c.Pending() {
		if g := p.Requests[GPUIndex]; g > 0 && g < minReq {
			minReq = g
		}
	}
	s.NodesUp = c.nodesUp
	if len(c.users) > 0 {
		s.UserGPU = make([]int64, len(c.users))
		for i, u := range c.users {
			s.UserGPU[i] = c.userAlloc[u][GPUIndex]
		}
	}
	for _, n := range c.nodes {
		if !n.Schedulable() {
			continue
		}
		f := n.Capacity[GPUIndex] - n.Allocated[GPUIndex]
		s.FreeGPU += f
		if minReq != math.MaxInt64 && f < minReq {
			s.FragmentedGPU += f
		}
	}
	return s
}

// Rand is the generator type the simulator uses everywhere.
type Rand = rand.Rand

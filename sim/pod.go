package sim

// Phase is where a pod is in its life.
type Phase uint8

// Pod phases. A pod that waits for a retry after a failure is Backoff; it returns to Pending
// when the backoff expires.
const (
	Pending Phase = iota
	Running
	Succeeded
	Failed
	Backoff
)

func (p Phase) String() string {
	return [...]string{"Pending", "Running", "Succeeded", "Failed", "Backoff"}[p]
}

// Pod is one unit of work: its spec is set by a submitter, its state by the engine. Schedulers
// and metrics read the state fields but must not write them; they change a pod through the
// Cluster's methods.
type Pod struct {
	// Spec.
	Name      string
	Namespace string
	User      string
	Labels    map[string]string
	Requests  Resources
	// NonZero holds the CPU and memory (milli-units, as Requests) kube-scheduler's
	// NodeResourcesFit scoring counts for the pod, where a container that sets no CPU or
	// memory request counts as 100m CPU or 200 MiB. Submitters that see the containers fill it
	// (sim/kube does); left zero, it is derived from Requests as for a single container (see
	// NonZeroRequests).
	NonZero  [2]int64
	Priority int32
	// Tolerations, NodeSelector and Affinity restrict which nodes may run the pod, with
	// Kubernetes semantics (see Tolerates and MatchesNode).
	Tolerations  []Toleration
	NodeSelector map[string]string
	Affinity     *NodeAffinity
	// HostPorts are the ports the pod binds on its node (kube-scheduler's NodePorts filter);
	// PodAffinity and PodAntiAffinity place it relative to other pods (InterPodAffinity);
	// TopologySpread spreads matching pods over topology domains (PodTopologySpread).
	HostPorts       []HostPort
	PodAffinity     *PodAffinity
	PodAntiAffinity *PodAffinity
	TopologySpread  []TopologySpreadConstraint
	// DefaultSpread, when set, selects the pods of the Services and the controller that the
	// pod belongs to; kube-scheduler's default spread constraints (per host and per zone)
	// apply to them when the pod has no constraints of its own.
	DefaultSpread *LabelSelector
	// Gang names a pod group of GangSize members of which GangMin (0: all) must start
	// together, or is empty; GangTimeout, if positive, lets members placed early hold their
	// resources that long while the rest find room (see Gang).
	Gang        string
	GangSize    int
	GangMin     int
	GangTimeout Time
	// Duration is how long the pod runs once started, uninterrupted.
	Duration Time

	// State, owned by the engine.
	ID     int   // submission order, from 0
	Submit Time  // when the pod entered the queue the first time
	Node   *Node // the node running (or reserving resources for) the pod
	// LastNode names the node of the latest run, kept after the pod stops.
	LastNode    string
	Start       Time // start of the current or last run
	FirstStart  Time // start of the first run; -1 before
	End         Time // when the pod reached Succeeded or Failed
	Progress    Time // work kept from earlier runs (suspension with checkpoint)
	LostWork    Time // work discarded by failures and preemptions without checkpoint
	Preemptions int
	Restarts    int // runs ended by a node or pod failure
	// Attained is the service received so far in GPU-milli x seconds, excluding the current
	// run; AttainedAt gives the total including it.
	Attained float64
	// Ran is the time run so far over all runs, kept or lost, excluding the current run;
	// RanAt gives the total including it.
	Ran Time
	// Phase is the current phase. It sits with the flags below so that a pod takes 384 bytes
	// (a smaller allocation class) rather than 392: a run holds a million pods.
	Phase Phase

	assumed  bool
	held     bool   // assumed past the end of a pass, waiting for the rest of its gang
	parked   bool   // assumed past the end of a pass, waiting in its scheduler's Permit step
	queued   bool   // in the pending slice
	gen      uint32 // bumps on every start and stop so stale finish events are ignored
	grp      *Gang  // the pod's gang, or nil
	nodeSlot int32  // index in Node.pods
	failures int32  // pod failures so far, for the retry budget
}

// Remaining returns the work still to do.
func (p *Pod) Remaining(now Time) Time {
	r := p.Duration - p.Progress
	if p.Phase == Running && !p.assumed {
		r -= now - p.Start
	}
	return r
}

// AttainedAt returns the attained service (GPU-milli x seconds) including the current run.
func (p *Pod) AttainedAt(now Time) float64 {
	a := p.Attained
	if p.Phase == Running && !p.assumed {
		a += float64(p.Requests[GPUIndex]) * (now - p.Start).Seconds()
	}
	return a
}

// RanAt returns the time run so far, including the current run.
func (p *Pod) RanAt(now Time) Time {
	r := p.Ran
	if p.Phase == Running && !p.assumed {
		r += now - p.Start
	}
	return r
}

// Defaults kube-scheduler's scoring counts for a container without a CPU or memory request
// (its DefaultMilliCPURequest and DefaultMemoryRequest), in milli-units.
const (
	DefaultCPURequest    = 100
	DefaultMemoryRequest = 200 << 20 * Milli
)

// NonZeroRequests returns the CPU and memory the pod counts for in NodeResourcesFit's scoring:
// NonZero if set, else Requests with a zero CPU or memory request replaced by the default.
func (p *Pod) NonZeroRequests() (cpu, mem int64) {
	if p.NonZero != [2]int64{} {
		return p.NonZero[0], p.NonZero[1]
	}
	cpu, mem = p.Requests[CPUIndex], p.Requests[MemoryIndex]
	if cpu == 0 {
		cpu = DefaultCPURequest
	}
	if mem == 0 {
		mem = DefaultMemoryRequest
	}
	return cpu, mem
}

// Group returns the pod's gang, or nil for a pod on its own.
func (p *Pod) Group() *Gang { return p.grp }

// Held reports whether the pod is reserved past the end of a pass, waiting for its gang.
func (p *Pod) Held() bool { return p.held }

// Parked reports whether the pod is reserved past the end of a pass by its scheduler
// (Cluster.Park).
func (p *Pod) Parked() bool { return p.parked }

// Assumed reports whether the pod holds resources on a node without having started (the
// scheduler's Reserve step, used to place gangs all-or-nothing).
func (p *Pod) Assumed() bool { return p.assumed }

// Wait returns the time from submission to first start, or -1 if the pod never started.
func (p *Pod) Wait() Time {
	if p.FirstStart < 0 {
		return -1
	}
	return p.FirstStart - p.Submit
}

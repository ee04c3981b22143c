package scenario

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/kubehost"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// Profiles lists the scheduler profiles a scenario may name.
func Profiles() []string {
	return append([]string{"kube-default", KubeFramework}, policy.Names...)
}

// KubeFramework is the profile that runs kube-scheduler framework plugins (sim/kubehost).
const KubeFramework = "kube-framework"

// Random streams of one seed: each component draws from its own, so adding a submitter or
// switching the scheduler leaves the other components' draws unchanged.
const (
	streamEngine    = 0
	streamScheduler = 1
	streamWorkload  = 100
)

// Options adjust a build.
type Options struct {
	// Profile, if set, replaces scheduler.profile (for comparing profiles on one workload).
	Profile  string
	Observer sim.Observer
	// Seed, if non-zero, replaces the scenario's seed.
	Seed uint64
	// MaxMemory caps the memory the run's records may take, in bytes (default
	// DefaultMaxMemory; negative: no cap). A scenario expected to need more is refused.
	MaxMemory int64
	// Plugins are the custom plugins this program provides, by name: kube-default profiles
	// may list them at any extension point and give them args in scheduler.pluginConfig.
	Plugins map[string]scheduler.PluginFactory
	// FrameworkPlugins are the kube-scheduler framework plugins this program provides, by
	// name: kube-framework profiles may list them next to the stock ones.
	FrameworkPlugins map[string]kubehost.PluginFactory
}

// DefaultMaxMemory is the default cap on a run's records: pods and samples.
const DefaultMaxMemory = 4 << 30

// Memory a run keeps per pod (the pod, its queue entries and its rows) and per time-series
// sample, measured on the philly benchmark with a margin.
const (
	PodBytes    = 1536
	SampleBytes = 512
)

// Estimate is what a run is expected to hold: pods submitted and samples taken. It errs low
// (the run may last longer than its last arrival), so a refusal is never a false alarm;
// Budget checks the run as it goes.
type Estimate struct {
	Pods    float64
	Samples float64
	Bytes   float64
}

// MemoryError refuses a scenario whose records would not fit under the cap.
type MemoryError struct {
	Estimate Estimate
	Cap      int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("the run would keep about %s in memory (%.3g pods, %.3g time-series samples), over the cap of %s; submit fewer jobs, sample less often (sample:), or raise the cap",
		bytesText(e.Estimate.Bytes), e.Estimate.Pods, e.Estimate.Samples, bytesText(float64(e.Cap)))
}

func bytesText(b float64) string {
	switch {
	case b >= 1<<50:
		return fmt.Sprintf("%.1f PiB", b/(1<<50))
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}

// Budget caps a run while it goes: Check reports a *MemoryError once the pods submitted and
// the samples kept exceed the cap (runs can outlast the estimate).
type Budget struct{ Cap int64 }

// Check returns an error when pods and samples exceed the cap.
func (b Budget) Check(pods, samples int) error {
	if b.Cap <= 0 {
		return nil
	}
	est := Estimate{Pods: float64(pods), Samples: float64(samples), Bytes: float64(pods)*PodBytes + float64(samples)*SampleBytes}
	if est.Bytes > float64(b.Cap) {
		return &MemoryError{Estimate: est, Cap: b.Cap}
	}
	return nil
}

// Jobs returns every job the scenario's workload would submit, merged in submit-time order,
// drawn from the same random streams as a run with the same seed. Feedback and remote
// submitters decide at run time and cannot be listed: they are an error.
func Jobs(sc *Scenario, seed uint64) ([]submitter.Job, error) {
	b := &builder{sc: sc, names: sim.NewNames(), seed: sc.Seed}
	if seed != 0 {
		b.seed = seed
	}
	if _, _, err := b.nodes(); err != nil {
		return nil, err
	}
	if _, err := b.workload(); err != nil {
		return nil, err
	}
	var all []submitter.Job
	for _, src := range b.sources {
		if src == nil {
			return nil, fmt.Errorf("workload: a feedback or remote submitter decides at run time; its jobs cannot be generated up front")
		}
		for _, j := range src() {
			if t := j.Template; t != nil {
				// A trace row carries requests in its columns, not in a template.
				j.CPU, j.Memory, j.GPU = t.Requests[sim.CPUIndex], t.Requests[sim.MemoryIndex], t.Requests[sim.GPUIndex]
				j.Template = nil
			}
			all = append(all, j)
		}
	}
	slices.SortStableFunc(all, func(a, b submitter.Job) int { return cmp.Compare(a.Submit, b.Submit) })
	return all, nil
}

// Built is a scenario ready to run.
type Built struct {
	Engine    *sim.Engine
	Names     *sim.Names
	Scheduler string
	Seed      uint64
	// Total is how many pods the workload will submit, when known in advance (traces, presets,
	// counted generators), for progress bars; 0 if unknown.
	Total int
	// Estimate is the expected size of the run's records; Budget checks them as it runs.
	Estimate Estimate
	Budget   Budget
}

// builder carries what validation and construction share.
type builder struct {
	sc     *Scenario
	names  *sim.Names
	seed   uint64
	shapes []sim.Resources
	groups []sim.NodeSpec
	// hosts are the initial nodes' names and groups (indices into groups), for pods that
	// select a node by its hostname label.
	hosts []host
	gpus  int64
	total int
	// sources collects, per submitter, a way to draw all its jobs up front (nil for feedback
	// and remote submitters), for Jobs.
	sources []func() []submitter.Job
	// lenient is set when the profile is overridden (compare --profiles): settings that belong
	// to the other kind of scheduler are ignored instead of rejected.
	lenient bool
	// pods and horizon are the expected pods and last arrival (seconds) of the workload, for
	// the memory estimate.
	pods    float64
	horizon float64
	opts    Options
}

func (b *builder) rng(stream uint64) *sim.Rand { return sim.NewRand(b.seed, stream) }

// Build validates the scenario and builds its engine.
func Build(sc *Scenario, o Options) (*Built, error) {
	b := &builder{sc: sc, names: sim.NewNames(), seed: sc.Seed, opts: o}
	if o.Seed != 0 {
		b.seed = o.Seed
	}
	nodes, templates, err := b.nodes()
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Names: b.names, Nodes: nodes, Rand: b.rng(streamEngine), Observer: o.Observer}
	if cfg.Events, err = b.events(templates); err != nil {
		return nil, err
	}
	if cfg.Submitters, err = b.workload(); err != nil {
		return nil, err
	}
	profile := sc.Scheduler.Profile
	if o.Profile != "" && o.Profile != profile {
		profile = o.Profile
		b.lenient = true
	}
	if cfg.Scheduler, err = b.scheduler(profile); err != nil {
		return nil, err
	}
	if err := b.gangTimeout(cfg.Submitters); err != nil {
		return nil, err
	}
	if err := b.timing(&cfg); err != nil {
		return nil, err
	}
	if err := b.failures(&cfg); err != nil {
		return nil, err
	}
	est, budget, err := b.footprint(&cfg, o.MaxMemory)
	if err != nil {
		return nil, err
	}
	e, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Built{Engine: e, Names: b.names, Scheduler: profile, Seed: b.seed, Total: b.total, Estimate: est, Budget: budget}, nil
}

// footprint estimates the run's records and refuses them over the cap.
func (b *builder) footprint(cfg *sim.Config, limit int64) (Estimate, Budget, error) {
	if limit == 0 {
		limit = DefaultMaxMemory
	}
	est := Estimate{Pods: b.pods}
	if cfg.SampleEvery > 0 {
		horizon := b.horizon
		if cfg.StopAt > 0 {
			horizon = min(horizon, cfg.StopAt.Seconds())
		}
		est.Samples = math.Floor(horizon/cfg.SampleEvery.Seconds()) + 1
	}
	est.Bytes = est.Pods*PodBytes + est.Samples*SampleBytes
	if limit > 0 && est.Bytes > float64(limit) {
		return est, Budget{}, &MemoryError{Estimate: est, Cap: limit}
	}
	return est, Budget{Cap: limit}, nil
}

func duration(field string, d Duration, def sim.Time) (sim.Time, error) {
	if d == "" {
		return def, nil
	}
	t, err := sim.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return t, nil
}

func (b *builder) nodes() ([]sim.NodeSpec, map[string]sim.NodeSpec, error) {
	var nodes []sim.NodeSpec
	templates := map[string]sim.NodeSpec{}
	for i, g := range b.sc.Cluster.NodeGroups {
		f := fmt.Sprintf("cluster.nodeGroups[%d]", i)
		if g.Name == "" {
			return nil, nil, fmt.Errorf("%s.name: missing; every node group needs a name", f)
		}
		if _, dup := templates[g.Name]; dup {
			return nil, nil, fmt.Errorf("%s.name: group %q defined twice", f, g.Name)
		}
		if g.Count < 0 || g.Count > maxNodesPerGroup {
			return nil, nil, fmt.Errorf("%s.count: %d must be within 0..%d", f, g.Count, maxNodesPerGroup)
		}
		capQ := map[string]string{}
		for k, v := range g.Capacity {
			capQ[k] = v
		}
		if _, ok := capQ[sim.PodsR]; !ok {
			// The kubelet's default maxPods.
			capQ[sim.PodsR] = "110"
		}
		capacity, err := b.names.Parse(capQ)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.capacity: %w", f, err)
		}
		var taints []sim.Taint
		for j, t := range g.Taints {
			switch sim.TaintEffect(t.Effect) {
			case sim.NoSchedule, sim.PreferNoSchedule, sim.NoExecute:
			default:
				return nil, nil, fmt.Errorf("%s.taints[%d].effect: %q is not NoSchedule, PreferNoSchedule or NoExecute", f, j, t.Effect)
			}
			taints = append(taints, sim.Taint{Key: t.Key, Value: t.Value, Effect: sim.TaintEffect(t.Effect)})
		}
		spec := sim.NodeSpec{Group: g.Name, Labels: g.Labels, Taints: taints, Capacity: capacity}
		templates[g.Name] = spec
		b.shapes = append(b.shapes, capacity)
		b.groups = append(b.groups, spec)
		for k := range g.Count {
			n := spec
			n.Name = g.Name + "-" + strconv.Itoa(k)
			nodes = append(nodes, n)
			b.hosts = append(b.hosts, host{n.Name, len(b.groups) - 1})
			b.gpus += capacity[sim.GPUIndex]
		}
	}
	if len(nodes) == 0 {
		return nil, nil, fmt.Errorf("cluster.nodeGroups: every group has count 0; the cluster needs at least one node")
	}
	return nodes, templates, nil
}

// maxNodesPerGroup keeps a typo from allocating millions of nodes.
const maxNodesPerGroup = 1_000_000

func (b *builder) events(templates map[string]sim.NodeSpec) ([]sim.ClusterEvent, error) {
	var out []sim.ClusterEvent
	known := map[string]bool{}
	for _, g := range b.sc.Cluster.NodeGroups {
		for k := range g.Count {
			known[g.Name+"-"+strconv.Itoa(k)] = true
		}
	}
	kinds := []string{string(sim.NodeFail), string(sim.NodeRecover), string(sim.NodeAdd), string(sim.NodeRemove),
		string(sim.NodeDrain), string(sim.NodeCordon), string(sim.NodeUncordon)}
	for i, ev := range b.sc.Events {
		f := fmt.Sprintf("events[%d]", i)
		at, err := duration(f+".at", ev.At, 0)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(kinds, ev.Type) {
			return nil, fmt.Errorf("%s.type: %q is unknown; use one of %s", f, ev.Type, strings.Join(kinds, ", "))
		}
		ce := sim.ClusterEvent{At: at, Kind: sim.EventKind(ev.Type), Node: ev.Node}
		if ce.Kind != sim.NodeAdd && !known[ev.Node] {
			return nil, fmt.Errorf("%s.node: no node named %q; nodes are named <group>-<index>, or added by an earlier nodeAdd", f, ev.Node)
		}
		if ce.Kind == sim.NodeAdd {
			if known[ev.Name] {
				return nil, fmt.Errorf("%s.name: a node named %q already exists", f, ev.Name)
			}
			known[ev.Name] = true
			t, ok := templates[ev.Group]
			if !ok {
				return nil, fmt.Errorf("%s.group: no node group %q to copy the new node from", f, ev.Group)
			}
			if ev.Name == "" {
				return nil, fmt.Errorf("%s.name: nodeAdd needs the new node's name", f)
			}
			t.Name = ev.Name
			ce.Spec = &t
		}
		out = append(out, ce)
	}
	return out, nil
}

func (b *builder) failures(cfg *sim.Config) error {
	for i, nf := range b.sc.Failures.Nodes {
		f := fmt.Sprintf("failures.nodes[%d]", i)
		mtbf, err := duration(f+".mtbf", nf.MTBF, 0)
		if err != nil {
			return err
		}
		mttr, err := duration(f+".mttr", nf.MTTR, 0)
		if err != nil {
			return err
		}
		if mtbf <= 0 || mttr <= 0 {
			return fmt.Errorf("%s: mtbf and mttr must be positive durations", f)
		}
		if nf.Shape < 0 {
			return fmt.Errorf("%s.shape: %v must be positive (1 is exponential)", f, nf.Shape)
		}
		cfg.Failures = append(cfg.Failures, sim.FailureModel{Group: nf.Group, MTBF: mtbf, MTTR: mttr, Shape: nf.Shape})
	}
	if pf := b.sc.Failures.Pods; pf != nil {
		if pf.Probability < 0 || pf.Probability > 1 {
			return fmt.Errorf("failures.pods.probability: %v must be within 0..1", pf.Probability)
		}
		if pf.MaxRetries < 0 {
			return fmt.Errorf("failures.pods.maxRetries: %d is negative", pf.MaxRetries)
		}
		bo, err := duration("failures.pods.backoff", pf.Backoff, 10*sim.Second)
		if err != nil {
			return err
		}
		mbo, err := duration("failures.pods.maxBackoff", pf.MaxBackoff, 300*sim.Second)
		if err != nil {
			return err
		}
		cfg.PodFailure = sim.PodFailure{Probability: pf.Probability, MaxRetries: pf.MaxRetries, Backoff: bo, MaxBackoff: mbo}
	}
	return nil
}

func (b *builder) timing(cfg *sim.Config) error {
	var err error
	if cfg.Tick, err = duration("tick", b.sc.Tick, 0); err != nil {
		return err
	}
	cfg.TickOnly = b.sc.TickOnly
	if cfg.TickOnly && cfg.Tick <= 0 {
		return fmt.Errorf("tickOnly: needs a positive tick")
	}
	if cfg.SampleEvery, err = duration("sample", b.sc.Sample, 60*sim.Second); err != nil {
		return err
	}
	if cfg.StopAt, err = duration("stop.time", b.sc.Stop.Time, 0); err != nil {
		return err
	}
	if b.sc.Stop.Pods < 0 {
		return fmt.Errorf("stop.pods: %d is negative", b.sc.Stop.Pods)
	}
	cfg.StopAfterPods = b.sc.Stop.Pods
	return nil
}

func (b *builder) scheduler(profile string) (sim.Scheduler, error) {
	s := b.sc.Scheduler
	if profile == "" {
		profile = "kube-default"
	}
	if profile == "kube-default" {
		return b.framework()
	}
	if profile == KubeFramework {
		return b.hosted()
	}
	if profile == "remote" {
		return b.remoteScheduler()
	}
	if !slices.Contains(policy.Names, profile) {
		return nil, fmt.Errorf("scheduler.profile: %q is unknown; use one of %s, remote", profile, strings.Join(Profiles(), ", "))
	}
	if !b.lenient && (s.Plugins != nil || len(s.Extenders) > 0 || s.ScoringStrategy != nil || len(s.PluginConfig) > 0) {
		return nil, fmt.Errorf("scheduler.plugins/pluginConfig/extenders/scoringStrategy: only the kube-default and kube-framework profiles have plugins; profile %q does not use them", profile)
	}
	pl, err := policy.NewPlacement(s.Placement)
	if err != nil {
		return nil, fmt.Errorf("scheduler.placement: %w", err)
	}
	quotas, err := b.quotas()
	if err != nil {
		return nil, err
	}
	if s.StarveLimit < 0 {
		return nil, fmt.Errorf("scheduler.starveLimit: %v is negative; give a factor such as 2, or 0 to turn the guard off", s.StarveLimit)
	}
	if g := s.Gittins; g != nil && g.Quantum < 0 {
		return nil, fmt.Errorf("scheduler.gittins.quantum: %v must be a positive number of GPU-seconds", g.Quantum)
	}
	o := policy.Options{Placement: pl, Quotas: quotas, Thresholds: s.LASThresholds, StarveLimit: s.StarveLimit}
	if profile == "gittins" {
		if o.GittinsSamples, err = b.gittinsSamples(); err != nil {
			return nil, err
		}
		if s.Gittins != nil {
			o.GittinsQuantum = s.Gittins.Quantum
		}
	}
	p, err := policy.New(profile, o)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	return p, nil
}

// gittinsSamples reads the gittins service distribution, or takes the service (GPU-seconds)
// of every job of the workload, a gang counting as one job.
func (b *builder) gittinsSamples() ([]float64, error) {
	if g := b.sc.Scheduler.Gittins; g != nil && g.Samples != "" {
		path := b.path(g.Samples)
		v, err := readSamples(path)
		if err != nil {
			return nil, fmt.Errorf("scheduler.gittins.samples: %w", err)
		}
		return v, nil
	}
	// Drawn from a fresh build: drawing from this one's submitters would use up their jobs.
	jobs, err := Jobs(b.sc, b.seed)
	if err != nil {
		return nil, fmt.Errorf("scheduler.gittins.samples: %w; give a file of job service samples", err)
	}
	gangs := map[string]int{}
	var out []float64
	for _, j := range jobs {
		service := float64(j.GPU) / sim.Milli * j.Duration
		if j.Gang == "" {
			out = append(out, service)
			continue
		}
		if i, ok := gangs[j.Gang]; ok {
			out[i] += service
			continue
		}
		gangs[j.Gang] = len(out)
		out = append(out, service)
	}
	return out, nil
}

// gangTimeout gives every gang without a timeout of its own the scenario's default.
func (b *builder) gangTimeout(subs []sim.Submitter) error {
	t, err := duration("scheduler.gangTimeout", b.sc.Scheduler.GangTimeout, 0)
	if err != nil || t == 0 {
		return err
	}
	for i, s := range subs {
		subs[i] = gangDefaults{s, t}
	}
	return nil
}

// gangDefaults sets the default schedule timeout on the gang members a submitter makes.
type gangDefaults struct {
	sim.Submitter
	timeout sim.Time
}

func (g gangDefaults) Step(now sim.Time, st sim.Status) ([]*sim.Pod, sim.Time, error) {
	pods, next, err := g.Submitter.Step(now, st)
	for _, p := range pods {
		if p.Gang != "" && p.GangTimeout == 0 {
			p.GangTimeout = g.timeout
		}
	}
	return pods, next, err
}

func (b *builder) quotas() (map[string]sim.Resources, error) {
	if len(b.sc.Scheduler.Quotas) == 0 {
		return nil, nil
	}
	out := map[string]sim.Resources{}
	for u, q := range b.sc.Scheduler.Quotas {
		r, err := b.names.Parse(q)
		if err != nil {
			return nil, fmt.Errorf("scheduler.quotas.%s: %w", u, err)
		}
		// Resources a quota does not name are unlimited.
		for i := range r {
			if i >= b.names.Len() {
				r[i] = 1 << 62
			} else if _, named := q[b.names.Name(i)]; !named {
				r[i] = 1 << 62
			}
		}
		out[u] = r
	}
	return out, nil
}

func (b *builder) framework() (sim.Scheduler, error) {
	s := b.sc.Scheduler
	p := scheduler.KubeDefault()
	p.PercentageOfNodesToScore = s.PercentageOfNodesToScore
	if s.Placement != "" && !b.lenient {
		return nil, fmt.Errorf("scheduler.placement: kube-default places with score plugins; set scoringStrategy.type (LeastAllocated spreads, MostAllocated packs) instead")
	}
	quotas, err := b.quotas()
	if err != nil {
		return nil, err
	}
	p.Quotas = quotas
	if pl := s.Plugins; pl != nil && !b.lenient {
		if pl.PreEnqueue != nil || pl.PreScore != nil || pl.Permit != nil || pl.PreBind != nil || pl.PostBind != nil || pl.MultiPoint != nil {
			return nil, fmt.Errorf("scheduler.plugins: preEnqueue, preScore, permit, preBind, postBind and multiPoint are extension points of kube-scheduler framework plugins; use profile %s", KubeFramework)
		}
	}
	if pl := s.Plugins; pl != nil {
		if pl.QueueSort != "" {
			p.QueueSort = pl.QueueSort
		}
		if pl.PreFilter != nil {
			p.PreFilter = pl.PreFilter
		}
		if pl.Filter != nil {
			p.Filter = pl.Filter
		}
		if pl.Score != nil {
			p.Score = nil
			for _, r := range pl.Score {
				p.Score = append(p.Score, scheduler.PluginRef{Name: r.Name, Weight: r.Weight})
			}
		}
		if pl.Reserve != nil {
			p.Reserve = pl.Reserve
		}
		if pl.PostFilter != nil {
			p.PostFilter = *pl.PostFilter
		}
		if pl.Bind != nil {
			p.Bind = pl.Bind
		}
	}
	if ss := s.ScoringStrategy; ss != nil {
		p.ScoringStrategy = ss.Type
		for _, r := range ss.Resources {
			p.ScoringResources = append(p.ScoringResources, scheduler.ResourceRef{Name: r.Name, Weight: r.Weight})
		}
	}
	if err := b.customPlugins(&p); err != nil {
		return nil, err
	}
	exts, err := b.extenders()
	if err != nil {
		return nil, err
	}
	p.Extenders = exts
	f, err := scheduler.New(p, b.names, b.rng(streamScheduler))
	if err != nil {
		return nil, fmt.Errorf("scheduler.plugins: %w", err)
	}
	return f, nil
}

func (b *builder) workload() ([]sim.Submitter, error) {
	var subs []sim.Submitter
	for i, w := range b.sc.Workload {
		f := fmt.Sprintf("workload[%d]", i)
		set := 0
		for _, ok := range []bool{w.Trace != nil, w.Preset != nil, w.Poisson != nil, w.Uniform != nil, w.Binomial != nil, w.Users != nil, w.Feedback != nil, w.Remote != nil} {
			if ok {
				set++
			}
		}
		if set != 1 {
			return nil, fmt.Errorf("%s: set exactly one of trace, preset, poisson, uniform, binomial, users, feedback, remote (found %d)", f, set)
		}
		rng := b.rng(streamWorkload + uint64(i))
		switch {
		case w.Trace != nil:
			s, jobs, err := b.trace(f+".trace", w.Trace)
			if err != nil {
				return nil, err
			}
			subs = append(subs, s)
			b.sources = append(b.sources, func() []submitter.Job { return jobs })
		case w.Preset != nil:
			s, err := b.preset(f+".preset", w.Preset, rng)
			if err != nil {
				return nil, err
			}
			subs = append(subs, s.Submitter())
			b.sources = append(b.sources, s.Jobs)
		case w.Poisson != nil, w.Uniform != nil, w.Binomial != nil:
			s, err := b.generator(f, w, rng)
			if err != nil {
				return nil, err
			}
			subs = append(subs, s.Submitter())
			b.sources = append(b.sources, s.Jobs)
		case w.Users != nil:
			for j, u := range w.Users {
				s, err := b.user(fmt.Sprintf("%s.users[%d]", f, j), u, b.rng(streamWorkload+uint64(i)*1000+uint64(j)))
				if err != nil {
					return nil, err
				}
				subs = append(subs, s.Submitter())
				b.sources = append(b.sources, s.Jobs)
			}
		case w.Feedback != nil:
			s, err := b.feedback(f+".feedback", w.Feedback, rng)
			if err != nil {
				return nil, err
			}
			subs = append(subs, s)
			b.sources = append(b.sources, nil)
		case w.Remote != nil:
			s, err := b.remoteSubmitter(f+".remote", w.Remote)
			if err != nil {
				return nil, err
			}
			subs = append(subs, s)
			b.sources = append(b.sources, nil)
		}
	}
	return subs, nil
}

func (b *builder) fits(r *sim.Resources) bool {
	for i := range b.shapes {
		if r.Fits(&b.shapes[i]) {
			return true
		}
	}
	return false
}

func (b *builder) checkJobs(f string, jobs []submitter.Job) error {
	for i := range jobs {
		p := jobs[i].Pod()
		if p.Requests[sim.PodsIndex] == 0 {
			p.Requests[sim.PodsIndex] = sim.Milli
		}
		if !b.fits(&p.Requests) {
			return fmt.Errorf("%s: pod %s (requests %s) fits on no node group; lower its request or add a larger node group",
				f, p.Name, b.names.Format(&p.Requests))
		}
		if !b.admissible(p) {
			return fmt.Errorf("%s: pod %s fits no node group once its node selector, affinity and tolerations are applied; check its labels and tolerations against cluster.nodeGroups",
				f, p.Name)
		}
	}
	return nil
}

type host struct {
	name  string
	group int
}

// admissible reports whether some node group satisfies the pod's resources, taints, node
// selector and required affinity together.
func (b *builder) admissible(p *sim.Pod) bool {
	for i := range b.groups {
		n := &sim.Node{Labels: b.groups[i].Labels, Taints: b.groups[i].Taints, Capacity: b.groups[i].Capacity, Up: true}
		if p.Feasible(n) {
			return true
		}
	}
	// Each node also carries its name as kubernetes.io/hostname, which group labels do not
	// show: a pod pinned to a host is checked against the nodes of its group.
	for _, h := range b.hosts {
		g := &b.groups[h.group]
		labels := map[string]string{sim.HostnameLabel: h.name}
		for k, v := range g.Labels {
			labels[k] = v
		}
		n := &sim.Node{Labels: labels, Taints: g.Taints, Capacity: g.Capacity, Up: true}
		if p.Feasible(n) {
			return true
		}
	}
	return false
}

func (b *builder) path(p string) string {
	if filepath.IsAbs(p) || b.sc.Dir == "" {
		return p
	}
	return filepath.Join(b.sc.Dir, p)
}

func (b *builder) trace(f string, t *TraceSource) (sim.Submitter, []submitter.Job, error) {
	if t.Path == "" {
		return nil, nil, fmt.Errorf("%s.path: missing", f)
	}
	path := b.path(t.Path)
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s.path: %w", f, err)
	}
	defer file.Close()
	var jobs []submitter.Job
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		jobs, err = submitter.ReadCSV(file)
	case ".jsonl", ".ndjson":
		jobs, err = submitter.ReadJSONL(file)
	case ".yaml", ".yml", ".json":
		jobs, err = b.manifests(path)
	default:
		return nil, nil, fmt.Errorf("%s.path: %s has an unknown extension; use .csv, .jsonl, or .yaml/.json Pod manifests", f, path)
	}
	if err != nil {
		if le := (*submitter.LineError)(nil); errors.As(err, &le) {
			return nil, nil, fmt.Errorf("%s: %s:%d: %w", f, path, le.Line, le.Err)
		}
		return nil, nil, fmt.Errorf("%s: %s: %w", f, path, err)
	}
	if err := b.checkJobs(f, jobs); err != nil {
		return nil, nil, err
	}
	b.total += len(jobs)
	b.pods += float64(len(jobs))
	for i := range jobs {
		b.horizon = max(b.horizon, jobs[i].Submit)
	}
	return submitter.NewTrace(jobs), jobs, nil
}

func (b *builder) manifests(path string) ([]submitter.Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := kube.Read(data)
	if err != nil {
		return nil, err
	}
	pods := m.Pods
	jobs := make([]submitter.Job, 0, len(pods))
	gangs := map[string]int{}
	names := map[string]int{}
	for i := range pods {
		sp, err := pods[i].ToSim(b.names)
		if err != nil {
			return nil, fmt.Errorf("pod %d (%s): %w", i, pods[i].Metadata.Name, err)
		}
		if sp.DefaultSpread, err = m.SpreadSelector(&pods[i]); err != nil {
			return nil, fmt.Errorf("pod %d (%s): %w", i, pods[i].Metadata.Name, err)
		}
		at, err := pods[i].Submit()
		if err != nil {
			return nil, fmt.Errorf("pod %d (%s): %w", i, pods[i].Metadata.Name, err)
		}
		if sp.Name == "" {
			sp.Name = fmt.Sprintf("pod-%d", i)
		}
		if prev, dup := names[sp.Name]; dup {
			return nil, fmt.Errorf("pod %d (%s): name already used by pod %d; names must be unique", i, sp.Name, prev)
		}
		names[sp.Name] = i
		if sp.Gang != "" {
			gangs[sp.Gang]++
		}
		jobs = append(jobs, submitter.Job{Name: sp.Name, User: sp.User, Submit: at, Duration: sp.Duration.Seconds(),
			Priority: sp.Priority, Gang: sp.Gang, GangSize: sp.GangSize, GangMin: sp.GangMin, GangTimeout: sp.GangTimeout.Seconds(), Template: sp})
	}
	for i := range jobs {
		if jobs[i].Gang != "" && jobs[i].GangSize == 0 {
			jobs[i].GangSize = gangs[jobs[i].Gang]
		}
	}
	return jobs, nil
}

func (b *builder) memory(f, s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	m, err := sim.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f, err)
	}
	return float64(m) / sim.Milli, nil
}

func (b *builder) preset(f string, p *PresetSource, rng *sim.Rand) (*submitter.Process, error) {
	if !slices.Contains(submitter.Presets, p.Name) {
		return nil, fmt.Errorf("%s.name: %q is unknown; use one of %v", f, p.Name, submitter.Presets)
	}
	if p.Jobs <= 0 {
		return nil, fmt.Errorf("%s.jobs: must be positive", f)
	}
	mem, err := b.memory(f+".memoryPerGPU", p.MemoryPerGPU)
	if err != nil {
		return nil, err
	}
	maxDur, err := duration(f+".maxDuration", p.MaxDuration, 0)
	if err != nil {
		return nil, err
	}
	load := p.Load
	if load == 0 {
		load = 0.8
	}
	var perNode int64
	for _, s := range b.shapes {
		perNode = max(perNode, s[sim.GPUIndex]/sim.Milli)
	}
	if perNode == 0 {
		return nil, fmt.Errorf("%s: preset %s needs GPU nodes; give a node group capacity nvidia.com/gpu", f, p.Name)
	}
	cfg := submitter.PresetConfig{Jobs: p.Jobs, ClusterGPUs: int(b.gpus / sim.Milli), Load: load, Rate: p.Rate,
		GPUsPerNode: int(perNode), CPUPerGPU: p.CPUPerGPU, MemoryPerGPU: mem, MaxDuration: maxDur.Seconds()}
	proc, err := submitter.Preset(p.Name, cfg, rng)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	if err := b.checkShape(f, &proc.Shape); err != nil {
		return nil, err
	}
	b.total += p.Jobs
	b.expect(proc)
	return proc, nil
}

// expect adds a process's expected pods and last arrival to the estimate.
func (b *builder) expect(p *submitter.Process) {
	if pods, until, ok := p.Expect(); ok {
		b.pods += pods
		b.horizon = max(b.horizon, until)
	}
}

// checkShape rejects shapes whose largest pod fits on no node group.
func (b *builder) checkShape(f string, s *submitter.Shape) error {
	maxG := 0.0
	if c, ok := s.GPUs.(*submitter.Choice); ok {
		maxG = slices.Max(c.Values)
	} else if s.GPUs != nil {
		maxG = s.GPUs.Mean()
	}
	g := maxG
	if s.MaxGPUsPerPod > 0 && g > float64(s.MaxGPUsPerPod) {
		g = float64(s.MaxGPUsPerPod)
	}
	var r sim.Resources
	r[sim.GPUIndex] = sim.FromUnits(g)
	if g > 0 {
		r[sim.CPUIndex] = sim.FromUnits(s.CPUPerGPU * g)
		r[sim.MemoryIndex] = int64(s.MemoryPerGPU*g) * sim.Milli
	} else {
		r[sim.CPUIndex] = sim.FromUnits(s.CPU)
		r[sim.MemoryIndex] = int64(s.Memory) * sim.Milli
	}
	r[sim.PodsIndex] = sim.Milli
	if !b.fits(&r) {
		return fmt.Errorf("%s: the largest pod of this workload (%s) fits on no node group; lower the sizes, set shape.maxGPUsPerPod, or add a larger node group", f, b.names.Format(&r))
	}
	return nil
}

func (b *builder) dist(f string, d *Dist) (submitter.Dist, error) {
	if d == nil {
		return nil, fmt.Errorf("%s: missing distribution", f)
	}
	set := 0
	var out submitter.Dist
	if d.Const != nil {
		set++
		out = submitter.Const{V: *d.Const}
	}
	if d.Uniform != nil {
		set++
		if d.Uniform.Max < d.Uniform.Min {
			return nil, fmt.Errorf("%s.uniform: max < min", f)
		}
		out = submitter.Uniform{Min: d.Uniform.Min, Max: d.Uniform.Max}
	}
	if d.Exponential != nil {
		set++
		out = submitter.Exponential{MeanV: d.Exponential.Mean}
	}
	if d.LogNormal != nil {
		set++
		if d.LogNormal.Sigma < 0 {
			return nil, fmt.Errorf("%s.lognormal.sigma: must not be negative", f)
		}
		out = submitter.LogNormal{Mu: d.LogNormal.Mu, Sigma: d.LogNormal.Sigma, Max: d.LogNormal.Max}
	}
	if d.LogUniform != nil {
		set++
		out = submitter.LogUniform{Scale: d.LogUniform.Scale, Lo: d.LogUniform.Lo, Hi: d.LogUniform.Hi}
	}
	if d.Choice != nil {
		set++
		c, err := submitter.NewChoice(d.Choice.Values, d.Choice.Weights)
		if err != nil {
			return nil, fmt.Errorf("%s.choice: %w", f, err)
		}
		for _, v := range d.Choice.Values {
			if v < 0 {
				return nil, fmt.Errorf("%s.choice.values: %v is negative", f, v)
			}
		}
		out = c
	}
	if set != 1 {
		return nil, fmt.Errorf("%s: set exactly one of const, uniform, exponential, lognormal, logUniform, choice", f)
	}
	if out.Mean() < 0 {
		return nil, fmt.Errorf("%s: the distribution has a negative mean", f)
	}
	return out, nil
}

func (b *builder) shape(f string, s *Shape) (submitter.Shape, error) {
	var out submitter.Shape
	var err error
	if s.GPUs != nil {
		if out.GPUs, err = b.dist(f+".gpus", s.GPUs); err != nil {
			return out, err
		}
	}
	if s.Duration != nil || len(s.DurationByGPUs) == 0 {
		if out.Duration, err = b.dist(f+".duration", s.Duration); err != nil {
			return out, err
		}
	}
	if len(s.DurationByGPUs) > 0 {
		out.DurationByGPUs = map[int]submitter.Dist{}
		for k, d := range s.DurationByGPUs {
			g, err := strconv.Atoi(k)
			if err != nil {
				return out, fmt.Errorf("%s.durationByGPUs: key %q must be a GPU count", f, k)
			}
			if out.DurationByGPUs[g], err = b.dist(fmt.Sprintf("%s.durationByGPUs.%s", f, k), &d); err != nil {
				return out, err
			}
		}
	}
	out.CPU, out.CPUPerGPU = s.CPU, s.CPUPerGPU
	if out.Memory, err = b.memory(f+".memory", s.Memory); err != nil {
		return out, err
	}
	if out.MemoryPerGPU, err = b.memory(f+".memoryPerGPU", s.MemoryPerGPU); err != nil {
		return out, err
	}
	if s.CPU == 0 && s.CPUPerGPU == 0 {
		out.CPU, out.CPUPerGPU = 1, 1
	}
	out.MaxGPUsPerPod, out.Users, out.UserWeights, out.Priority = s.MaxGPUsPerPod, s.Users, s.UserWeights, s.Priority
	if err := b.checkShape(f, &out); err != nil {
		return out, err
	}
	return out, nil
}

func (b *builder) generator(f string, w Workload, rng *sim.Rand) (*submitter.Process, error) {
	var g *Generator
	var arr submitter.Arrival
	switch {
	case w.Poisson != nil:
		g, f = w.Poisson, f+".poisson"
		if g.Rate <= 0 {
			return nil, fmt.Errorf("%s.rate: must be positive (jobs per second)", f)
		}
		arr = submitter.Poisson{Rate: g.Rate}
	case w.Uniform != nil:
		g, f = w.Uniform, f+".uniform"
		if g.Min < 0 || g.Max < g.Min || g.Max == 0 {
			return nil, fmt.Errorf("%s: need 0 <= min <= max and max > 0 (inter-arrival seconds)", f)
		}
		arr = submitter.UniformArrivals{Min: g.Min, Max: g.Max}
	default:
		g, f = w.Binomial, f+".binomial"
		if g.Interval <= 0 || g.N <= 0 || g.N > 1_000_000 || g.P <= 0 || g.P > 1 {
			return nil, fmt.Errorf("%s: need interval > 0, 0 < n <= 1000000 and 0 < p <= 1", f)
		}
		arr = submitter.Binomial{Interval: g.Interval, N: g.N, P: g.P}
	}
	shape, err := b.shape(f+".shape", &g.Shape)
	if err != nil {
		return nil, err
	}
	until, err := duration(f+".until", g.Until, 0)
	if err != nil {
		return nil, err
	}
	if g.Count < 0 {
		return nil, fmt.Errorf("%s.count: %d is negative", f, g.Count)
	}
	p, err := submitter.NewProcess(submitter.Process{Name: g.Name, Arrival: arr, Shape: shape, Count: g.Count, Until: until.Seconds()}, rng)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	b.total += g.Count
	b.expect(p)
	return p, nil
}

func (b *builder) user(f string, u UserProfile, rng *sim.Rand) (*submitter.Process, error) {
	if u.Name == "" {
		return nil, fmt.Errorf("%s.name: missing", f)
	}
	if u.Rate <= 0 {
		return nil, fmt.Errorf("%s.rate: must be positive (jobs per second)", f)
	}
	if len(u.Hourly) > 24 {
		return nil, fmt.Errorf("%s.hourly: at most 24 entries (one per hour of day)", f)
	}
	positive := len(u.Hourly) < 24
	for h, v := range u.Hourly {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s.hourly[%d]: %v must be a finite non-negative factor", f, h, v)
		}
		positive = positive || v > 0
	}
	if !positive {
		return nil, fmt.Errorf("%s.hourly: every hour is 0, so no job would ever arrive", f)
	}
	shape, err := b.shape(f+".shape", &u.Shape)
	if err != nil {
		return nil, err
	}
	until, err := duration(f+".until", u.Until, 0)
	if err != nil {
		return nil, err
	}
	p, err := submitter.NewProcess(submitter.Process{Name: u.Name, User: u.Name, Arrival: submitter.Diurnal{Rate: u.Rate, Hourly: u.Hourly, Burst: u.Burst},
		Shape: shape, Count: u.Count, Until: until.Seconds()}, rng)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	b.total += u.Count
	b.expect(p)
	return p, nil
}

func (b *builder) feedback(f string, fb *FeedbackSource, rng *sim.Rand) (sim.Submitter, error) {
	shape, err := b.shape(f+".shape", &fb.Shape)
	if err != nil {
		return nil, err
	}
	iv, err := duration(f+".interval", fb.Interval, 60*sim.Second)
	if err != nil {
		return nil, err
	}
	if fb.Count <= 0 {
		return nil, fmt.Errorf("%s.count: must be positive", f)
	}
	src, err := submitter.NewProcess(submitter.Process{Name: "feedback", Arrival: submitter.Poisson{Rate: 1}, Shape: shape, Count: fb.Count}, rng)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	s, err := submitter.NewFeedback(iv, fb.MaxPending, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	b.total += fb.Count
	b.pods += float64(fb.Count)
	return s, nil
}

// readSamples reads a CSV file with a header row and one number in the first column of every
// other row.
func readSamples(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	var out []float64
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if line == 1 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s:%d: %q is not a non-negative number of GPU-seconds", path, line, rec[0])
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples after the header row", path)
	}
	return out, nil
}

// customPlugins makes the custom plugins the profile names with their pluginConfig args.
func (b *builder) customPlugins(p *scheduler.Profile) error {
	args := map[string]json.RawMessage{}
	for i, pc := range b.sc.Scheduler.PluginConfig {
		f := fmt.Sprintf("scheduler.pluginConfig[%d]", i)
		if pc.Name == "" {
			return fmt.Errorf("%s: name is empty", f)
		}
		if _, dup := args[pc.Name]; dup {
			return fmt.Errorf("%s: plugin %q is configured twice", f, pc.Name)
		}
		args[pc.Name] = pc.Args
		switch _, custom := b.opts.Plugins[pc.Name]; {
		case custom:
		case pc.Name == scheduler.NodeResourcesFitName:
			if err := fitArgs(p, pc.Args, b.sc.Scheduler.ScoringStrategy != nil); err != nil {
				return fmt.Errorf("%s.args: %w", f, err)
			}
		case pc.Name == scheduler.BalancedAllocationName:
			var a struct {
				Resources []PluginRef `json:"resources"`
			}
			if err := strictJSON(pc.Args, &a); err != nil {
				return fmt.Errorf("%s.args: %w", f, err)
			}
			p.BalancedResources = nil
			for _, r := range a.Resources {
				p.BalancedResources = append(p.BalancedResources, scheduler.ResourceRef{Name: r.Name, Weight: r.Weight})
			}
		default:
			return fmt.Errorf("%s: %q is not a custom plugin of this program (custom plugins: %s), nor NodeResourcesFit or NodeResourcesBalancedAllocation, the stock plugins with args; a plugin written in Go needs a jikken built with it (cmd/jikken/app.WithSimPlugin, docs/sim.md)", f, pc.Name, b.customList())
		}
	}
	for _, name := range p.Names() {
		factory, ok := b.opts.Plugins[name]
		if !ok {
			continue // a stock plugin, or unknown: scheduler.New names the point
		}
		pl, err := factory(args[name])
		if err != nil {
			return fmt.Errorf("scheduler.pluginConfig: plugin %s: %w", name, err)
		}
		if pl == nil || pl.Name() != name {
			got := "nil"
			if pl != nil {
				got = fmt.Sprintf("%q", pl.Name())
			}
			return fmt.Errorf("scheduler.plugins: the factory registered as %q made a plugin named %s", name, got)
		}
		if p.Custom == nil {
			p.Custom = map[string]scheduler.Plugin{}
		}
		p.Custom[name] = pl
	}
	return nil
}

func (b *builder) customList() string {
	if len(b.opts.Plugins) == 0 {
		return "none"
	}
	var names []string
	for n := range b.opts.Plugins {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// fitArgs applies NodeResourcesFit's args as kube-scheduler's NodeResourcesFitArgs spells
// them: {scoringStrategy: {type, resources}}.
func fitArgs(p *scheduler.Profile, raw json.RawMessage, strategySet bool) error {
	var a struct {
		ScoringStrategy *ScoringStrategy `json:"scoringStrategy"`
	}
	if err := strictJSON(raw, &a); err != nil {
		return err
	}
	if a.ScoringStrategy == nil {
		return nil
	}
	if strategySet {
		return errors.New("scoringStrategy is set both here and under scheduler.scoringStrategy; keep one")
	}
	p.ScoringStrategy = a.ScoringStrategy.Type
	p.ScoringResources = nil
	for _, r := range a.ScoringStrategy.Resources {
		p.ScoringResources = append(p.ScoringResources, scheduler.ResourceRef{Name: r.Name, Weight: r.Weight})
	}
	return nil
}

// strictJSON decodes plugin args, refusing unknown fields (a misspelt field would otherwise be
// ignored silently).
func strictJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// hosted builds the kube-framework profile: kube-scheduler framework plugins, the stock ones
// and those compiled into this program, run by sim/kubehost.
func (b *builder) hosted() (sim.Scheduler, error) {
	s := b.sc.Scheduler
	if !b.lenient {
		switch {
		case s.Placement != "":
			return nil, fmt.Errorf("scheduler.placement: %s places with score plugins; configure NodeResourcesFit's scoringStrategy instead", KubeFramework)
		case len(s.Extenders) > 0:
			return nil, fmt.Errorf("scheduler.extenders: the %s profile has no extenders; use kube-default, or a framework plugin", KubeFramework)
		case len(s.Quotas) > 0:
			return nil, fmt.Errorf("scheduler.quotas: the %s profile has no UserQuota plugin; use kube-default", KubeFramework)
		}
	}
	p := kubehost.Profile{PercentageOfNodesToScore: s.PercentageOfNodesToScore, Args: map[string]json.RawMessage{}}
	for i, pc := range s.PluginConfig {
		if pc.Name == "" {
			return nil, fmt.Errorf("scheduler.pluginConfig[%d]: name is empty", i)
		}
		if _, dup := p.Args[pc.Name]; dup {
			return nil, fmt.Errorf("scheduler.pluginConfig[%d]: plugin %q is configured twice", i, pc.Name)
		}
		p.Args[pc.Name] = pc.Args
	}
	if ss := s.ScoringStrategy; ss != nil && !b.lenient {
		if _, set := p.Args[kubehost.NodeResourcesFitName]; set {
			return nil, errors.New("scheduler.scoringStrategy: NodeResourcesFit's args in pluginConfig set it too; keep one")
		}
		raw, err := json.Marshal(map[string]any{"scoringStrategy": ss})
		if err != nil {
			return nil, err
		}
		p.Args[kubehost.NodeResourcesFitName] = raw
	}
	if pl := s.Plugins; pl != nil && !b.lenient {
		names := func(list []string) []kubehost.PluginRef {
			if list == nil {
				return nil
			}
			out := []kubehost.PluginRef{}
			for _, n := range list {
				out = append(out, kubehost.PluginRef{Name: n})
			}
			return out
		}
		weighted := func(list []PluginRef) []kubehost.PluginRef {
			if list == nil {
				return nil
			}
			out := []kubehost.PluginRef{}
			for _, r := range list {
				out = append(out, kubehost.PluginRef{Name: r.Name, Weight: r.Weight})
			}
			return out
		}
		p.Plugins = kubehost.Plugins{PreEnqueue: names(pl.PreEnqueue), PreFilter: names(pl.PreFilter), Filter: names(pl.Filter),
			PreScore: names(pl.PreScore), Score: weighted(pl.Score), Reserve: names(pl.Reserve), Permit: names(pl.Permit),
			PreBind: names(pl.PreBind), Bind: names(pl.Bind), PostBind: names(pl.PostBind), MultiPoint: weighted(pl.MultiPoint)}
		if pl.QueueSort != "" {
			p.Plugins.QueueSort = names([]string{pl.QueueSort})
		}
		if pl.PostFilter != nil {
			p.Plugins.PostFilter = names(*pl.PostFilter)
		}
	}
	if b.lenient {
		p.Args = nil
	}
	h, err := kubehost.New(p, b.opts.FrameworkPlugins, b.names, b.rng(streamScheduler))
	if err != nil {
		return nil, fmt.Errorf("scheduler.plugins: %w", err)
	}
	return h, nil
}

package scheduler

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/sim"
)

// PluginRef names a plugin at an extension point; Weight matters for score plugins only.
type PluginRef struct {
	Name   string
	Weight int64
}

// ResourceRef is a resource and its weight in a scoring strategy.
type ResourceRef struct {
	Name   string
	Weight int64
}

// Profile is a scheduler profile: which plugins run at each extension point, like a
// KubeSchedulerConfiguration profile. Plugins are looked up by name among the stock plugins
// and Custom.
type Profile struct {
	QueueSort  string
	PreFilter  []string
	Filter     []string
	Score      []PluginRef
	Reserve    []string
	PostFilter []string
	Bind       []string
	// ScoringStrategy is LeastAllocated (default) or MostAllocated, with the resources it
	// weighs (default cpu and memory with weight 1, as kube-scheduler).
	ScoringStrategy  string
	ScoringResources []ResourceRef
	// BalancedResources are the resources NodeResourcesBalancedAllocation compares (its own
	// args in kube-scheduler, not the scoring strategy's): default cpu and memory.
	BalancedResources []ResourceRef
	// PercentageOfNodesToScore is kube-scheduler's knob: 0 is adaptive, 100 scans every node.
	PercentageOfNodesToScore int
	Extenders                []Extender
	// Custom adds plugins written in Go, by name.
	Custom map[string]Plugin
	// Quotas, when set, caps each listed user's holdings through the UserQuota pre-filter
	// (added in front of the profile's pre-filters). Unnamed resources should be set high.
	Quotas map[string]sim.Resources
}

// KubeDefault returns the default profile: PrioritySort; the filters TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread and InterPodAffinity; the
// scores NodeResourcesFit (LeastAllocated), NodeResourcesBalancedAllocation, TaintToleration,
// NodeAffinity, PodTopologySpread and InterPodAffinity with kube-scheduler's default weights
// (1, 1, 3, 2, 2, 2) and v1.37's score formulas; DefaultPreemption; DefaultBinder. Plugins of
// the real default profile that need objects the simulator does not model (volumes, images)
// are left out; sim/fidelity checks the profile against the real kube-scheduler.
func KubeDefault() Profile {
	return Profile{
		QueueSort: PrioritySortName,
		PreFilter: []string{NodePortsName, PodTopologySpreadName, InterPodAffinityName},
		Filter: []string{TaintTolerationName, NodeAffinityName, NodePortsName, NodeResourcesFitName,
			PodTopologySpreadName, InterPodAffinityName},
		Score: []PluginRef{
			{NodeResourcesFitName, 1}, {BalancedAllocationName, 1},
			{TaintTolerationName, 3}, {NodeAffinityName, 2},
			{PodTopologySpreadName, 2}, {InterPodAffinityName, 2},
		},
		PostFilter:      []string{DefaultPreemptionName},
		Bind:            []string{DefaultBinderName},
		ScoringStrategy: LeastAllocated,
	}
}

// StockPlugins lists the plugin names New knows without Custom.
func StockPlugins() []string {
	return []string{PrioritySortName, NodeResourcesFitName, BalancedAllocationName, TaintTolerationName,
		NodeAffinityName, NodePortsName, InterPodAffinityName, PodTopologySpreadName, DefaultPreemptionName,
		DefaultBinderName, UserQuotaName}
}

// New builds a framework from a profile. rng breaks score ties; give it its own stream.
func New(p Profile, names *sim.Names, rng *rand.Rand) (*Framework, error) {
	if rng == nil {
		return nil, fmt.Errorf("scheduler: no random generator; pass sim.NewRand(seed, stream)")
	}
	f := &Framework{percentage: p.PercentageOfNodesToScore, rng: rng, extenders: p.Extenders, gangs: map[string]bool{}, reqIDs: map[reqKey]uint32{}}
	if f.percentage < 0 || f.percentage > 100 {
		return nil, fmt.Errorf("percentageOfNodesToScore %d must be within 0..100", f.percentage)
	}
	strategy := p.ScoringStrategy
	if strategy == "" {
		strategy = LeastAllocated
	}
	if strategy != LeastAllocated && strategy != MostAllocated {
		return nil, fmt.Errorf("scoringStrategy %q is unknown; use %s or %s", strategy, LeastAllocated, MostAllocated)
	}
	res, err := ResourceWeights(names, p.ScoringResources, "scoring resource")
	if err != nil {
		return nil, err
	}
	balanced, err := ResourceWeights(names, p.BalancedResources, "balanced allocation resource")
	if err != nil {
		return nil, err
	}
	fit := &NodeResourcesFit{Strategy: strategy, Resources: res}
	stock := map[string]Plugin{
		PrioritySortName:       PrioritySort{},
		NodeResourcesFitName:   fit,
		BalancedAllocationName: &BalancedAllocation{Resources: balanced},
		TaintTolerationName:    &TaintToleration{},
		NodeAffinityName:       NodeAffinity{},
		NodePortsName:          NodePorts{},
		InterPodAffinityName:   &InterPodAffinity{},
		PodTopologySpreadName:  &PodTopologySpread{},
		DefaultPreemptionName:  &DefaultPreemption{fw: f},
		DefaultBinderName:      DefaultBinder{},
		UserQuotaName:          &UserQuota{Quotas: p.Quotas},
	}
	if len(p.Quotas) > 0 && !slices.Contains(p.PreFilter, UserQuotaName) {
		p.PreFilter = append([]string{UserQuotaName}, p.PreFilter...)
	}
	lookup := func(point, name string) (Plugin, error) {
		if pl, ok := p.Custom[name]; ok {
			return pl, nil
		}
		if pl, ok := stock[name]; ok {
			return pl, nil
		}
		known := StockPlugins()
		for k := range p.Custom {
			known = append(known, k)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("%s plugin %q is unknown; known plugins: %s (a plugin written in Go joins through Profile.Custom; for jikken sim, build jikken with it: cmd/jikken/app.WithSimPlugin)", point, name, strings.Join(known, ", "))
	}
	wrong := func(point, name string) error {
		return fmt.Errorf("plugin %q does not implement the %s extension point", name, point)
	}
	qs := p.QueueSort
	if qs == "" {
		qs = PrioritySortName
	}
	pl, err := lookup("queueSort", qs)
	if err != nil {
		return nil, err
	}
	var ok bool
	if f.queueSort, ok = pl.(QueueSortPlugin); !ok {
		return nil, wrong("queueSort", qs)
	}
	for _, n := range p.PreFilter {
		pl, err := lookup("preFilter", n)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(PreFilterPlugin)
		if !ok {
			return nil, wrong("preFilter", n)
		}
		f.preFilter = append(f.preFilter, x)
	}
	for _, n := range p.Filter {
		pl, err := lookup("filter", n)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(FilterPlugin)
		if !ok {
			return nil, wrong("filter", n)
		}
		if n == NodeResourcesFitName {
			f.fitFilters = true
		}
		f.filter = append(f.filter, x)
		// A filter that computes its per-attempt state in PreFilter gets it run even when the
		// profile lists it as a filter only, as kube-scheduler's multiPoint enables both.
		if pf, ok := pl.(PreFilterPlugin); ok && !slices.Contains(p.PreFilter, n) {
			f.preFilter = append(f.preFilter, pf)
		}
	}
	f.active = slices.Clone(f.filter)
	for _, r := range p.Score {
		pl, err := lookup("score", r.Name)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(ScorePlugin)
		if !ok {
			return nil, wrong("score", r.Name)
		}
		if r.Weight < 0 {
			return nil, fmt.Errorf("score plugin %q: weight %d is negative", r.Name, r.Weight)
		}
		w := r.Weight
		if w == 0 {
			w = 1
		}
		ws := weightedScore{plugin: x, weight: w}
		ws.skipper, _ = x.(ScoreSkipper)
		ws.preScorer, _ = x.(PreScorer)
		ws.normalizer, _ = x.(ScoreNormalizer)
		_, ws.byRequest = x.(RequestScorer)
		f.score = append(f.score, ws)
	}
	for _, n := range p.Reserve {
		pl, err := lookup("reserve", n)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(ReservePlugin)
		if !ok {
			return nil, wrong("reserve", n)
		}
		f.reserve = append(f.reserve, x)
	}
	for _, n := range p.PostFilter {
		pl, err := lookup("postFilter", n)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(PostFilterPlugin)
		if !ok {
			return nil, wrong("postFilter", n)
		}
		f.postFilter = append(f.postFilter, x)
	}
	for _, n := range p.Bind {
		pl, err := lookup("bind", n)
		if err != nil {
			return nil, err
		}
		x, ok := pl.(BindPlugin)
		if !ok {
			return nil, wrong("bind", n)
		}
		f.bind = append(f.bind, x)
	}
	return f, nil
}

// ResourceWeights resolves a scoring resource list; an empty list means cpu and memory with
// weight 1, kube-scheduler's default. "pods" is dropped: kube-scheduler's scorers find no
// allocatable scalar of that name and leave it out.
func ResourceWeights(names *sim.Names, refs []ResourceRef, what string) ([]ResourceWeight, error) {
	if len(refs) == 0 {
		return []ResourceWeight{{Index: sim.CPUIndex, Weight: 1}, {Index: sim.MemoryIndex, Weight: 1}}, nil
	}
	var res []ResourceWeight
	for _, r := range refs {
		if r.Weight < 0 {
			return nil, fmt.Errorf("%s %s: weight %d is negative", what, r.Name, r.Weight)
		}
		if r.Name == sim.PodsR {
			continue
		}
		i, err := names.Index(r.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		w := r.Weight
		if w == 0 {
			w = 1
		}
		native := r.Name == sim.CPU || r.Name == sim.Memory || r.Name == "ephemeral-storage"
		res = append(res, ResourceWeight{Index: i, Weight: w, Extended: !native})
	}
	return res, nil
}

// PluginFactory makes a custom plugin from its arguments: the JSON of the plugin's entry in a
// scenario's pluginConfig (null when it has none), like a kube-scheduler plugin factory
// receiving its args. A binary registers factories by name (see docs/sim.md, "Own plugins").
type PluginFactory func(args json.RawMessage) (Plugin, error)

// Names returns every plugin name the profile uses, in extension-point order, each once.
func (p *Profile) Names() []string {
	var out []string
	add := func(names ...string) {
		for _, n := range names {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	add(p.QueueSort)
	add(p.PreFilter...)
	add(p.Filter...)
	for _, r := range p.Score {
		add(r.Name)
	}
	add(p.Reserve...)
	add(p.PostFilter...)
	add(p.Bind...)
	return out
}

package kubehost

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
)

// PluginFactory builds a plugin from its args and the framework handle. It is the type of
// kube-scheduler's own factories (k8s.io/kubernetes/pkg/scheduler/framework/runtime's
// PluginFactory), so a factory written for kube-scheduler registers here unchanged. Args are
// a *runtime.Unknown holding the JSON of the plugin's pluginConfig entry, or nil when it has
// none, as kube-scheduler passes them to out-of-tree plugins (decode with
// runtime.DecodeInto or json.Unmarshal of Raw).
type PluginFactory = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error)

// PluginRef names a plugin at an extension point; Weight matters for Score (0 means 1).
type PluginRef struct {
	Name   string
	Weight int64
}

// Plugins lists the plugins of each extension point, as a KubeSchedulerConfiguration
// profile's plugins do. A nil list keeps the host's default for that point (see Defaults); an
// empty one turns the point off. MultiPoint plugins join every point they implement, after the
// listed ones, as in kube-scheduler.
type Plugins struct {
	PreEnqueue []PluginRef
	QueueSort  []PluginRef
	PreFilter  []PluginRef
	Filter     []PluginRef
	PostFilter []PluginRef
	PreScore   []PluginRef
	Score      []PluginRef
	Reserve    []PluginRef
	Permit     []PluginRef
	PreBind    []PluginRef
	Bind       []PluginRef
	PostBind   []PluginRef
	MultiPoint []PluginRef
}

// Profile configures a Host.
type Profile struct {
	// Name is the profile's name (Handle.ProfileName); default "default-scheduler".
	Name    string
	Plugins Plugins
	// Args holds each plugin's arguments as JSON, by plugin name (a profile's pluginConfig).
	Args map[string]json.RawMessage
	// PercentageOfNodesToScore is kube-scheduler's knob: 0 adaptive, 100 every node.
	PercentageOfNodesToScore int
}

// Defaults returns the host's default plugins: kube-scheduler's default profile as far as the
// simulator models it (the stock plugins of StockPlugins), with its score weights. Without a
// preScore list, every score plugin that implements PreScore runs there too, as kube-scheduler's
// multiPoint defaults do.
func Defaults() Plugins {
	refs := func(names ...string) []PluginRef {
		out := make([]PluginRef, len(names))
		for i, n := range names {
			out[i] = PluginRef{Name: n}
		}
		return out
	}
	return Plugins{
		QueueSort: refs(PrioritySortName),
		Filter:    refs(NodeUnschedulableName, TaintTolerationName, NodeAffinityName, NodeResourcesFitName),
		Score: []PluginRef{{NodeResourcesFitName, 1}, {BalancedAllocationName, 1},
			{TaintTolerationName, 3}, {NodeAffinityName, 2}},
		Bind: refs(DefaultBinderName),
	}
}

// New builds a host for a profile. registry holds the plugin factories by name (the stock
// ones, StockRegistry, are added unless registry overrides a name); rng breaks score ties
// (give it its own stream).
func New(p Profile, registry map[string]PluginFactory, names *sim.Names, rng *rand.Rand) (*Host, error) {
	if rng == nil {
		return nil, fmt.Errorf("kubehost: no random generator; pass sim.NewRand(seed, stream)")
	}
	if p.PercentageOfNodesToScore < 0 || p.PercentageOfNodesToScore > 100 {
		return nil, fmt.Errorf("percentageOfNodesToScore %d must be within 0..100", p.PercentageOfNodesToScore)
	}
	h := &Host{profile: p.Name, o: &objects{names: names}, rng: rng, percentage: p.PercentageOfNodesToScore}
	if h.profile == "" {
		h.profile = "default-scheduler"
	}
	h.ctx = klog.NewContext(context.Background(), logr.Discard())
	var err error
	if h.hd, err = newHandle(h); err != nil {
		return nil, err
	}
	reg := StockRegistry(names)
	for n, f := range registry {
		reg[n] = f
	}
	b := &build{h: h, reg: reg, args: p.Args, made: map[string]fwk.Plugin{}}
	return h, b.profile(p.Plugins)
}

type build struct {
	h    *Host
	reg  map[string]PluginFactory
	args map[string]json.RawMessage
	made map[string]fwk.Plugin
}

// plugin makes each named plugin once; a plugin at several points is one instance, as in
// kube-scheduler.
func (b *build) plugin(point, name string) (fwk.Plugin, error) {
	if pl, ok := b.made[name]; ok {
		return pl, nil
	}
	f, ok := b.reg[name]
	if !ok || f == nil {
		known := make([]string, 0, len(b.reg))
		for n := range b.reg {
			known = append(known, n)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("%s plugin %q is unknown; known framework plugins: %s (a plugin of your own joins a jikken built with it: cmd/jikken/app.WithFrameworkPlugin)",
			point, name, strings.Join(known, ", "))
	}
	var args runtime.Object
	if raw, ok := b.args[name]; ok && len(raw) > 0 && string(raw) != "null" {
		args = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	}
	pl, err := f(b.h.ctx, args, b.h.hd)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if pl == nil || pl.Name() != name {
		got := "nil"
		if pl != nil {
			got = fmt.Sprintf("%q", pl.Name())
		}
		return nil, fmt.Errorf("the factory registered as %q made a plugin named %s", name, got)
	}
	b.made[name] = pl
	return pl, nil
}

// point resolves one extension point's list into plugins of type T.
func point[T fwk.Plugin](b *build, name string, refs, multi []PluginRef) ([]T, []int64, error) {
	var out []T
	var weights []int64
	seen := map[string]bool{}
	for _, r := range refs {
		pl, err := b.plugin(name, r.Name)
		if err != nil {
			return nil, nil, err
		}
		x, ok := pl.(T)
		if !ok {
			return nil, nil, fmt.Errorf("plugin %q does not implement the %s extension point", r.Name, name)
		}
		if seen[r.Name] {
			return nil, nil, fmt.Errorf("plugin %q is listed twice at %s", r.Name, name)
		}
		seen[r.Name] = true
		out, weights = append(out, x), append(weights, r.Weight)
	}
	for _, r := range multi {
		if seen[r.Name] {
			continue
		}
		pl, err := b.plugin("multiPoint", r.Name)
		if err != nil {
			return nil, nil, err
		}
		if x, ok := pl.(T); ok {
			seen[r.Name] = true
			out, weights = append(out, x), append(weights, r.Weight)
		}
	}
	return out, weights, nil
}

func (b *build) profile(p Plugins) error {
	d := Defaults()
	or := func(list, def []PluginRef) []PluginRef {
		if list == nil {
			return def
		}
		return list
	}
	h, m := b.h, p.MultiPoint
	var err error
	if h.preEnqueue, _, err = point[fwk.PreEnqueuePlugin](b, "preEnqueue", or(p.PreEnqueue, d.PreEnqueue), m); err != nil {
		return err
	}
	qs, _, err := point[fwk.QueueSortPlugin](b, "queueSort", or(p.QueueSort, d.QueueSort), m)
	if err != nil {
		return err
	}
	if len(qs) != 1 {
		return fmt.Errorf("queueSort needs exactly one plugin, found %d", len(qs))
	}
	h.queueSort = qs[0]
	if h.preFilter, _, err = point[fwk.PreFilterPlugin](b, "preFilter", or(p.PreFilter, d.PreFilter), m); err != nil {
		return err
	}
	if h.filter, _, err = point[fwk.FilterPlugin](b, "filter", or(p.Filter, d.Filter), m); err != nil {
		return err
	}
	if h.postFilter, _, err = point[fwk.PostFilterPlugin](b, "postFilter", or(p.PostFilter, d.PostFilter), m); err != nil {
		return err
	}
	score, weights, err := point[fwk.ScorePlugin](b, "score", or(p.Score, d.Score), m)
	if err != nil {
		return err
	}
	preScore := p.PreScore
	if preScore == nil {
		preScore = []PluginRef{}
		for _, pl := range score {
			if _, ok := pl.(fwk.PreScorePlugin); ok {
				preScore = append(preScore, PluginRef{Name: pl.Name()})
			}
		}
	}
	if h.preScore, _, err = point[fwk.PreScorePlugin](b, "preScore", preScore, m); err != nil {
		return err
	}
	for i, pl := range score {
		w := weights[i]
		if w < 0 {
			return fmt.Errorf("score plugin %q: weight %d is negative", pl.Name(), w)
		}
		if w == 0 {
			w = 1
		}
		h.score = append(h.score, weightedScore{pl: pl, weight: w})
	}
	if h.reserve, _, err = point[fwk.ReservePlugin](b, "reserve", or(p.Reserve, d.Reserve), m); err != nil {
		return err
	}
	if h.permit, _, err = point[fwk.PermitPlugin](b, "permit", or(p.Permit, d.Permit), m); err != nil {
		return err
	}
	if h.preBind, _, err = point[fwk.PreBindPlugin](b, "preBind", or(p.PreBind, d.PreBind), m); err != nil {
		return err
	}
	if h.bind, _, err = point[fwk.BindPlugin](b, "bind", or(p.Bind, d.Bind), m); err != nil {
		return err
	}
	if len(h.bind) == 0 {
		return fmt.Errorf("bind needs at least one plugin (DefaultBinder binds in the simulation)")
	}
	if h.postBind, _, err = point[fwk.PostBindPlugin](b, "postBind", or(p.PostBind, d.PostBind), m); err != nil {
		return err
	}
	configured := make([]string, 0, len(b.args))
	for n := range b.args {
		configured = append(configured, n)
	}
	slices.Sort(configured)
	for _, n := range configured {
		if _, used := b.made[n]; !used {
			return fmt.Errorf("pluginConfig names %q, which no extension point uses", n)
		}
	}
	return nil
}

// Package gpuclass is an example simulator plugin: a filter and a score plugin in one. Pods
// that name a GPU class in a label run only on nodes of that class, and every pod prefers
// nodes whose class comes early in a configured order (the newest GPUs first, say).
package gpuclass

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// Name is the plugin's name in scenarios.
const Name = "GPUClass"

// Args are the plugin's arguments (scheduler.pluginConfig in a scenario).
type Args struct {
	// Label is the node and pod label holding the class (default gpu-class).
	Label string `json:"label"`
	// Order lists classes from most to least preferred; unlisted classes score 0.
	Order []string `json:"order"`
}

// Plugin implements scheduler.FilterPlugin and scheduler.ScorePlugin.
type Plugin struct{ args Args }

// New is the plugin's factory: register it with app.WithSimPlugin(gpuclass.Name, gpuclass.New).
func New(raw json.RawMessage) (scheduler.Plugin, error) {
	a := Args{Label: "gpu-class"}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
	}
	if a.Label == "" {
		return nil, errors.New("args.label: empty; name the label that holds the GPU class")
	}
	return &Plugin{args: a}, nil
}

// Name implements scheduler.Plugin.
func (*Plugin) Name() string { return Name }

var wrongClass = &scheduler.Status{Code: scheduler.UnschedulableAndUnresolvable, Reason: "node has another GPU class"}

// Filter implements scheduler.FilterPlugin.
func (pl *Plugin) Filter(_ *scheduler.State, p *sim.Pod, n *sim.Node) *scheduler.Status {
	want, ok := p.Labels[pl.args.Label]
	if !ok || n.Labels[pl.args.Label] == want {
		return nil
	}
	return wrongClass
}

// Score implements scheduler.ScorePlugin: the first class in the order scores 100, the last
// 100/len(order).
func (pl *Plugin) Score(_ *scheduler.State, _ *sim.Pod, n *sim.Node) int64 {
	i := slices.Index(pl.args.Order, n.Labels[pl.args.Label])
	if i < 0 {
		return 0
	}
	k := int64(len(pl.args.Order))
	return (k - int64(i)) * scheduler.MaxNodeScore / k
}

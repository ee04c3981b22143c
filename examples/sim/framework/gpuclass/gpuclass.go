// Package gpuclass is an example kube-scheduler framework plugin, a Filter and a Score plugin
// in one, written only against k8s.io/kube-scheduler/framework and the API types: the same
// code compiles into kube-scheduler (k8s.io/kubernetes/cmd/kube-scheduler/app.WithPlugin) and
// into jikken's simulator (cmd/jikken/app.WithFrameworkPlugin). Pods that name a GPU class in
// a label run only on nodes of that class, and every pod prefers nodes whose class comes early
// in a configured order (the newest GPUs first, say).
package gpuclass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in scheduler profiles.
const Name = "GPUClass"

// Args are the plugin's arguments (its pluginConfig entry).
type Args struct {
	// Label is the node and pod label holding the class (default gpu-class).
	Label string `json:"label"`
	// Order lists classes from most to least preferred; unlisted classes score 0.
	Order []string `json:"order"`
}

// Plugin implements fwk.FilterPlugin and fwk.ScorePlugin.
type Plugin struct{ args Args }

var (
	_ fwk.FilterPlugin = (*Plugin)(nil)
	_ fwk.ScorePlugin  = (*Plugin)(nil)
)

// New is the plugin's factory, with the signature kube-scheduler's registry expects. Its args
// arrive as JSON in a *runtime.Unknown, as kube-scheduler hands them to out-of-tree plugins.
func New(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	a := Args{Label: "gpu-class"}
	if u, ok := obj.(*runtime.Unknown); ok && len(u.Raw) > 0 {
		if err := json.Unmarshal(u.Raw, &a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
	} else if obj != nil && !ok {
		return nil, fmt.Errorf("args: want JSON, got %T", obj)
	}
	if a.Label == "" {
		return nil, errors.New("args.label: empty; name the label that holds the GPU class")
	}
	return &Plugin{args: a}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// Filter implements fwk.FilterPlugin.
func (pl *Plugin) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	want, ok := pod.Labels[pl.args.Label]
	if !ok || ni.Node().Labels[pl.args.Label] == want {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node has another GPU class")
}

// Score implements fwk.ScorePlugin: the first class in the order scores 100, the last
// 100/len(order), unlisted classes 0.
func (pl *Plugin) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	i := slices.Index(pl.args.Order, ni.Node().Labels[pl.args.Label])
	if i < 0 {
		return 0, nil
	}
	k := int64(len(pl.args.Order))
	return (k - int64(i)) * fwk.MaxScore / k, nil
}

// ScoreExtensions implements fwk.ScorePlugin: the scores are already in range.
func (*Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

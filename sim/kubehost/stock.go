package kubehost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// Names of the stock plugins, as in kube-scheduler.
const (
	PrioritySortName       = scheduler.PrioritySortName
	NodeUnschedulableName  = "NodeUnschedulable"
	NodeResourcesFitName   = scheduler.NodeResourcesFitName
	BalancedAllocationName = scheduler.BalancedAllocationName
	TaintTolerationName    = scheduler.TaintTolerationName
	NodeAffinityName       = scheduler.NodeAffinityName
	DefaultBinderName      = scheduler.DefaultBinderName
)

// StockPlugins lists the plugins every host knows.
func StockPlugins() []string {
	return []string{PrioritySortName, NodeUnschedulableName, NodeResourcesFitName, BalancedAllocationName,
		TaintTolerationName, NodeAffinityName, DefaultBinderName}
}

// StockRegistry returns the factories of the stock plugins. They are framework plugins like
// any other; NodeResourcesFit, NodeResourcesBalancedAllocation, TaintToleration and
// NodeAffinity compute with sim/scheduler's formulas (checked against kube-scheduler v1.37 by
// sim/fidelity) on the simulated pod and node behind the v1 objects, which keeps the hosted
// default profile fast. They work only inside a Host.
func StockRegistry(names *sim.Names) map[string]PluginFactory {
	return map[string]PluginFactory{
		PrioritySortName:      func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return prioritySort{}, nil },
		NodeUnschedulableName: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return nodeUnschedulable{}, nil },
		DefaultBinderName:     func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return defaultBinder{}, nil },
		NodeResourcesFitName: func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			var a struct {
				ScoringStrategy *struct {
					Type      string                  `json:"type"`
					Resources []scheduler.ResourceRef `json:"resources"`
				} `json:"scoringStrategy"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return nil, err
			}
			fit := &scheduler.NodeResourcesFit{Strategy: scheduler.LeastAllocated}
			var refs []scheduler.ResourceRef
			if ss := a.ScoringStrategy; ss != nil {
				if ss.Type != "" {
					fit.Strategy = ss.Type
				}
				refs = ss.Resources
			}
			if fit.Strategy != scheduler.LeastAllocated && fit.Strategy != scheduler.MostAllocated {
				return nil, fmt.Errorf("scoringStrategy.type %q is unknown; use %s or %s", fit.Strategy, scheduler.LeastAllocated, scheduler.MostAllocated)
			}
			var err error
			if fit.Resources, err = scheduler.ResourceWeights(names, refs, "scoring resource"); err != nil {
				return nil, err
			}
			return newNative(h, fit, true)
		},
		BalancedAllocationName: func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			var a struct {
				Resources []scheduler.ResourceRef `json:"resources"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return nil, err
			}
			rw, err := scheduler.ResourceWeights(names, a.Resources, "balanced allocation resource")
			if err != nil {
				return nil, err
			}
			return newNative(h, &scheduler.BalancedAllocation{Resources: rw}, false)
		},
		TaintTolerationName: func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return newNative(h, &scheduler.TaintToleration{}, true)
		},
		NodeAffinityName: func(_ context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			return newNative(h, scheduler.NodeAffinity{}, true)
		},
	}
}

// decodeArgs decodes a stock plugin's JSON args, refusing unknown fields.
func decodeArgs(args runtime.Object, into any) error {
	if args == nil {
		return nil
	}
	u, ok := args.(*runtime.Unknown)
	if !ok {
		return fmt.Errorf("args: want JSON (*runtime.Unknown), got %T", args)
	}
	dec := json.NewDecoder(bytes.NewReader(u.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}

// prioritySort is kube-scheduler's PrioritySort: higher priority first, then earlier
// timestamp.
type prioritySort struct{}

func (prioritySort) Name() string { return PrioritySortName }

func (prioritySort) Less(a, b fwk.QueuedEntityInfo) bool {
	pa, pb := a.GetPriority(), b.GetPriority()
	return pa > pb || (pa == pb && a.GetTimestamp().Before(b.GetTimestamp()))
}

// nodeUnschedulable is kube-scheduler's NodeUnschedulable, over the v1 objects: a node with
// spec.unschedulable takes only pods that tolerate node.kubernetes.io/unschedulable:NoSchedule.
type nodeUnschedulable struct{}

func (nodeUnschedulable) Name() string { return NodeUnschedulableName }

var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

func (nodeUnschedulable) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if !ni.Node().Spec.Unschedulable {
		return nil
	}
	logger := klog.FromContext(ctx)
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(logger, &unschedulableTaint, false) {
			return nil
		}
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) were unschedulable")
}

// defaultBinder binds: the host starts the pod in the simulated cluster once a Bind plugin
// succeeds, so there is nothing to send anywhere.
type defaultBinder struct{}

func (defaultBinder) Name() string { return DefaultBinderName }

func (defaultBinder) Bind(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status { return nil }

// native serves one of sim/scheduler's plugins as a framework plugin.
type native struct {
	h      *Host
	pl     scheduler.Plugin
	st     scheduler.State
	scores []int64
}

// nativeScore is a native plugin at PreScore and Score.
type nativeScore struct{ *native }

// nativeFilterScore is a native plugin at Filter, PreScore and Score.
type nativeFilterScore struct{ nativeScore }

func newNative(h fwk.Handle, pl scheduler.Plugin, filters bool) (fwk.Plugin, error) {
	hd, ok := h.(*handle)
	if !ok {
		return nil, fmt.Errorf("stock plugin %s runs only inside jikken's simulator", pl.Name())
	}
	n := nativeScore{&native{h: hd.h, pl: pl}}
	if filters {
		return nativeFilterScore{n}, nil
	}
	return n, nil
}

func (n *native) Name() string { return n.pl.Name() }

// state is the scratch space sim/scheduler's plugins take; the stock ones only read the
// cluster from it, so one serves every call.
func (n *native) state() *scheduler.State {
	n.st.Cluster = n.h.c
	return &n.st
}

// args returns the simulated pod and node behind the plugin's arguments.
func (n *native) args(pod *v1.Pod, ni fwk.NodeInfo) (*sim.Pod, *sim.Node, *fwk.Status) {
	p, ok := n.h.o.simPod(pod)
	own, ok2 := ni.(*nodeInfo)
	if !ok || !ok2 {
		return nil, nil, fwk.AsStatus(fmt.Errorf("stock plugin %s takes only the pods and nodes the simulator hands out", n.pl.Name()))
	}
	return p, own.simNode(), nil
}

func (n nativeFilterScore) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	p, sn, bad := n.args(pod, ni)
	if bad != nil {
		return bad
	}
	s := n.pl.(scheduler.FilterPlugin).Filter(n.state(), p, sn)
	if s.IsSuccess() {
		return nil
	}
	code := map[scheduler.Code]fwk.Code{scheduler.Unschedulable: fwk.Unschedulable,
		scheduler.UnschedulableAndUnresolvable: fwk.UnschedulableAndUnresolvable}[s.Code]
	if code == fwk.Success {
		code = fwk.Error
	}
	return fwk.NewStatus(code, s.Reason)
}

// PreScore returns Skip where sim/scheduler's plugin would give every node the same score.
func (n nativeScore) PreScore(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	sk, ok := n.pl.(scheduler.ScoreSkipper)
	if !ok {
		return nil
	}
	p, found := n.h.o.simPod(pod)
	if found && sk.SkipScore(n.state(), p) {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

func (n nativeScore) Score(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	p, sn, bad := n.args(pod, ni)
	if bad != nil {
		return 0, bad
	}
	return n.pl.(scheduler.ScorePlugin).Score(n.state(), p, sn), nil
}

func (n nativeScore) ScoreExtensions() fwk.ScoreExtensions {
	if _, ok := n.pl.(scheduler.ScoreNormalizer); ok {
		return n
	}
	return nil
}

func (n nativeScore) NormalizeScore(_ context.Context, _ fwk.CycleState, pod *v1.Pod, list fwk.NodeScoreList) *fwk.Status {
	p, _ := n.h.o.simPod(pod)
	n.scores = n.scores[:0]
	for _, s := range list {
		n.scores = append(n.scores, s.Score)
	}
	n.pl.(scheduler.ScoreNormalizer).NormalizeScore(n.state(), p, n.scores)
	for i := range list {
		list[i].Score = n.scores[i]
	}
	return nil
}

package kubehost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/jikken-dev/jikken/examples/sim/framework/gpuclass"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kubehost"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// node makes a node spec with cpu, GPUs and room for 110 pods.
func node(name, class string, cpu, gpu int64) sim.NodeSpec {
	var c sim.Resources
	c[sim.CPUIndex], c[sim.MemoryIndex], c[sim.GPUIndex], c[sim.PodsIndex] = cpu*sim.Milli, 256<<30*sim.Milli, gpu*sim.Milli, 110*sim.Milli
	return sim.NodeSpec{Name: name, Capacity: c, Labels: map[string]string{"gpu-class": class}}
}

func job(name string, submit, duration float64, gpu int64, labels map[string]string) submitter.Job {
	j := submitter.Job{Name: name, User: "alice", Submit: submit, Duration: duration, CPU: 4 * sim.Milli, GPU: gpu * sim.Milli}
	if labels != nil {
		j.Template = &sim.Pod{Labels: labels}
		j.Template.Requests[sim.CPUIndex], j.Template.Requests[sim.GPUIndex] = j.CPU, j.GPU
	}
	return j
}

type run struct {
	cluster *sim.Cluster
	host    *kubehost.Host
}

// simulate runs jobs on nodes through a host built from the profile and registry.
func simulate(t *testing.T, nodes []sim.NodeSpec, jobs []submitter.Job, p kubehost.Profile, reg map[string]kubehost.PluginFactory) (run, error) {
	t.Helper()
	names := sim.NewNames()
	h, err := kubehost.New(p, reg, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: h, Rand: sim.NewRand(1, 0),
		Submitters: []sim.Submitter{submitter.NewTrace(jobs)}})
	if err != nil {
		t.Fatal(err)
	}
	return run{e.Cluster(), h}, e.Run()
}

// placements lists "pod@node@start" for every pod, in submission order.
func (r run) placements() string {
	var b strings.Builder
	for _, p := range r.cluster.Pods() {
		fmt.Fprintf(&b, "%s@%s@%v ", p.Name, p.LastNode, p.FirstStart)
	}
	return strings.TrimSpace(b.String())
}

func gpuClassProfile() kubehost.Profile {
	return kubehost.Profile{
		Plugins: kubehost.Plugins{MultiPoint: []kubehost.PluginRef{{Name: gpuclass.Name, Weight: 5}}},
		Args:    map[string]json.RawMessage{gpuclass.Name: json.RawMessage(`{"label": "gpu-class", "order": ["h100", "a100", "v100"]}`)},
	}
}

// The example plugin, written only against k8s.io/kube-scheduler/framework, next to the
// hosted default plugins: its filter keeps the pod labelled a100 on the a100 node (it waits
// there for the first job to end), its score sends jobs to the newest GPUs first.
func TestFilterScorePluginPlacesDeterministically(t *testing.T) {
	nodes := []sim.NodeSpec{node("v100-0", "v100", 32, 8), node("v100-1", "v100", 32, 8),
		node("a100-0", "a100", 64, 8), node("h100-0", "h100", 64, 8)}
	jobs := []submitter.Job{
		job("train-1", 0, 3600, 8, nil),
		job("train-2", 1, 3600, 8, nil),
		job("eval-a100", 2, 600, 4, map[string]string{"gpu-class": "a100"}),
		job("train-3", 3, 3600, 8, nil),
	}
	reg := map[string]kubehost.PluginFactory{gpuclass.Name: gpuclass.New}
	r, err := simulate(t, nodes, jobs, gpuClassProfile(), reg)
	if err != nil {
		t.Fatal(err)
	}
	// train-3 ties on the two v100 nodes; the host's seeded generator picks v100-1.
	want := "train-1@h100-0@0s train-2@a100-0@1s eval-a100@a100-0@3601s train-3@v100-1@3s"
	if got := r.placements(); got != want {
		t.Errorf("placements\n got %s\nwant %s", got, want)
	}
	r2, err := simulate(t, nodes, jobs, gpuClassProfile(), reg)
	if err != nil {
		t.Fatal(err)
	}
	if r.placements() != r2.placements() {
		t.Errorf("two runs differ:\n%s\n%s", r.placements(), r2.placements())
	}
}

// pairPermit holds each pod labelled pair=X at Permit until the other pod of the pair reaches
// Permit too, then lets both bind, as coscheduling does for gangs.
type pairPermit struct{ h fwk.Handle }

func (*pairPermit) Name() string { return "Pair" }

func (pl *pairPermit) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	pair, ok := pod.Labels["pair"]
	if !ok {
		return nil, 0
	}
	partner := false
	pl.h.IterateOverWaitingPods(func(w fwk.WaitingPod) {
		if w.GetPod().Labels["pair"] == pair {
			partner = true
			w.Allow(pl.Name())
		}
	})
	if partner {
		return nil, 0
	}
	return fwk.NewStatus(fwk.Wait, "waiting for the other pod of the pair"), 30 * time.Second
}

func (pl *pairPermit) Reserve(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return nil
}

func (pl *pairPermit) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, node string) {
	pl.h.EventRecorder().Eventf(pod, nil, v1.EventTypeNormal, "Released", "Unreserve", "released from %s", node)
}

// A pod waiting at Permit keeps its node reserved in simulated time: the first of a pair binds
// when the second arrives 10 s later; a pod whose partner never comes is released when its 30 s
// wait ends, then tries again (and waits again) until the simulation ends.
func TestPermitWaitsInSimulatedTime(t *testing.T) {
	nodes := []sim.NodeSpec{node("n0", "a100", 64, 8), node("n1", "a100", 64, 8)}
	jobs := []submitter.Job{
		job("a", 0, 100, 4, map[string]string{"pair": "x"}),
		job("lonely", 0, 100, 4, map[string]string{"pair": "y"}),
		job("b", 10, 100, 4, map[string]string{"pair": "x"}),
	}
	pl := &pairPermit{}
	reg := map[string]kubehost.PluginFactory{"Pair": func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		pl.h = h
		return pl, nil
	}}
	p := kubehost.Profile{Plugins: kubehost.Plugins{MultiPoint: []kubehost.PluginRef{{Name: "Pair"}}}}
	r, err := simulate(t, nodes, jobs, p, reg)
	if err != nil {
		t.Fatal(err)
	}
	pods := r.cluster.Pods()
	if a, b := pods[0], pods[2]; a.FirstStart != 10*sim.Second || b.FirstStart != 10*sim.Second {
		t.Errorf("pair started at %v and %v, want both at 10s when the second arrives", a.FirstStart, b.FirstStart)
	}
	if lonely := pods[1]; lonely.FirstStart != -1 {
		t.Errorf("lonely pod started at %v, want never", lonely.FirstStart)
	}
	// Released at 30 s, 60 s and 90 s; it waits again until the pair ends at 110 s, and then
	// nothing can change any more.
	var got []string
	for _, e := range r.host.Events() {
		got = append(got, fmt.Sprintf("%v %s %s", e.Time, e.Regarding, e.Note))
	}
	want := "30s default/lonely released from n0, 60s default/lonely released from n1, 90s default/lonely released from n1"
	if strings.Join(got, ", ") != want {
		t.Errorf("events\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// apiCaller reads the node through the client, which the simulation answers, then labels it,
// which needs an API server.
type apiCaller struct{ h fwk.Handle }

func (*apiCaller) Name() string { return "APICaller" }

func (pl *apiCaller) Filter(ctx context.Context, _ fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	nodes := pl.h.ClientSet().CoreV1().Nodes()
	n, err := nodes.Get(ctx, ni.Node().Name, metav1.GetOptions{})
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("read: %w", err))
	}
	if n.Name != ni.Node().Name || n.Labels["gpu-class"] != "a100" {
		return fwk.AsStatus(fmt.Errorf("read node %s with labels %v", n.Name, n.Labels))
	}
	n.Labels["seen"] = "yes"
	if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}

func TestClientSetFailsClearly(t *testing.T) {
	reg := map[string]kubehost.PluginFactory{"APICaller": func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return &apiCaller{h}, nil
	}}
	p := kubehost.Profile{Plugins: kubehost.Plugins{Filter: []kubehost.PluginRef{{Name: "APICaller"}}}}
	_, err := simulate(t, []sim.NodeSpec{node("n0", "a100", 64, 8)}, []submitter.Job{job("a", 0, 10, 1, nil)}, p, reg)
	var pe *kubehost.PluginError
	if !errors.As(err, &pe) || pe.Plugin != "APICaller" || pe.Point != "Filter" {
		t.Fatalf("error %v, want a PluginError from APICaller at Filter", err)
	}
	if !errors.Is(err, kubehost.ErrNoAPIServer) || !strings.Contains(err.Error(), "PUT /api/v1/nodes/n0: not available in simulation") {
		t.Errorf("error %q does not say the update is not available in simulation", err)
	}
}

// evictor is a PostFilter plugin that preempts through the API, as a preemption plugin does:
// it deletes the lower-priority pods on the first node that has any.
type evictor struct{ h fwk.Handle }

func (*evictor) Name() string { return "Evictor" }

func (pl *evictor) PostFilter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, _ fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	nodes, err := pl.h.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	for _, ni := range nodes {
		evicted := false
		for _, pi := range ni.GetPods() {
			victim := pi.GetPod()
			if *victim.Spec.Priority >= *pod.Spec.Priority || victim.Status.Phase != v1.PodRunning {
				continue
			}
			if err := pl.h.ClientSet().CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
				return nil, fwk.AsStatus(err)
			}
			evicted = true
		}
		if evicted {
			return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: ni.Node().Name, NominatingMode: fwk.ModeOverride}}, nil
		}
	}
	return nil, fwk.NewStatus(fwk.Unschedulable, "no victims")
}

// Deleting a running pod through the client evicts it in the simulation, so a preemption
// plugin works: the urgent pod starts at once, and the victim is queued again and starts when
// the urgent one ends.
func TestPreemptionThroughTheClient(t *testing.T) {
	reg := map[string]kubehost.PluginFactory{"Evictor": func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return &evictor{h}, nil
	}}
	p := kubehost.Profile{Plugins: kubehost.Plugins{PostFilter: []kubehost.PluginRef{{Name: "Evictor"}}}}
	urgent := job("urgent", 5, 10, 8, nil)
	urgent.Priority = 10
	r, err := simulate(t, []sim.NodeSpec{node("n0", "a100", 64, 8)}, []submitter.Job{job("batch", 0, 100, 8, nil), urgent}, p, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.placements(), "batch@n0@0s urgent@n0@5s"; got != want {
		t.Errorf("placements %s, want %s", got, want)
	}
	if b := r.cluster.Pods()[0]; b.Preemptions != 1 || b.Start != 15*sim.Second {
		t.Errorf("batch: %d preemptions, last start %v; want 1 and 15s", b.Preemptions, b.Start)
	}
}

// recorder is a plugin at every extension point that writes down each call.
type recorder struct{ calls []string }

func (*recorder) Name() string { return "Recorder" }

func (r *recorder) add(format string, args ...any) {
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recorder) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	r.add("PreEnqueue %s", p.Name)
	return nil
}

func (r *recorder) PreFilter(_ context.Context, _ fwk.CycleState, p *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	r.add("PreFilter %s %d nodes", p.Name, len(nodes))
	return nil, nil
}

func (r *recorder) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (r *recorder) Filter(_ context.Context, _ fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	r.add("Filter %s %s", p.Name, ni.Node().Name)
	if p.Labels["fits"] == "nowhere" {
		return fwk.NewStatus(fwk.Unschedulable, "no")
	}
	return nil
}

func (r *recorder) PostFilter(_ context.Context, _ fwk.CycleState, p *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	r.add("PostFilter %s %s", p.Name, m.Get("n0").Message())
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

func (r *recorder) PreScore(_ context.Context, _ fwk.CycleState, p *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	r.add("PreScore %s %d nodes", p.Name, len(nodes))
	return nil
}

func (r *recorder) Score(_ context.Context, _ fwk.CycleState, p *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	r.add("Score %s %s", p.Name, ni.Node().Name)
	if ni.Node().Name == "n1" {
		return 100, nil
	}
	return 0, nil
}

func (r *recorder) ScoreExtensions() fwk.ScoreExtensions { return r }

func (r *recorder) NormalizeScore(_ context.Context, _ fwk.CycleState, p *v1.Pod, s fwk.NodeScoreList) *fwk.Status {
	r.add("NormalizeScore %s %v", p.Name, s)
	return nil
}

func (r *recorder) Reserve(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) *fwk.Status {
	r.add("Reserve %s %s", p.Name, node)
	return nil
}

func (r *recorder) Unreserve(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) {
	r.add("Unreserve %s %s", p.Name, node)
}

func (r *recorder) Permit(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) (*fwk.Status, time.Duration) {
	r.add("Permit %s %s", p.Name, node)
	return nil, 0
}

func (r *recorder) PreBindPreFlight(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	r.add("PreBindPreFlight %s %s", p.Name, node)
	return nil, nil
}

func (r *recorder) PreBind(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) *fwk.Status {
	r.add("PreBind %s %s", p.Name, node)
	return nil
}

func (r *recorder) Bind(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) *fwk.Status {
	r.add("Bind %s %s (skip)", p.Name, node)
	return fwk.NewStatus(fwk.Skip)
}

func (r *recorder) PostBind(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) {
	r.add("PostBind %s %s nodeName=%s", p.Name, node, p.Spec.NodeName)
}

// The host calls the extension points in kube-scheduler's order, with PostFilter when no node
// passes, and binds through the next binder when one skips.
func TestExtensionPointOrder(t *testing.T) {
	rec := &recorder{}
	reg := map[string]kubehost.PluginFactory{"Recorder": func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return rec, nil
	}}
	p := kubehost.Profile{Plugins: kubehost.Plugins{
		Filter: []kubehost.PluginRef{}, Score: []kubehost.PluginRef{},
		Bind:       []kubehost.PluginRef{{Name: "Recorder"}, {Name: kubehost.DefaultBinderName}},
		MultiPoint: []kubehost.PluginRef{{Name: "Recorder"}}}}
	nodes := []sim.NodeSpec{node("n0", "a100", 64, 8), node("n1", "a100", 64, 8)}
	jobs := []submitter.Job{job("a", 0, 10, 1, nil), job("b", 20, 10, 1, map[string]string{"fits": "nowhere"})}
	if _, err := simulate(t, nodes, jobs, p, reg); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"PreEnqueue a",
		"PreFilter a 2 nodes",
		"Filter a n0", "Filter a n1",
		"PreScore a 2 nodes",
		"Score a n0", "Score a n1",
		"NormalizeScore a [{n0 0} {n1 100}]",
		"Reserve a n1",
		"Permit a n1",
		"PreBindPreFlight a n1",
		"PreBind a n1",
		"Bind a n1 (skip)",
		"PostBind a n1 nodeName=",
		"PreEnqueue b",
		"PreFilter b 2 nodes",
		"Filter b n0", "Filter b n1",
		"PostFilter b no",
	}
	if got := strings.Join(rec.calls, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// NodeUnschedulable over the v1 objects: the cordoned node (the only one with GPUs) shows
// spec.unschedulable and takes only the pod that tolerates node.kubernetes.io/unschedulable.
func TestCordonedNodeHosted(t *testing.T) {
	names := sim.NewNames()
	h, err := kubehost.New(kubehost.Profile{}, nil, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	tolerant := job("tolerant", 1, 10, 1, map[string]string{})
	tolerant.Template.Tolerations = []sim.Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Exists"}}
	e, err := sim.New(sim.Config{Names: names, Scheduler: h, Rand: sim.NewRand(1, 0),
		Nodes:      []sim.NodeSpec{node("gpu", "a100", 64, 8), node("cpu", "none", 64, 0)},
		Events:     []sim.ClusterEvent{{At: 0, Kind: sim.NodeCordon, Node: "gpu"}},
		Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{tolerant, job("plain", 1, 10, 1, map[string]string{})})}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if got := (run{cluster: e.Cluster()}).placements(); got != "tolerant@gpu@1s plain@@-0.000001s" {
		t.Errorf("placements %s, want the tolerant pod on the cordoned node and the other never started", got)
	}
}

// failingReserve rejects the first reservation it sees.
type failingReserve struct {
	failed bool
	calls  []string
}

func (*failingReserve) Name() string { return "FailingReserve" }

func (r *failingReserve) Reserve(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) *fwk.Status {
	if !r.failed {
		r.failed = true
		r.calls = append(r.calls, "reject "+p.Name+"@"+node)
		return fwk.NewStatus(fwk.Unschedulable, "first reservation refused")
	}
	r.calls = append(r.calls, "reserve "+p.Name+"@"+node)
	return nil
}

func (r *failingReserve) Unreserve(_ context.Context, _ fwk.CycleState, p *v1.Pod, node string) {
	r.calls = append(r.calls, "unreserve "+p.Name+"@"+node)
}

// A Reserve plugin that refuses undoes the reservation: Unreserve runs, the node's resources
// are free again, and the pod is placed at the next pass.
func TestReserveFailureUnreserves(t *testing.T) {
	pl := &failingReserve{}
	reg := map[string]kubehost.PluginFactory{"FailingReserve": func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return pl, nil
	}}
	p := kubehost.Profile{Plugins: kubehost.Plugins{Reserve: []kubehost.PluginRef{{Name: "FailingReserve"}}}}
	jobs := []submitter.Job{job("a", 0, 10, 8, nil), job("b", 5, 10, 8, nil)}
	r, err := simulate(t, []sim.NodeSpec{node("n0", "a100", 64, 8)}, jobs, p, reg)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(pl.calls, ", "), "reject a@n0, unreserve a@n0, reserve a@n0, reserve b@n0"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	// a is refused at 0 s and placed at the next pass, when b arrives at 5 s; b waits for it.
	if got, want := r.placements(), "a@n0@5s b@n0@15s"; got != want {
		t.Errorf("placements %s, want %s", got, want)
	}
}

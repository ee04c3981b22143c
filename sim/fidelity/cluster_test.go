package fidelity_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// nodes is a heterogeneous GPU cluster: GPU nodes of two sizes, CPU-only nodes, a
// memory-heavy node, and nodes with a soft taint and zone labels for the scoring plugins.
func nodes() []k8stest.Node {
	soft := []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule}}
	var ns []k8stest.Node
	add := func(name, cpu, mem string, gpu int, zone string, taints []corev1.Taint) {
		ns = append(ns, k8stest.Node{Name: name, CPU: cpu, Memory: mem, GPU: gpu, Taints: taints,
			Labels: map[string]string{"topology.kubernetes.io/zone": zone}})
	}
	for i := range 3 {
		add(fmt.Sprintf("gpu8-%d", i), "96", "768Gi", 8, "a", nil)
	}
	for i := range 3 {
		add(fmt.Sprintf("gpu4-%d", i), "32", "256Gi", 4, "b", nil)
	}
	add("gpu4-spot", "32", "128Gi", 4, "b", soft)
	for i := range 3 {
		add(fmt.Sprintf("cpu-%d", i), "64", "128Gi", 0, "a", nil)
	}
	add("cpu-small", "8", "16Gi", 0, "b", nil)
	add("mem-0", "16", "512Gi", 0, "b", nil)
	add("cpu-spot", "48", "96Gi", 0, "a", soft)
	return ns
}

// pods returns n pods drawn from a seeded mix: GPU jobs, CPU jobs, pods without requests,
// pods whose second container sets no request, preferred zones and spot tolerations.
func pods(seed uint64, n int) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []*corev1.Pod
	for i := range n {
		main := corev1.Container{Name: "main", Image: "trainer"}
		req := corev1.ResourceList{}
		switch k := rng.IntN(20); {
		case k < 6: // GPU job
			g := []int{1, 1, 2, 4}[rng.IntN(4)]
			req["nvidia.com/gpu"] = *resource.NewQuantity(int64(g), resource.DecimalSI)
			req[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(g)*int64(2000+rng.IntN(6000)), resource.DecimalSI)
			req[corev1.ResourceMemory] = *resource.NewQuantity(int64(g)*int64(8+rng.IntN(40))<<30, resource.BinarySI)
		case k < 14: // CPU job
			req[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(250+rng.IntN(8000)), resource.DecimalSI)
			req[corev1.ResourceMemory] = *resource.NewQuantity(int64(256+rng.IntN(16000))<<20, resource.BinarySI)
		case k < 16: // CPU only, no memory request
			req[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(100+rng.IntN(4000)), resource.DecimalSI)
		case k < 17: // memory only
			req[corev1.ResourceMemory] = *resource.NewQuantity(int64(1+rng.IntN(24))<<30, resource.BinarySI)
		default: // best effort
		}
		if len(req) > 0 {
			main.Resources.Requests = req
		}
		if g, ok := req["nvidia.com/gpu"]; ok {
			// Extended resources cannot be overcommitted: the API server wants the limit too.
			main.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": g}
		}
		spec := corev1.PodSpec{Containers: []corev1.Container{main}, TerminationGracePeriodSeconds: new(int64)}
		if rng.IntN(8) == 0 {
			spec.Containers = append(spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy"})
		}
		if rng.IntN(6) == 0 {
			zone := []string{"a", "b"}[rng.IntN(2)]
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: int32(1 + rng.IntN(100)),
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}},
				}}}}
		}
		if rng.IntN(4) == 0 {
			spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		}
		out = append(out, &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%03d", i), Namespace: "default",
				// Pods never end (k8stest's KWOK stages), so every decision sees all earlier pods.
				Labels:      map[string]string{"jikken-test/outcome": "hang"},
				Annotations: map[string]string{kube.DurationAnnotation: "24h"}},
			Spec: spec,
		})
	}
	return out
}

// decision is one pod's placement by the real scheduler ("" when unschedulable).
type decision struct {
	pod  *corev1.Pod
	node string
	// before are the pods on the cluster when the pod was created, where they ran.
	before []decision
}

// TestClusterKubeDefaultFidelity creates the pods one at a time on a real control plane,
// records where kube-scheduler binds each, and for every decision asks the simulator's
// kube-default profile to score the same pod on the same state (the earlier pods where the
// real scheduler put them). The decision agrees when the real node is among the simulator's
// top-scored nodes: kube-scheduler breaks equal scores at random, so a tie is agreement.
// JIKKEN_FIDELITY_PODS sets the number of pods (default 300).
func TestClusterKubeDefaultFidelity(t *testing.T) {
	fidelity(t, 300, pods, nil, "", scheduler.KubeDefault())
}

// TestClusterMostAllocatedGPUFidelity repeats the comparison with a bin-packing profile that
// weighs GPUs: NodeResourcesFit's MostAllocated over cpu, memory and nvidia.com/gpu (3).
func TestClusterMostAllocatedGPUFidelity(t *testing.T) {
	p := scheduler.KubeDefault()
	p.ScoringStrategy = scheduler.MostAllocated
	p.ScoringResources = []scheduler.ResourceRef{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 3}}
	fidelity(t, 200, pods, nil, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
        - {name: nvidia.com/gpu, weight: 3}
`, p)
}

// fidelity runs n pods made by gen (JIKKEN_FIDELITY_PODS overrides n) through kube-scheduler
// configured by config (empty: its defaults) and through the simulator's profile. The
// services are created first; both schedulers see them (default topology spread).
func fidelity(t *testing.T, n int, gen func(seed uint64, n int) []*corev1.Pod, services []*corev1.Service, config string, profile scheduler.Profile) {
	if s := os.Getenv("JIKKEN_FIDELITY_PODS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("JIKKEN_FIDELITY_PODS=%q: want a positive number", s)
		}
		n = v
	}
	// The scheduler logs every feasible node's total score, so whole score vectors are compared,
	// not only the winners.
	c := k8stest.Start(t, k8stest.Options{SchedulerArgs: []string{"--vmodule=schedule_one=10"}, SchedulerConfig: config})
	c.AddNodes(t, nodes()...)
	ctx := context.Background()
	nodeObjs := settledNodes(t, c)
	for _, svc := range services {
		if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create service %s: %v", svc.Name, err)
		}
	}
	// Pods leave as well as arrive (a seeded share of bindings and every rejection is followed
	// by a departure), so decisions are taken at every fill level, not on a full cluster.
	churn := rand.New(rand.NewPCG(1, 8))
	var decisions, live []decision
	for _, p := range gen(1, n) {
		created, err := c.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		node := waitScheduled(t, c, p.Name)
		d := decision{pod: created, node: node, before: slices.Clone(live)}
		decisions = append(decisions, d)
		if node == "" {
			// Left pending, it would be retried later on another state: take it out.
			deletePod(t, c, p.Name)
		} else {
			live = append(live, d)
		}
		if len(live) > 0 && (node == "" || churn.IntN(100) < 45) {
			i := churn.IntN(len(live))
			deletePod(t, c, live[i].pod.Name)
			live = slices.Delete(live, i, i+1)
		}
	}

	// Every bound pod must still hold its node, or later decisions saw another state.
	list, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			t.Fatalf("pod %s is %s on %s: pods must keep running for the comparison (%+v)", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.ContainerStatuses)
		}
	}

	realScores := loggedScores(t, filepath.Join(c.Dir, "scheduler.log"))
	var same, tie, differ, unschedulable, scored, equalScores int
	for i, d := range decisions {
		top, scores, simScores := simTop(t, profile, nodeObjs.Items, d.before, d.pod, services)
		if real := realScores[d.pod.Name]; len(real) > 0 {
			// kube-scheduler skips scoring when one node is feasible; it logged the others.
			scored++
			if maps.Equal(real, simScores) {
				equalScores++
			} else {
				t.Errorf("decision %d (%s): kube-scheduler's totals %v, the simulator's %v", i, d.pod.Name, real, simScores)
			}
		}
		switch {
		case d.node == "" && len(top) == 0:
			same++
			unschedulable++
		case contains(top, d.node) && len(top) == 1:
			same++
		case contains(top, d.node):
			tie++
		default:
			differ++
			t.Errorf("decision %d (%s): kube-scheduler chose %q, the simulator's best are %v; simulator scores %s",
				i, describe(d.pod), d.node, top, scores)
		}
	}
	total := len(decisions)
	t.Logf("%s vs kube-scheduler on %d decisions: %d identical (%d of them unschedulable in both), %d ties including the real choice, %d different (agreement %.1f%%); every node's total score equal in %d of %d scored decisions",
		profile.ScoringStrategy+" kube-default", total, same, unschedulable, tie, differ, 100*float64(same+tie)/float64(total), equalScores, scored)
}

// deletePod deletes a pod at once and waits until it is gone: the scheduler sees the deletion
// before the next pod's creation, since both come through its one watch on pods.
func deletePod(t *testing.T, c *k8stest.Cluster, name string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not gone 2 minutes after its deletion (logs in %s)", name, c.Dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settledNodes waits until the node lifecycle controller has lifted the not-ready taints it
// puts on new nodes, so both schedulers see the same taints, and returns the nodes.
func settledNodes(t *testing.T, c *k8stest.Cluster) *corev1.NodeList {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list, err := c.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		settled := true
		for _, n := range list.Items {
			for _, taint := range n.Spec.Taints {
				if strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
					settled = false
				}
			}
		}
		if settled {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes still carry node.kubernetes.io taints after 2 minutes (logs in %s)", c.Dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func describe(p *corev1.Pod) string {
	b, _ := json.Marshal(struct {
		Labels     map[string]string                 `json:"labels,omitempty"`
		Containers []corev1.Container                `json:"containers"`
		Affinity   *corev1.Affinity                  `json:"affinity,omitempty"`
		Spread     []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	}{p.Labels, p.Spec.Containers, p.Spec.Affinity, p.Spec.TopologySpreadConstraints})
	return string(b)
}

// waitScheduled returns the node the pod is bound to, or "" once the scheduler reports it
// unschedulable.
func waitScheduled(t *testing.T, c *k8stest.Cluster, name string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		p, err := c.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			return p.Spec.NodeName
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return ""
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("pod %s neither bound nor unschedulable after 2 minutes (control-plane logs in %s)", name, c.Dir)
	return ""
}

var errDone = errors.New("scored")

// replay binds the earlier pods where kube-scheduler put them, then scores the new one.
type replay struct {
	fw     *scheduler.Framework
	bound  map[string]string
	target string
	scores []scheduler.NodeScore
}

func (r *replay) Schedule(c *sim.Cluster) error {
	var target *sim.Pod
	for _, p := range c.Pending() {
		if p.Name == r.target {
			target = p
			continue
		}
		if err := c.Bind(p, c.Node(r.bound[p.Name])); err != nil {
			return fmt.Errorf("replay %s on %s: %w", p.Name, r.bound[p.Name], err)
		}
	}
	var err error
	if r.scores, err = r.fw.Scores(c, target); err != nil {
		return err
	}
	return errDone
}

type submitAll []*sim.Pod

func (s *submitAll) Step(sim.Time, sim.Status) ([]*sim.Pod, sim.Time, error) {
	p := *s
	*s = nil
	return p, sim.Never, nil
}

// simTop builds the simulator's cluster from the real nodes and the pods bound so far, and
// returns the nodes with the highest kube-default score for p, and all scores for the log.
func simTop(t *testing.T, profile scheduler.Profile, nodes []corev1.Node, bound []decision, p *corev1.Pod, services []*corev1.Service) ([]string, string, map[string]int64) {
	t.Helper()
	names := sim.NewNames()
	specs := simNodes(t, names, nodes)
	r := &replay{bound: map[string]string{}, target: p.Name}
	var list submitAll
	for _, d := range append(bound, decision{pod: p}) {
		list = append(list, toSim(t, names, d.pod, services...))
		r.bound[d.pod.Name] = d.node
	}
	fw, err := scheduler.New(profile, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	r.fw = fw
	e, err := sim.New(sim.Config{Names: names, Nodes: specs, Scheduler: r, Submitters: []sim.Submitter{&list}, Rand: sim.NewRand(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); !errors.Is(err, errDone) {
		t.Fatalf("simulating %s: %v", p.Name, err)
	}
	var top []string
	var best int64 = -1
	var all []string
	totals := map[string]int64{}
	for _, s := range r.scores {
		totals[s.Node.Name] = s.Score
		all = append(all, fmt.Sprintf("%s=%d", s.Node.Name, s.Score))
		switch {
		case s.Score > best:
			best, top = s.Score, []string{s.Node.Name}
		case s.Score == best:
			top = append(top, s.Node.Name)
		}
	}
	return top, strings.Join(all, " "), totals
}

// simNodes gives the simulator the real nodes: allocatable, labels and taints.
func simNodes(t *testing.T, names *sim.Names, nodes []corev1.Node) []sim.NodeSpec {
	t.Helper()
	var specs []sim.NodeSpec
	for _, n := range nodes {
		q := map[string]string{}
		for k, v := range n.Status.Allocatable {
			q[string(k)] = v.String()
		}
		capacity, err := names.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		spec := sim.NodeSpec{Name: n.Name, Labels: n.Labels, Capacity: capacity}
		for _, taint := range n.Spec.Taints {
			spec.Taints = append(spec.Taints, sim.Taint{Key: taint.Key, Value: taint.Value, Effect: sim.TaintEffect(taint.Effect)})
		}
		specs = append(specs, spec)
	}
	return specs
}

// finalScore matches kube-scheduler's log line for a node's weighted total (klog text format).
var finalScore = regexp.MustCompile(`"Calculated node's final score for pod" pod="default/([^"]+)" node="([^"]+)" score=(\d+)`)

// loggedScores reads the totals kube-scheduler logged, by pod and node.
func loggedScores(t *testing.T, path string) map[string]map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := finalScore.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[3], 10, 64)
		if out[m[1]] == nil {
			out[m[1]] = map[string]int64{}
		}
		out[m[1]][m[2]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no score lines: was kube-scheduler started with --vmodule=schedule_one=10?", path)
	}
	return out
}

// toSim converts the pod the API server stored through the simulator's manifest reader, the
// path `jikken sim` takes for Pod manifests, with the services in the same file.
func toSim(t *testing.T, names *sim.Names, p *corev1.Pod, services ...*corev1.Service) *sim.Pod {
	t.Helper()
	var docs [][]byte
	for _, svc := range services {
		b, err := json.Marshal(svc)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := kube.Read(bytes.Join(append(docs, b), []byte("\n---\n")))
	if err != nil {
		t.Fatalf("read %s: %v", p.Name, err)
	}
	sp, err := m.Pods[0].ToSim(names)
	if err != nil {
		t.Fatalf("convert %s: %v", p.Name, err)
	}
	if sp.DefaultSpread, err = m.SpreadSelector(&m.Pods[0]); err != nil {
		t.Fatalf("convert %s: %v", p.Name, err)
	}
	return sp
}

package fidelity_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// occupant is a low-priority pod pinned to a node before the preemptor arrives.
type occupant struct {
	node     string
	gpus     int64
	priority string
	// pause waits this long after the pod starts, so start times differ by more than the API's
	// one-second resolution.
	pause time.Duration
}

// preemptionCase is a full cluster and a 4-GPU pod of priority "high" that fits nowhere.
// occupant and preemptor, if set, change the pods: the preemptor may then be kept out by
// ports or affinity instead of resources.
type preemptionCase struct {
	name      string
	occupants []occupant
	occupant  func(i int, p *corev1.Pod)
	preemptor func(p *corev1.Pod)
}

// Worked cases of kube-scheduler's choice of the node to preempt on, each on three 4-GPU nodes.
var preemptionCases = []preemptionCase{
	// n1 holds two pods of priority -5, n2 one: upstream sums priorities offset by 2^31, so
	// evicting one pod wins (a plain sum, -10 < -5, would pick n1).
	{"fewer negative victims", []occupant{{"n1", 2, "minus5", 0}, {"n1", 2, "minus5", 0}, {"n2", 4, "minus5", 0}, {"n3", 4, "ten", 0}}, nil, nil},
	// Lowest highest-victim priority first.
	{"lowest priority", []occupant{{"n1", 4, "ten", 0}, {"n2", 4, "zero", 0}, {"n3", 4, "ten", 0}}, nil, nil},
	// Equal priorities and counts: the victim that started latest loses the least work.
	{"latest start", []occupant{{"n1", 4, "zero", 1500 * time.Millisecond}, {"n3", 4, "zero", 1500 * time.Millisecond}, {"n2", 4, "zero", 0}}, nil, nil},
	// A 2-GPU preemptor fits on n1 and n2 but for its anti-affinity to their pods: evicting
	// n1's pod of priority 0 beats n3's full node of priority 10.
	{"anti-affinity", []occupant{{"n1", 2, "zero", 0}, {"n2", 2, "ten", 0}, {"n3", 4, "ten", 0}},
		func(i int, p *corev1.Pod) {
			if i < 2 {
				p.Labels["app"] = "a"
			}
		},
		func(p *corev1.Pod) {
			twoGPUs(p)
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{LabelSelector: selector("app", "a"), TopologyKey: corev1.LabelHostname}}}}
		}},
	// The same with host port 80 taken on n1 and n2.
	{"host port", []occupant{{"n1", 2, "zero", 0}, {"n2", 2, "ten", 0}, {"n3", 4, "ten", 0}},
		func(i int, p *corev1.Pod) {
			if i < 2 {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
			}
		},
		func(p *corev1.Pod) {
			twoGPUs(p)
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}},
}

func twoGPUs(p *corev1.Pod) {
	g := *resource.NewQuantity(2, resource.DecimalSI)
	p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = g
	p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"] = g
}

var priorities = map[string]int32{"minus5": -5, "zero": 0, "ten": 10, "high": 1000}

// TestClusterPreemptionFidelity runs each case on the real control plane and in the
// simulator, from the same state (the occupants started in the same order and, to the second,
// at the same offsets), and compares the preemptor's node and its victims.
func TestClusterPreemptionFidelity(t *testing.T) {
	c := k8stest.Start(t, k8stest.Options{})
	c.AddNodes(t, k8stest.Node{Name: "n1", GPU: 4}, k8stest.Node{Name: "n2", GPU: 4}, k8stest.Node{Name: "n3", GPU: 4})
	nodeObjs := settledNodes(t, c)
	ctx := context.Background()
	for name, v := range priorities {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for ci, pc := range preemptionCases {
		t.Run(pc.name, func(t *testing.T) {
			ns := fmt.Sprintf("case%d", ci)
			if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var occupants []*corev1.Pod
			for i, o := range pc.occupants {
				p := gpuPod(ns, fmt.Sprintf("o%d", i), o.gpus, o.priority)
				p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": o.node}
				if pc.occupant != nil {
					pc.occupant(i, p)
				}
				if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				occupants = append(occupants, waitRunning(t, c, ns, p.Name))
				time.Sleep(o.pause)
			}
			pre := gpuPod(ns, "preemptor", 4, "high")
			if pc.preemptor != nil {
				pc.preemptor(pre)
			}
			if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pre, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			realNode := waitBound(t, c, ns, pre.Name)
			var realVictims []string
			for _, o := range occupants {
				if _, err := c.Client.CoreV1().Pods(ns).Get(ctx, o.Name, metav1.GetOptions{}); err != nil {
					realVictims = append(realVictims, o.Name)
				}
			}
			simNode, simVictims := simPreempt(t, nodeObjs.Items, occupants, pre)
			t.Logf("kube-scheduler: %s evicting %v; simulator: %s evicting %v", realNode, realVictims, simNode, simVictims)
			if realNode != simNode || !slices.Equal(realVictims, simVictims) {
				t.Errorf("kube-scheduler preempted on %s (victims %v), the simulator on %s (victims %v)", realNode, realVictims, simNode, simVictims)
			}
			for _, o := range occupants {
				_ = c.Client.CoreV1().Pods(ns).Delete(ctx, o.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			}
			_ = c.Client.CoreV1().Pods(ns).Delete(ctx, pre.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			waitEmpty(t, c, ns)
		})
	}
}

func gpuPod(ns, name string, gpus int64, priority string) *corev1.Pod {
	g := *resource.NewQuantity(gpus, resource.DecimalSI)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{"jikken-test/outcome": "hang"},
			Annotations: map[string]string{kube.DurationAnnotation: "24h"}},
		Spec: corev1.PodSpec{
			PriorityClassName:             priority,
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{Name: "main", Image: "trainer", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": g},
				Limits:   corev1.ResourceList{"nvidia.com/gpu": g},
			}}},
		},
	}
}

func waitRunning(t *testing.T, c *k8stest.Cluster, ns, name string) *corev1.Pod {
	t.Helper()
	return waitPod(t, c, ns, name, "running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && p.Status.StartTime != nil
	})
}

func waitBound(t *testing.T, c *k8stest.Cluster, ns, name string) string {
	t.Helper()
	return waitPod(t, c, ns, name, "bound", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" }).Spec.NodeName
}

// waitPod polls the pod until cond holds, for at most 2 minutes.
func waitPod(t *testing.T, c *k8stest.Cluster, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		p, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cond(p) {
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s not %s after 2 minutes (logs in %s)", ns, name, what, c.Dir)
	return nil
}

func waitEmpty(t *testing.T, c *k8stest.Cluster, ns string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		list, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("pods of %s not gone after 2 minutes", ns)
}

// timedSubmit submits each pod at its own time.
type timedSubmit struct {
	at   []sim.Time
	pods []*sim.Pod
}

func (s *timedSubmit) Step(now sim.Time, _ sim.Status) ([]*sim.Pod, sim.Time, error) {
	var out []*sim.Pod
	for len(s.pods) > 0 && s.at[0] <= now {
		out = append(out, s.pods[0])
		s.at, s.pods = s.at[1:], s.pods[1:]
	}
	if len(s.pods) == 0 {
		return out, sim.Never, nil
	}
	return out, s.at[0], nil
}

// preemptReplay binds occupants where the real scheduler put them when they arrive, then lets
// the kube-default framework schedule the preemptor.
type preemptReplay struct {
	fw     *scheduler.Framework
	bound  map[string]string
	target string
}

func (r *preemptReplay) Schedule(c *sim.Cluster) error {
	for _, p := range c.Pending() {
		if p.Name == r.target {
			if err := r.fw.Schedule(c); err != nil {
				return err
			}
			return errDone
		}
		if err := c.Bind(p, c.Node(r.bound[p.Name])); err != nil {
			return err
		}
	}
	return nil
}

// simPreempt starts the occupants at their real start times (seconds after the first) on their
// real nodes, submits the preemptor a second after the last, and returns where kube-default
// puts it and whom it evicts.
func simPreempt(t *testing.T, nodes []corev1.Node, occupants []*corev1.Pod, pre *corev1.Pod) (string, []string) {
	t.Helper()
	names := sim.NewNames()
	specs := simNodes(t, names, nodes)
	r := &preemptReplay{bound: map[string]string{}, target: pre.Name}
	sub := &timedSubmit{}
	t0 := occupants[0].Status.StartTime.Time
	var last sim.Time
	for _, o := range occupants {
		at := sim.Seconds(o.Status.StartTime.Sub(t0).Seconds())
		sub.at = append(sub.at, at)
		sub.pods = append(sub.pods, toSim(t, names, withPriority(o)))
		r.bound[o.Name] = o.Spec.NodeName
		last = at
	}
	sub.at = append(sub.at, last+sim.Second)
	sub.pods = append(sub.pods, toSim(t, names, withPriority(pre)))
	fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	r.fw = fw
	e, err := sim.New(sim.Config{Names: names, Nodes: specs, Scheduler: r, Submitters: []sim.Submitter{sub}, Rand: sim.NewRand(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		err := e.Step()
		if errors.Is(err, errDone) {
			break
		}
		if err != nil || e.Done() {
			t.Fatalf("simulating the preemption: %v", err)
		}
	}
	var node string
	var victims []string
	for _, p := range e.Cluster().Pods() {
		if p.Name == pre.Name && p.Node != nil {
			node = p.Node.Name
		}
		if p.Preemptions > 0 {
			victims = append(victims, p.Name)
		}
	}
	return node, victims
}

// withPriority fills spec.priority from the pod's class, as the API server's admission does
// for the pods it stores (the preemptor here is the object sent, not the one stored).
func withPriority(p *corev1.Pod) *corev1.Pod {
	if p.Spec.Priority == nil {
		p = p.DeepCopy()
		v := priorities[p.Spec.PriorityClassName]
		p.Spec.Priority = &v
	}
	return p
}

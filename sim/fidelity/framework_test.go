package fidelity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/examples/sim/framework/gpuclass"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/kubehost"
)

// gpuClasses are the example plugin's classes, most preferred first; the cluster has one node
// of each, so GPUClass's scores never tie and each placement has one right answer.
var gpuClasses = []string{"h100", "a100", "v100", "t4"}

// TestClusterFrameworkPluginPlacements runs one plugin's source in two schedulers: GPUClass
// (examples/sim/framework/gpuclass, written only against k8s.io/kube-scheduler/framework)
// compiled into a real kube-scheduler with app.WithPlugin (kube-scheduler-gpuclass, built by
// scripts/ci/k8s.sh) and into the simulator's framework host. Pods are created one at a time on
// the real control plane and the same pods go through the simulator: every pod must land on
// the same node, or be unschedulable in both.
func TestClusterFrameworkPluginPlacements(t *testing.T) {
	args := fmt.Sprintf(`{"label": "gpu-class", "order": ["%s", "%s", "%s", "%s"]}`, gpuClasses[0], gpuClasses[1], gpuClasses[2], gpuClasses[3])
	// GPUClass filters and is the only scorer, so ties (broken at random upstream) cannot occur.
	config := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: GPUClass}]
    score:
      disabled: [{name: "*"}]
      enabled: [{name: GPUClass, weight: 1}]
  pluginConfig:
  - name: GPUClass
    args: ` + args + "\n"
	c := k8stest.Start(t, k8stest.Options{Scheduler: "kube-scheduler-gpuclass", SchedulerConfig: config})
	var nodeSpecs []k8stest.Node
	for _, class := range gpuClasses {
		nodeSpecs = append(nodeSpecs, k8stest.Node{Name: "gpu-" + class, CPU: "64", Memory: "512Gi", GPU: 8,
			Labels: map[string]string{"gpu-class": class}})
	}
	c.AddNodes(t, nodeSpecs...)
	nodeObjs := settledNodes(t, c)

	ctx := context.Background()
	var created []*corev1.Pod
	realNode := map[string]string{}
	for _, p := range classPods(36) {
		cp, err := c.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		node := waitScheduled(t, c, p.Name)
		if node == "" {
			// Left pending, it would be retried on a later state: take it out, as the simulator
			// leaves it pending for good (nothing ever leaves this cluster).
			deletePod(t, c, p.Name)
		}
		created = append(created, cp)
		realNode[p.Name] = node
	}

	simNode := simulatePlacements(t, nodeObjs.Items, created, args)
	same, placed := 0, 0
	for _, p := range created {
		if realNode[p.Name] != "" {
			placed++
		}
		if simNode[p.Name] == realNode[p.Name] {
			same++
			continue
		}
		t.Errorf("%s (%s): kube-scheduler with GPUClass chose %q, the simulator %q", p.Name, describe(p), realNode[p.Name], simNode[p.Name])
	}
	if placed == 0 || placed == len(created) {
		t.Errorf("%d of %d pods placed: the workload should fill the cluster past its capacity", placed, len(created))
	}
	t.Logf("GPUClass in kube-scheduler and in the simulator: %d of %d placements identical (%d placed, %d unschedulable)", same, len(created), placed, len(created)-placed)
}

// classPods draws n GPU pods: a third ask for a class, the rest take the preferred one that fits.
func classPods(n int) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(3, 9))
	var out []*corev1.Pod
	for i := range n {
		g := []int64{1, 1, 2, 4}[rng.IntN(4)]
		req := corev1.ResourceList{
			"nvidia.com/gpu":      *resource.NewQuantity(g, resource.DecimalSI),
			corev1.ResourceCPU:    *resource.NewMilliQuantity(g*int64(1000+rng.IntN(3000)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(g*int64(4+rng.IntN(20))<<30, resource.BinarySI),
		}
		// Pods never end (k8stest's KWOK stages), so every decision sees all earlier pods.
		labels := map[string]string{"jikken-test/outcome": "hang"}
		if rng.IntN(3) == 0 {
			labels["gpu-class"] = gpuClasses[rng.IntN(len(gpuClasses))]
		}
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("class-%02d", i), Namespace: "default", Labels: labels,
				Annotations: map[string]string{kube.DurationAnnotation: "24h"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "trainer", Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{"nvidia.com/gpu": req["nvidia.com/gpu"]}}}},
			},
		})
	}
	return out
}

// simulatePlacements runs the pods, in creation order and none ending within the simulated minute, through the
// simulator's framework host with GPUClass as kube-scheduler-gpuclass was configured, and
// returns each pod's node ("" when it stayed pending).
func simulatePlacements(t *testing.T, nodes []corev1.Node, pods []*corev1.Pod, args string) map[string]string {
	t.Helper()
	names := sim.NewNames()
	specs := simNodes(t, names, nodes)
	var list submitAll
	for _, p := range pods {
		list = append(list, toSim(t, names, p))
	}
	plugins := kubehost.Defaults()
	plugins.Filter = append(plugins.Filter, kubehost.PluginRef{Name: gpuclass.Name})
	plugins.PreScore = []kubehost.PluginRef{}
	plugins.Score = []kubehost.PluginRef{{Name: gpuclass.Name, Weight: 1}}
	host, err := kubehost.New(kubehost.Profile{Plugins: plugins, Args: map[string]json.RawMessage{gpuclass.Name: json.RawMessage(args)}},
		map[string]kubehost.PluginFactory{gpuclass.Name: gpuclass.New}, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Names: names, Nodes: specs, Scheduler: host, Submitters: []sim.Submitter{&list}, Rand: sim.NewRand(1, 0), StopAt: 60 * sim.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range e.Cluster().Nodes() {
		for _, p := range n.Pods() {
			out[p.Name] = n.Name
		}
	}
	return out
}

package kube

import (
	"testing"

	"github.com/jikken-dev/jikken/sim"
)

const manifests = `apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
  labels: {scheduling.x-k8s.io/pod-group: g1}
  annotations:
    sim.jikken.dev/duration: 1h
    sim.jikken.dev/submit: "30"
    sim.jikken.dev/pod-group-size: "4"
    sim.jikken.dev/pod-group-min-member: "2"
    sim.jikken.dev/pod-group-timeout: 2m
spec:
  priority: 5
  containers:
    - name: main
      image: trainer
      command: [python, train.py]
      resources:
        requests: {cpu: "2", memory: 8Gi}
        limits: {nvidia.com/gpu: "2"}
    - name: sidecar
      resources: {requests: {cpu: 500m}}
  initContainers:
    - name: fetch
      resources: {requests: {cpu: "4"}}
  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
---
# k8s-cluster-simulator's phases
apiVersion: v1
kind: Pod
metadata:
  name: nginx-sim
  annotations:
    simSpec: |
      - seconds: 5
        resourceUsage: {cpu: 1, memory: 2Gi, nvidia.com/gpu: 0}
      - seconds: 10
        resourceUsage: {cpu: 2, memory: 4Gi, nvidia.com/gpu: 1}
spec:
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
`

func TestReadPods(t *testing.T) {
	pods, err := ReadPods([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d pods", len(pods))
	}
	names := sim.NewNames()
	p, err := pods[0].ToSim(names)
	if err != nil {
		t.Fatal(err)
	}
	// Containers sum to 2.5 CPUs, but the init container needs 4; limits stand in for
	// missing GPU requests.
	if p.Requests[sim.CPUIndex] != 4000 || p.Requests[sim.GPUIndex] != 2000 || p.Requests[sim.MemoryIndex] != 8<<30*1000 {
		t.Errorf("requests %v", names.Format(&p.Requests))
	}
	if p.Duration != 3600*sim.Second || p.Priority != 5 || p.User != "ml" || p.Gang != "g1" || p.GangSize != 4 || p.GangMin != 2 || p.GangTimeout != 120*sim.Second {
		t.Errorf("pod %+v", p)
	}
	if at, _ := pods[0].Submit(); at != 30 {
		t.Errorf("submit %v", at)
	}
	if len(p.Tolerations) != 1 || p.Affinity == nil || len(p.Affinity.Required) != 1 {
		t.Errorf("constraints lost: %+v", p)
	}
	q, err := pods[1].ToSim(names)
	if err != nil {
		t.Fatal(err)
	}
	if q.Duration != 15*sim.Second {
		t.Errorf("simSpec duration %v, want 15s", q.Duration)
	}
	// Scoring counts 200Mi for each container without a memory request (the sidecar here;
	// the init container's 200Mi is below the containers' sum).
	if want := [2]int64{4000, (8<<30 + 200<<20) * 1000}; p.NonZero != want {
		t.Errorf("non-zero requests %v, want %v", p.NonZero, want)
	}
	if want := [2]int64{1000, 200 << 20 * 1000}; q.NonZero != want {
		t.Errorf("non-zero requests %v, want %v", q.NonZero, want)
	}
}

func TestReadPodsErrors(t *testing.T) {
	if _, err := ReadPods([]byte("kind: Deployment\nmetadata: {name: x}\n")); err == nil {
		t.Error("a Deployment was accepted")
	}
	pods, _ := ReadPods([]byte("kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n"))
	if _, err := pods[0].ToSim(sim.NewNames()); err == nil {
		t.Error("a pod without a duration was accepted")
	}
}

package kube

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim"
)

const placement = `apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {app: web, rev: "7"}
  annotations: {sim.jikken.dev/duration: 1h}
spec:
  initContainers:
    - {name: setup, ports: [{containerPort: 1, hostPort: 7000}]}
    - {name: proxy, restartPolicy: Always, ports: [{containerPort: 2, hostPort: 7001, protocol: UDP}]}
  containers:
    - name: main
      ports: [{containerPort: 80}, {containerPort: 8080, hostPort: 8080, hostIP: 10.0.0.1}]
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          podAffinityTerm:
            labelSelector: {matchLabels: {app: cache}}
            namespaces: [infra]
            topologyKey: topology.kubernetes.io/zone
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
          matchLabelKeys: [rev, absent]
          topologyKey: kubernetes.io/hostname
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      labelSelector: {matchLabels: {app: web}}
      minDomains: 3
      nodeTaintsPolicy: Honor
`

func TestPlacementFields(t *testing.T) {
	pods, err := ReadPods([]byte(placement))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pods[0].ToSim(sim.NewNames())
	if err != nil {
		t.Fatal(err)
	}
	// The init container that ends before the others start binds nothing while the pod runs.
	if want := []sim.HostPort{{Port: 7001, Protocol: "UDP"}, {Port: 8080, HostIP: "10.0.0.1"}}; !reflect.DeepEqual(p.HostPorts, want) {
		t.Errorf("host ports %+v, want %+v", p.HostPorts, want)
	}
	wantAffinity := &sim.PodAffinity{Preferred: []sim.WeightedPodAffinityTerm{{Weight: 20, Term: sim.PodAffinityTerm{
		Selector: &sim.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}, Namespaces: []string{"infra"}, TopologyKey: "topology.kubernetes.io/zone"}}}}
	if !reflect.DeepEqual(p.PodAffinity, wantAffinity) {
		t.Errorf("pod affinity %+v, want %+v", p.PodAffinity, wantAffinity)
	}
	// matchLabelKeys adds the pod's own value, as the API server merges it.
	wantAnti := &sim.PodAffinity{Required: []sim.PodAffinityTerm{{Selector: &sim.LabelSelector{MatchExpressions: []sim.NodeSelectorRequirement{
		{Key: "app", Operator: "In", Values: []string{"web"}}, {Key: "rev", Operator: "In", Values: []string{"7"}}}}, TopologyKey: sim.HostnameLabel}}}
	if !reflect.DeepEqual(p.PodAntiAffinity, wantAnti) {
		t.Errorf("pod anti-affinity %+v, want %+v", p.PodAntiAffinity, wantAnti)
	}
	wantSpread := []sim.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: sim.DoNotSchedule,
		Selector: &sim.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MinDomains: 3, NodeTaintsPolicy: sim.PolicyHonor}}
	if !reflect.DeepEqual(p.TopologySpread, wantSpread) {
		t.Errorf("spread %+v, want %+v", p.TopologySpread, wantSpread)
	}
	// An extender receives the same fields back.
	kp := FromSim(p, sim.NewNames())
	back, err := kp.ToSim(sim.NewNames())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.PodAffinity, p.PodAffinity) || !reflect.DeepEqual(back.PodAntiAffinity, p.PodAntiAffinity) ||
		!reflect.DeepEqual(back.TopologySpread, p.TopologySpread) || !reflect.DeepEqual(back.HostPorts, p.HostPorts) {
		t.Errorf("round trip through FromSim lost fields: %+v", back)
	}
}

func TestPlacementFieldErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"operator: In, values: [web]", "operator: Gt, values: [web]", `"Gt" on key "app" is not a label selector operator`},
		{"operator: In, values: [web]", "operator: In", `operator In on key "app" needs values`},
		{"whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: Never", `whenUnsatisfiable "Never"`},
		{"maxSkew: 1", "maxSkew: 0", "maxSkew 0 must be at least 1"},
		{"weight: 20", "weight: 200", "weight 200 must be within 1..100"},
		{"nodeTaintsPolicy: Honor", "nodeTaintsPolicy: honour", `nodeTaintsPolicy "honour"`},
		{"topologyKey: kubernetes.io/hostname", "topologyKey: \"\"", "topologyKey is empty"},
	} {
		pods, err := ReadPods([]byte(strings.Replace(placement, c.from, c.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pods[0].ToSim(sim.NewNames()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.to, err, c.want)
		}
	}
}

const selected = `apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: tier, namespace: default}
spec: {selector: {tier: front}}
---
apiVersion: v1
kind: Service
metadata: {name: elsewhere, namespace: other}
spec: {selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: headless-without-selector}
spec: {}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-7f}
spec: {selector: {matchLabels: {app: web, pod-template-hash: 7f}}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: old}
spec: {selector: {app: old}}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-7f-a
  labels: {app: web, tier: front, pod-template-hash: 7f}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-7f, controller: true}]
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata:
  name: old-a
  labels: {app: old}
  ownerReferences: [{apiVersion: v1, kind: ReplicationController, name: old, controller: true}]
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bare, labels: {app: db}}
spec: {containers: [{name: c}]}
`

// The default spread selector merges the selectors of the Services in the pod's namespace
// that select it and adds its controller's, as kube-scheduler's DefaultSelector.
func TestSpreadSelector(t *testing.T) {
	m, err := Read([]byte(selected))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Pods) != 3 || len(m.Services) != 4 || len(m.Controllers) != 2 {
		t.Fatalf("read %d pods, %d services, %d controllers; want 3, 4, 2", len(m.Pods), len(m.Services), len(m.Controllers))
	}
	want := []*sim.LabelSelector{
		{MatchLabels: map[string]string{"app": "web", "tier": "front"}, MatchExpressions: []sim.NodeSelectorRequirement{
			{Key: "app", Operator: "In", Values: []string{"web"}}, {Key: "pod-template-hash", Operator: "In", Values: []string{"7f"}}}},
		{MatchLabels: map[string]string{"app": "old"}},
		nil,
	}
	for i := range m.Pods {
		got, err := m.SpreadSelector(&m.Pods[i])
		if err != nil {
			t.Fatal(err)
		}
		if got != nil {
			slices.SortFunc(got.MatchExpressions, func(a, b sim.NodeSelectorRequirement) int { return strings.Compare(a.Key, b.Key) })
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: %+v, want %+v", m.Pods[i].Metadata.Name, got, want[i])
		}
	}
	if _, err := Read([]byte("kind: Deployment\nmetadata: {name: x}\n")); err == nil || !strings.Contains(err.Error(), "Services, ReplicaSets") {
		t.Errorf("a Deployment: %v", err)
	}
}

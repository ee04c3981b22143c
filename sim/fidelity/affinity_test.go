package fidelity_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jikken-dev/jikken/sim/kube"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

const zoneKey = "topology.kubernetes.io/zone"

// TestClusterAffinitySpreadFidelity compares kube-default with kube-scheduler on pods that
// place themselves relative to other pods (see placementPods): host ports, required and
// preferred pod affinity and anti-affinity, and topology spread constraints on zones and
// hosts. As in TestClusterKubeDefaultFidelity, every node's total score must agree.
func TestClusterAffinitySpreadFidelity(t *testing.T) {
	fidelity(t, 250, placementPods, placementServices(), "", scheduler.KubeDefault())
}

// placementServices select the agents and the caches, so those without constraints of their
// own get kube-scheduler's default spread constraints (the caches have none).
func placementServices() []*corev1.Service {
	var out []*corev1.Service
	for _, app := range []string{"agent", "cache"} {
		out = append(out, &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app}, ClusterIP: corev1.ClusterIPNone,
				Ports: []corev1.ServicePort{{Port: 80}}},
		})
	}
	return out
}

func selector(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

// placementPods returns n pods of five kinds drawn from a seeded mix:
//   - web: required anti-affinity to other web pods per host, some binding host port 8080;
//   - cache: preferred (sometimes required) affinity to web pods' zone, preferred
//     anti-affinity to other caches per host;
//   - db: DoNotSchedule spread over zones (maxSkew 1; sometimes minDomains 3, taints
//     honoured, or a node selector for zone a with zone b counted or not) and ScheduleAnyway
//     spread over hosts, some with a required anti-affinity that keeps batch pods out of
//     their zone;
//   - batch: GPU pods with preferred anti-affinity to each other per host and ScheduleAnyway
//     spread over zones (maxSkew 2), matchLabelKeys on a revision label;
//   - agent: host port 9100 on all or one address, no other constraint.
func placementPods(seed uint64, n int) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(seed, 9))
	var out []*corev1.Pod
	for i := range n {
		main := corev1.Container{Name: "main", Image: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(250+rng.IntN(4000)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(256+rng.IntN(8000))<<20, resource.BinarySI),
		}}}
		labels := map[string]string{"jikken-test/outcome": "hang"}
		spec := corev1.PodSpec{TerminationGracePeriodSeconds: new(int64)}
		var aff corev1.Affinity
		switch k := rng.IntN(20); {
		case k < 5:
			labels["app"] = "web"
			aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
				{LabelSelector: selector("app", "web"), TopologyKey: corev1.LabelHostname}}}
			if rng.IntN(2) == 0 {
				main.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
			}
		case k < 9:
			labels["app"] = "cache"
			aff.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: int32(1 + rng.IntN(100)), PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: selector("app", "web"), TopologyKey: zoneKey}}}}
			if rng.IntN(3) == 0 {
				aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{
					{LabelSelector: selector("app", "web"), TopologyKey: zoneKey}}
			}
			aff.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: int32(1 + rng.IntN(100)), PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: selector("app", "cache"), TopologyKey: corev1.LabelHostname}}}}
		case k < 13:
			labels["app"] = "db"
			zone := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector("app", "db")}
			switch rng.IntN(4) {
			case 0:
				zone.MinDomains = new(int32)
				*zone.MinDomains = 3
			case 1:
				honor := corev1.NodeInclusionPolicyHonor
				zone.NodeTaintsPolicy = &honor
			case 2:
				// Zone b is out of the count (nodeAffinityPolicy Honor, the default) ...
				spec.NodeSelector = map[string]string{zoneKey: "a"}
			case 3:
				// ... or counts with its db pods while none can go there.
				spec.NodeSelector = map[string]string{zoneKey: "a"}
				ignore := corev1.NodeInclusionPolicyIgnore
				zone.NodeAffinityPolicy = &ignore
			}
			spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{zone,
				{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector("app", "db")}}
			if rng.IntN(4) == 0 {
				aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
					{LabelSelector: selector("app", "batch"), TopologyKey: zoneKey}}}
			}
		case k < 17:
			labels["app"] = "batch"
			labels["rev"] = fmt.Sprint(rng.IntN(2))
			g := *resource.NewQuantity(int64(1+rng.IntN(2)), resource.DecimalSI)
			main.Resources.Requests["nvidia.com/gpu"] = g
			main.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": g}
			aff.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 30, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: selector("app", "batch"), TopologyKey: corev1.LabelHostname}}}}
			spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: zoneKey,
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector("app", "batch"), MatchLabelKeys: []string{"rev"}}}
		default:
			labels["app"] = "agent"
			port := corev1.ContainerPort{ContainerPort: 9100, HostPort: 9100}
			if rng.IntN(2) == 0 {
				port.HostIP = "10.0.0.1"
			}
			main.Ports = []corev1.ContainerPort{port}
		}
		if aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
			spec.Affinity = &aff
		}
		if rng.IntN(4) == 0 {
			spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		}
		spec.Containers = []corev1.Container{main}
		out = append(out, &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%03d", i), Namespace: "default", Labels: labels,
				Annotations: map[string]string{kube.DurationAnnotation: "24h"}},
			Spec: spec,
		})
	}
	return out
}

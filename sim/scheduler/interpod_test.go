package scheduler_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// The cluster of these tests: a1 and a2 in zone a, b1 in zone b, c1 without a zone label,
// each with room for many small pods.
var topologyNodes = []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"c1", ""}}

const zoneKey = "topology.kubernetes.io/zone"

// placed is a pod bound to a node before the pod under test is looked at.
type placed struct {
	node string
	pod  *sim.Pod
}

type bindThenScore struct {
	fw     *scheduler.Framework
	target *sim.Pod
	at     map[*sim.Pod]string
	got    []scheduler.NodeScore
}

func (b *bindThenScore) Schedule(c *sim.Cluster) error {
	for _, p := range c.Pending() {
		if p == b.target {
			continue
		}
		if err := c.Bind(p, c.Node(b.at[p])); err != nil {
			return err
		}
	}
	var err error
	if b.got, err = b.fw.Scores(c, b.target); err != nil {
		return err
	}
	return errScored
}

type podList []*sim.Pod

func (l *podList) Step(sim.Time, sim.Status) ([]*sim.Pod, sim.Time, error) {
	p := *l
	*l = nil
	return p, sim.Never, nil
}

// scores places the pods, then returns p's feasible nodes with their totals under profile.
// taint, if set, is put on node b1.
func scores(t *testing.T, profile scheduler.Profile, taint *sim.Taint, p *sim.Pod, existing ...placed) map[string]int64 {
	t.Helper()
	names := sim.NewNames()
	var capacity sim.Resources
	capacity[sim.CPUIndex], capacity[sim.MemoryIndex], capacity[sim.PodsIndex] = 64*sim.Milli, 256<<30*sim.Milli, 110*sim.Milli
	var nodes []sim.NodeSpec
	for _, n := range topologyNodes {
		spec := sim.NodeSpec{Name: n.name, Capacity: capacity, Labels: map[string]string{}}
		if n.zone != "" {
			spec.Labels[zoneKey] = n.zone
		}
		if taint != nil && n.name == "b1" {
			spec.Taints = []sim.Taint{*taint}
		}
		nodes = append(nodes, spec)
	}
	fw, err := scheduler.New(profile, names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	b := &bindThenScore{fw: fw, target: p, at: map[*sim.Pod]string{}}
	var list podList
	for i, e := range existing {
		e.pod.Name = fmt.Sprintf("existing-%d", i)
		b.at[e.pod] = e.node
		list = append(list, e.pod)
	}
	p.Name = "target"
	list = append(list, p)
	for _, q := range list {
		q.Duration = 3600 * sim.Second
		if q.Namespace == "" {
			q.Namespace = "default"
		}
	}
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: b, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{&list}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); !errors.Is(err, errScored) {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, s := range b.got {
		out[s.Node.Name] = s.Score
	}
	return out
}

// only returns kube-default with one score plugin (weight 1), so totals are its normalised
// scores; the filters are kube-default's.
func only(plugin string) scheduler.Profile {
	p := scheduler.KubeDefault()
	p.Score = []scheduler.PluginRef{{Name: plugin, Weight: 1}}
	return p
}

func feasible(s map[string]int64) string {
	return strings.Join(slices.Sorted(maps.Keys(s)), ",")
}

func labelled(kv ...string) *sim.Pod {
	p := &sim.Pod{Labels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

func selects(kv ...string) *sim.LabelSelector {
	return &sim.LabelSelector{MatchLabels: labelled(kv...).Labels}
}

func TestNodePortsFilter(t *testing.T) {
	for _, c := range []struct {
		name string
		want []sim.HostPort
		out  string
	}{
		{"same port, any address", []sim.HostPort{{Port: 8080}}, "a2,b1,c1"},
		{"same port, other protocol", []sim.HostPort{{Port: 8080, Protocol: "UDP"}}, "a1,a2,b1,c1"},
		{"explicit TCP is the default", []sim.HostPort{{Port: 8080, Protocol: "TCP"}}, "a2,b1,c1"},
		{"one address against 0.0.0.0", []sim.HostPort{{Port: 8080, HostIP: "10.0.0.2"}}, "a2,b1,c1"},
		{"other address, same port", []sim.HostPort{{Port: 9090, HostIP: "10.0.0.2"}}, "a1,a2,b1,c1"},
		{"same address, same port", []sim.HostPort{{Port: 9090, HostIP: "10.0.0.1"}}, "a1,a2,c1"},
		{"0.0.0.0 against one address", []sim.HostPort{{Port: 9090}}, "a1,a2,c1"},
		{"free port", []sim.HostPort{{Port: 7070}}, "a1,a2,b1,c1"},
	} {
		web := labelled()
		web.HostPorts = []sim.HostPort{{Port: 8080}}
		pinned := labelled()
		pinned.HostPorts = []sim.HostPort{{Port: 9090, HostIP: "10.0.0.1"}}
		p := labelled()
		p.HostPorts = c.want
		got := feasible(scores(t, scheduler.KubeDefault(), nil, p, placed{"a1", web}, placed{"b1", pinned}))
		if got != c.out {
			t.Errorf("%s: feasible %s, want %s", c.name, got, c.out)
		}
	}
}

func requiredTerm(key string, sel *sim.LabelSelector) *sim.PodAffinity {
	return &sim.PodAffinity{Required: []sim.PodAffinityTerm{{Selector: sel, TopologyKey: key}}}
}

func TestInterPodAffinityFilter(t *testing.T) {
	web := func() placed { return placed{"a1", labelled("app", "web")} }
	for _, c := range []struct {
		name     string
		pod      func() *sim.Pod
		existing []placed
		out      string
	}{
		// c1 has no zone, so no zone holds a web pod there.
		{"anti-affinity by zone", func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "web"))
			return p
		}, []placed{web()}, "b1,c1"},
		{"affinity by zone", func() *sim.Pod {
			p := labelled()
			p.PodAffinity = requiredTerm(zoneKey, selects("app", "web"))
			return p
		}, []placed{web()}, "a1,a2"},
		{"affinity by hostname", func() *sim.Pod {
			p := labelled()
			p.PodAffinity = requiredTerm(sim.HostnameLabel, selects("app", "web"))
			return p
		}, []placed{web()}, "a1"},
		// The first of a group with affinity to itself goes wherever the topology exists.
		{"first of a self-affine group", func() *sim.Pod {
			p := labelled("app", "cache")
			p.PodAffinity = requiredTerm(zoneKey, selects("app", "cache"))
			return p
		}, []placed{web()}, "a1,a2,b1"},
		{"affinity nothing matches", func() *sim.Pod {
			p := labelled("app", "other")
			p.PodAffinity = requiredTerm(zoneKey, selects("app", "cache"))
			return p
		}, []placed{web()}, ""},
		// A placed pod's anti-affinity keeps matching pods off its node.
		{"existing pod's anti-affinity", func() *sim.Pod { return labelled("app", "batch") }, []placed{{"a1", func() *sim.Pod {
			q := labelled("app", "db")
			q.PodAntiAffinity = requiredTerm(sim.HostnameLabel, selects("app", "batch"))
			return q
		}()}}, "a2,b1,c1"},
		{"existing pod's anti-affinity, no match", func() *sim.Pod { return labelled("app", "web") }, []placed{{"a1", func() *sim.Pod {
			q := labelled("app", "db")
			q.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "batch"))
			return q
		}()}}, "a1,a2,b1,c1"},
		{"existing pod's anti-affinity by zone", func() *sim.Pod { return labelled("app", "batch") }, []placed{{"a1", func() *sim.Pod {
			q := labelled("app", "db")
			q.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "batch"))
			return q
		}()}}, "b1,c1"},
		// Terms look at the pod's own namespace unless they say otherwise.
		{"other namespace", func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "web"))
			return p
		}, []placed{{"a1", func() *sim.Pod { q := labelled("app", "web"); q.Namespace = "team"; return q }()}}, "a1,a2,b1,c1"},
		{"all namespaces", func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "web"))
			p.PodAntiAffinity.Required[0].NamespaceSelector = &sim.LabelSelector{}
			return p
		}, []placed{{"a1", func() *sim.Pod { q := labelled("app", "web"); q.Namespace = "team"; return q }()}}, "b1,c1"},
		{"namespace by name label", func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "web"))
			p.PodAntiAffinity.Required[0].NamespaceSelector = selects(sim.NamespaceNameLabel, "team")
			return p
		}, []placed{{"a1", func() *sim.Pod { q := labelled("app", "web"); q.Namespace = "team"; return q }()}}, "b1,c1"},
		{"nil selector selects nothing", func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(zoneKey, nil)
			return p
		}, []placed{web()}, "a1,a2,b1,c1"},
	} {
		got := feasible(scores(t, scheduler.KubeDefault(), nil, c.pod(), c.existing...))
		if got != c.out {
			t.Errorf("%s: feasible %q, want %q", c.name, got, c.out)
		}
	}
}

func preferred(weight int32, key string, sel *sim.LabelSelector) sim.WeightedPodAffinityTerm {
	return sim.WeightedPodAffinityTerm{Weight: weight, Term: sim.PodAffinityTerm{Selector: sel, TopologyKey: key}}
}

// Worked cases of InterPodAffinity's score, normalised to 0..100 between the lowest and the
// highest raw score of the feasible nodes.
func TestInterPodAffinityScore(t *testing.T) {
	// The pod prefers zones with web pods (10) and nodes without (4). Web pods on a1 and b1:
	// zone a +10, zone b +10, host a1 -4, host b1 -4; raw a1 6, a2 10, b1 6, c1 0;
	// normalised 100 x raw / 10.
	p := labelled()
	p.PodAffinity = &sim.PodAffinity{Preferred: []sim.WeightedPodAffinityTerm{preferred(10, zoneKey, selects("app", "web"))}}
	p.PodAntiAffinity = &sim.PodAffinity{Preferred: []sim.WeightedPodAffinityTerm{preferred(4, sim.HostnameLabel, selects("app", "web"))}}
	got := scores(t, only(scheduler.InterPodAffinityName), nil, p, placed{"a1", labelled("app", "web")}, placed{"b1", labelled("app", "web")})
	if want := map[string]int64{"a1": 60, "a2": 100, "b1": 60, "c1": 0}; !maps.Equal(got, want) {
		t.Errorf("own preferences: %v, want %v", got, want)
	}

	// Placed pods' terms that select the pod count too: a preferred affinity of weight 7 by
	// zone on b1 and a required affinity by hostname on a1 (hardPodAffinityWeight 1), and a
	// preferred anti-affinity of weight 3 by hostname on a2. Raw a1 1, a2 -3, b1 7, c1 0;
	// normalised 100 x (raw + 3) / 10: 40, 0, 100, 30.
	x := labelled("app", "x")
	onB := labelled()
	onB.PodAffinity = &sim.PodAffinity{Preferred: []sim.WeightedPodAffinityTerm{preferred(7, zoneKey, selects("app", "x"))}}
	onA1 := labelled()
	onA1.PodAffinity = requiredTerm(sim.HostnameLabel, selects("app", "x"))
	onA2 := labelled()
	onA2.PodAntiAffinity = &sim.PodAffinity{Preferred: []sim.WeightedPodAffinityTerm{preferred(3, sim.HostnameLabel, selects("app", "x"))}}
	got = scores(t, only(scheduler.InterPodAffinityName), nil, x, placed{"b1", onB}, placed{"a1", onA1}, placed{"a2", onA2})
	if want := map[string]int64{"a1": 40, "a2": 0, "b1": 100, "c1": 30}; !maps.Equal(got, want) {
		t.Errorf("placed pods' terms: %v, want %v", got, want)
	}

	// Without terms anywhere the plugin adds nothing.
	got = scores(t, only(scheduler.InterPodAffinityName), nil, labelled("app", "x"), placed{"b1", labelled("app", "x")})
	if want := map[string]int64{"a1": 0, "a2": 0, "b1": 0, "c1": 0}; !maps.Equal(got, want) {
		t.Errorf("no terms: %v, want %v", got, want)
	}
}

// Pods with required anti-affinity to each other by hostname go to distinct nodes, and the
// fifth waits: the filter sees pods the framework placed in the same pass.
func TestInterPodAffinitySpreadsReplicas(t *testing.T) {
	names := sim.NewNames()
	var capacity sim.Resources
	capacity[sim.CPUIndex], capacity[sim.MemoryIndex], capacity[sim.PodsIndex] = 64*sim.Milli, 256<<30*sim.Milli, 110*sim.Milli
	var nodes []sim.NodeSpec
	for _, n := range topologyNodes {
		nodes = append(nodes, sim.NodeSpec{Name: n.name, Capacity: capacity})
	}
	fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	var list podList
	for i := range 5 {
		p := labelled("app", "db")
		p.Name, p.Namespace, p.Duration = fmt.Sprintf("db-%d", i), "default", 3600*sim.Second
		p.PodAntiAffinity = requiredTerm(sim.HostnameLabel, selects("app", "db"))
		list = append(list, p)
	}
	pods := slices.Clone(list)
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: fw, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{&list}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step(); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, p := range pods[:4] {
		if p.Phase != sim.Running || used[p.Node.Name] {
			t.Fatalf("%s is %s on %v; want four replicas on four nodes", p.Name, p.Phase, p.Node)
		}
		used[p.Node.Name] = true
	}
	if pods[4].Phase != sim.Pending {
		t.Errorf("fifth replica is %s, want Pending", pods[4].Phase)
	}
}

func spread(action string, maxSkew int32, key string, sel *sim.LabelSelector) sim.TopologySpreadConstraint {
	return sim.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: action, Selector: sel}
}

func webs(nodes ...string) []placed {
	var out []placed
	for _, n := range nodes {
		out = append(out, placed{n, labelled("app", "web")})
	}
	return out
}

func TestPodTopologySpreadFilter(t *testing.T) {
	noSchedule := &sim.Taint{Key: "gpu", Effect: sim.NoSchedule}
	for _, c := range []struct {
		name     string
		pod      func(p *sim.Pod)
		taint    *sim.Taint
		existing []placed
		out      string
	}{
		// Zone a has 2, zone b 0: a would go to 3 - 0 > 1; c1 has no zone.
		{"max skew", func(*sim.Pod) {}, nil, webs("a1", "a1"), "b1"},
		{"max skew 3", func(p *sim.Pod) { p.TopologySpread[0].MaxSkew = 3 }, nil, webs("a1", "a1"), "a1,a2,b1"},
		// One each: 1 + 1 - 1 is within 1 everywhere.
		{"balanced", func(*sim.Pod) {}, nil, webs("a1", "b1"), "a1,a2,b1"},
		// Two domains are fewer than minDomains 3, so the minimum counts as 0.
		{"min domains", func(p *sim.Pod) { p.TopologySpread[0].MinDomains = 3 }, nil, webs("a1", "b1"), ""},
		// A pod that does not match its own selector does not add itself.
		{"pod outside its selector", func(p *sim.Pod) { p.Labels["app"] = "other" }, nil, webs("a1", "a1"), "b1"},
		{"pod outside its selector, skew 2", func(p *sim.Pod) { p.Labels["app"] = "other"; p.TopologySpread[0].MaxSkew = 2 }, nil, webs("a1", "a1"), "a1,a2,b1"},
		// Node affinity: Honor leaves zone b out of the count, so zone a is the minimum.
		{"node affinity honoured", func(p *sim.Pod) { p.NodeSelector = map[string]string{zoneKey: "a"} }, nil, webs("a1"), "a1,a2"},
		{"node affinity ignored", func(p *sim.Pod) {
			p.NodeSelector = map[string]string{zoneKey: "a"}
			p.TopologySpread[0].NodeAffinityPolicy = sim.PolicyIgnore
		}, nil, webs("a1"), ""},
		// Taints are ignored by default: zone b (tainted b1) counts with 0 pods.
		{"taints ignored", func(*sim.Pod) {}, noSchedule, webs("a1"), ""},
		{"taints honoured", func(p *sim.Pod) { p.TopologySpread[0].NodeTaintsPolicy = sim.PolicyHonor }, noSchedule, webs("a1"), "a1,a2"},
		// Hostname: per node, c1 included; one pod on a1 and a2, b1 and c1 empty.
		{"hostname", func(p *sim.Pod) { p.TopologySpread[0].TopologyKey = sim.HostnameLabel }, nil, webs("a1", "a2"), "b1,c1"},
		// Only pods of the pod's namespace count.
		{"other namespace", func(p *sim.Pod) { p.Namespace = "team" }, nil, webs("a1", "a1"), "a1,a2,b1"},
	} {
		p := labelled("app", "web")
		p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.DoNotSchedule, 1, zoneKey, selects("app", "web"))}
		c.pod(p)
		got := feasible(scores(t, scheduler.KubeDefault(), c.taint, p, c.existing...))
		if got != c.out {
			t.Errorf("%s: feasible %q, want %q", c.name, got, c.out)
		}
	}
}

// Worked cases of PodTopologySpread's score: per constraint, matching pods in the node's
// domain x ln(domains + 2) + maxSkew - 1, rounded; then 100 x (max + min - score) / max, and 0
// for nodes without the key.
func TestPodTopologySpreadScore(t *testing.T) {
	// Zone: a has 2, b 1; two domains, weight ln 4 = 1.386. Raw a 2.77 -> 3, b 1.39 -> 1;
	// a 100 x (3 + 1 - 3) / 3 = 33, b 100; c1 has no zone: 0.
	p := labelled("app", "web")
	p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.ScheduleAnyway, 1, zoneKey, selects("app", "web"))}
	got := scores(t, only(scheduler.PodTopologySpreadName), nil, p, webs("a1", "a1", "b1")...)
	if want := map[string]int64{"a1": 33, "a2": 33, "b1": 100, "c1": 0}; !maps.Equal(got, want) {
		t.Errorf("zone: %v, want %v", got, want)
	}
	// Hostname, maxSkew 2: four nodes, weight ln 6 = 1.792; a1 has 2 (4.58 -> 5), b1 1
	// (2.79 -> 3), a2 and c1 none (1). 100 x (5 + 1 - s) / 5: a1 20, b1 60, a2 and c1 100.
	p = labelled("app", "web")
	p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.ScheduleAnyway, 2, sim.HostnameLabel, selects("app", "web"))}
	got = scores(t, only(scheduler.PodTopologySpreadName), nil, p, webs("a1", "a1", "b1")...)
	if want := map[string]int64{"a1": 20, "a2": 100, "b1": 60, "c1": 100}; !maps.Equal(got, want) {
		t.Errorf("hostname: %v, want %v", got, want)
	}
	// No matching pods anywhere: every scored node gets 100, c1 (no zone) 0.
	p = labelled("app", "web")
	p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.ScheduleAnyway, 1, zoneKey, selects("app", "web"))}
	got = scores(t, only(scheduler.PodTopologySpreadName), nil, p)
	if want := map[string]int64{"a1": 100, "a2": 100, "b1": 100, "c1": 0}; !maps.Equal(got, want) {
		t.Errorf("empty: %v, want %v", got, want)
	}
}

// stages submits its first batch at time 0 and the second a second later.
type stages [2][]*sim.Pod

func (s *stages) Step(now sim.Time, _ sim.Status) ([]*sim.Pod, sim.Time, error) {
	if now == 0 && s[0] != nil {
		p := s[0]
		s[0] = nil
		return p, sim.Second, nil
	}
	p := s[1]
	s[1] = nil
	return p, sim.Never, nil
}

// A pod kept off every node by lower-priority pods' ports, or by its anti-affinity to them,
// preempts one of them, as upstream's preemption judges the node without its victims.
func TestPreemptionResolvesPlacementConflicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		low, high func() *sim.Pod
	}{
		{"host port", func() *sim.Pod {
			p := labelled("app", "low")
			p.HostPorts = []sim.HostPort{{Port: 80}}
			return p
		}, func() *sim.Pod {
			p := labelled()
			p.HostPorts = []sim.HostPort{{Port: 80}}
			return p
		}},
		{"anti-affinity", func() *sim.Pod { return labelled("app", "low") }, func() *sim.Pod {
			p := labelled()
			p.PodAntiAffinity = requiredTerm(sim.HostnameLabel, selects("app", "low"))
			return p
		}},
		{"low pods' anti-affinity", func() *sim.Pod {
			p := labelled("app", "low")
			p.PodAntiAffinity = requiredTerm(zoneKey, selects("app", "high"))
			return p
		}, func() *sim.Pod { return labelled("app", "high") }},
		// Zone a holds 2, zone b 1, and with fewer than 3 zones the minimum counts as 0: the
		// pod fits nowhere, but does in zone b once b1's pod is gone.
		{"spread", func() *sim.Pod { return labelled("app", "web") }, func() *sim.Pod {
			p := labelled("app", "web")
			p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.DoNotSchedule, 1, zoneKey, selects("app", "web"))}
			p.TopologySpread[0].MinDomains = 3
			return p
		}},
	} {
		names := sim.NewNames()
		var capacity sim.Resources
		capacity[sim.CPUIndex], capacity[sim.MemoryIndex], capacity[sim.PodsIndex] = 64*sim.Milli, 256<<30*sim.Milli, 110*sim.Milli
		var nodes []sim.NodeSpec
		for _, n := range topologyNodes[:3] {
			nodes = append(nodes, sim.NodeSpec{Name: n.name, Capacity: capacity, Labels: map[string]string{zoneKey: n.zone}})
		}
		fw, err := scheduler.New(scheduler.KubeDefault(), names, sim.NewRand(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		var st stages
		for i := range nodes {
			p := c.low()
			p.Name, p.Namespace, p.Duration, p.Priority = fmt.Sprintf("low-%d", i), "default", 3600*sim.Second, 1
			// One per node: the low pods carry no constraint among themselves.
			p.NodeSelector = map[string]string{sim.HostnameLabel: nodes[i].Name}
			st[0] = append(st[0], p)
		}
		high := c.high()
		high.Name, high.Namespace, high.Duration, high.Priority = "high", "default", 3600*sim.Second, 10
		st[1] = []*sim.Pod{high}
		lows := slices.Clone(st[0])
		e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: fw, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{&st}})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := e.Step(); err != nil {
				t.Fatal(err)
			}
		}
		preempted := 0
		for _, p := range lows {
			preempted += p.Preemptions
		}
		if high.Phase != sim.Running || preempted != 1 {
			t.Errorf("%s: high pod %s, %d low pods preempted; want it running after one preemption", c.name, high.Phase, preempted)
		}
	}
}

// Worked case of the default constraints (ScheduleAnyway, maxSkew 3 per host and 5 per
// zone) for a pod its Service selects, with web pods 2 on a1 and 1 on b1. No node is left out
// for lacking a key. Host weight ln(4 + 2) = 1.792, zone weight ln(3 + 2) = 1.609 (zones a, b
// and c1's empty value). a1: 2 x 1.792 + 2 + 2 x 1.609 + 4 = 12.80 -> 13; a2: 2 + 7.22 ->
// 9; b1: 3.79 + 5.61 -> 9; c1, without a zone, only its host part: 2. Normalised
// 100 x (13 + 2 - s) / 13: 15, 46, 46, 100.
func TestPodTopologySpreadDefaultConstraints(t *testing.T) {
	p := labelled("app", "web")
	p.DefaultSpread = selects("app", "web")
	got := scores(t, only(scheduler.PodTopologySpreadName), nil, p, webs("a1", "a1", "b1")...)
	if want := map[string]int64{"a1": 15, "a2": 46, "b1": 46, "c1": 100}; !maps.Equal(got, want) {
		t.Errorf("default constraints: %v, want %v", got, want)
	}
	// Constraints of its own replace the defaults.
	p = labelled("app", "web")
	p.DefaultSpread = selects("app", "web")
	p.TopologySpread = []sim.TopologySpreadConstraint{spread(sim.ScheduleAnyway, 1, zoneKey, selects("app", "web"))}
	got = scores(t, only(scheduler.PodTopologySpreadName), nil, p, webs("a1", "a1", "b1")...)
	if want := map[string]int64{"a1": 33, "a2": 33, "b1": 100, "c1": 0}; !maps.Equal(got, want) {
		t.Errorf("own constraints: %v, want %v", got, want)
	}
}

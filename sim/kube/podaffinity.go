package kube

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
)

// hostPorts returns the ports the pod binds on its node: those with a hostPort, of the
// containers and of the sidecars (init containers that run as long as the pod).
func (s *PodSpec) hostPorts() []sim.HostPort {
	var out []sim.HostPort
	add := func(cs []Container, sidecarsOnly bool) {
		for _, c := range cs {
			if sidecarsOnly && c.RestartPolicy != "Always" {
				continue
			}
			for _, p := range c.Ports {
				if p.HostPort > 0 {
					out = append(out, sim.HostPort{Port: p.HostPort, Protocol: p.Protocol, HostIP: p.HostIP})
				}
			}
		}
	}
	add(s.InitContainers, true)
	add(s.Containers, false)
	return out
}

// selectorToSim converts a label selector, checking its operators; keys from matchKeys
// (In) and mismatchKeys (NotIn) are added with the pod's own value for each key it has, as
// the API server merges matchLabelKeys and mismatchLabelKeys. A nil selector stays nil: it
// selects nothing.
func selectorToSim(ls *LabelSelector, labels map[string]string, matchKeys, mismatchKeys []string, what string) (*sim.LabelSelector, error) {
	if ls == nil {
		return nil, nil
	}
	out := &sim.LabelSelector{MatchLabels: ls.MatchLabels}
	for _, e := range ls.MatchExpressions {
		switch e.Operator {
		case "In", "NotIn":
			if len(e.Values) == 0 {
				return nil, fmt.Errorf("%s: operator %s on key %q needs values", what, e.Operator, e.Key)
			}
		case "Exists", "DoesNotExist":
			if len(e.Values) > 0 {
				return nil, fmt.Errorf("%s: operator %s on key %q takes no values", what, e.Operator, e.Key)
			}
		default:
			return nil, fmt.Errorf("%s: operator %q on key %q is not a label selector operator; use In, NotIn, Exists or DoesNotExist", what, e.Operator, e.Key)
		}
		out.MatchExpressions = append(out.MatchExpressions, sim.NodeSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	for _, keys := range []struct {
		op   string
		keys []string
	}{{"In", matchKeys}, {"NotIn", mismatchKeys}} {
		for _, k := range keys.keys {
			if v, ok := labels[k]; ok {
				out.MatchExpressions = append(out.MatchExpressions, sim.NodeSelectorRequirement{Key: k, Operator: keys.op, Values: []string{v}})
			}
		}
	}
	return out, nil
}

func termToSimPod(t *PodAffinityTerm, labels map[string]string, what string) (sim.PodAffinityTerm, error) {
	if t.TopologyKey == "" {
		return sim.PodAffinityTerm{}, fmt.Errorf("%s: topologyKey is empty", what)
	}
	sel, err := selectorToSim(t.LabelSelector, labels, t.MatchLabelKeys, t.MismatchLabelKeys, what+".labelSelector")
	if err != nil {
		return sim.PodAffinityTerm{}, err
	}
	ns, err := selectorToSim(t.NamespaceSelector, nil, nil, nil, what+".namespaceSelector")
	if err != nil {
		return sim.PodAffinityTerm{}, err
	}
	return sim.PodAffinityTerm{Selector: sel, Namespaces: t.Namespaces, NamespaceSelector: ns, TopologyKey: t.TopologyKey}, nil
}

func podAffinityToSim(a *PodAffinity, labels map[string]string, what string) (*sim.PodAffinity, error) {
	if a == nil {
		return nil, nil
	}
	out := &sim.PodAffinity{}
	for i := range a.RequiredDuringSchedulingIgnoredDuringExecution {
		t, err := termToSimPod(&a.RequiredDuringSchedulingIgnoredDuringExecution[i], labels, fmt.Sprintf("%s.required[%d]", what, i))
		if err != nil {
			return nil, err
		}
		out.Required = append(out.Required, t)
	}
	for i := range a.PreferredDuringSchedulingIgnoredDuringExecution {
		w := &a.PreferredDuringSchedulingIgnoredDuringExecution[i]
		f := fmt.Sprintf("%s.preferred[%d]", what, i)
		if w.Weight < 1 || w.Weight > 100 {
			return nil, fmt.Errorf("%s: weight %d must be within 1..100", f, w.Weight)
		}
		t, err := termToSimPod(&w.PodAffinityTerm, labels, f)
		if err != nil {
			return nil, err
		}
		out.Preferred = append(out.Preferred, sim.WeightedPodAffinityTerm{Weight: w.Weight, Term: t})
	}
	if len(out.Required) == 0 && len(out.Preferred) == 0 {
		return nil, nil
	}
	return out, nil
}

func spreadToSim(cs []TopologySpreadConstraint, labels map[string]string) ([]sim.TopologySpreadConstraint, error) {
	var out []sim.TopologySpreadConstraint
	for i := range cs {
		c := &cs[i]
		f := fmt.Sprintf("topologySpreadConstraints[%d]", i)
		if c.MaxSkew < 1 {
			return nil, fmt.Errorf("%s: maxSkew %d must be at least 1", f, c.MaxSkew)
		}
		if c.TopologyKey == "" {
			return nil, fmt.Errorf("%s: topologyKey is empty", f)
		}
		if c.WhenUnsatisfiable != sim.DoNotSchedule && c.WhenUnsatisfiable != sim.ScheduleAnyway {
			return nil, fmt.Errorf("%s: whenUnsatisfiable %q must be %s or %s", f, c.WhenUnsatisfiable, sim.DoNotSchedule, sim.ScheduleAnyway)
		}
		sel, err := selectorToSim(c.LabelSelector, labels, c.MatchLabelKeys, nil, f+".labelSelector")
		if err != nil {
			return nil, err
		}
		sc := sim.TopologySpreadConstraint{MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, WhenUnsatisfiable: c.WhenUnsatisfiable, Selector: sel}
		if c.MinDomains != nil {
			if *c.MinDomains < 1 || c.WhenUnsatisfiable != sim.DoNotSchedule {
				return nil, fmt.Errorf("%s: minDomains must be at least 1 and needs whenUnsatisfiable %s", f, sim.DoNotSchedule)
			}
			sc.MinDomains = *c.MinDomains
		}
		for _, pol := range []struct {
			name string
			v    *string
			dst  *string
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy, &sc.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy, &sc.NodeTaintsPolicy}} {
			if pol.v == nil {
				continue
			}
			if *pol.v != sim.PolicyHonor && *pol.v != sim.PolicyIgnore {
				return nil, fmt.Errorf("%s: %s %q must be %s or %s", f, pol.name, *pol.v, sim.PolicyHonor, sim.PolicyIgnore)
			}
			*pol.dst = *pol.v
		}
		out = append(out, sc)
	}
	return out, nil
}

func selectorFromSim(s *sim.LabelSelector) *LabelSelector {
	if s == nil {
		return nil
	}
	out := &LabelSelector{MatchLabels: s.MatchLabels}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, LabelSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	return out
}

func termFromSimPod(t *sim.PodAffinityTerm) PodAffinityTerm {
	return PodAffinityTerm{LabelSelector: selectorFromSim(t.Selector), Namespaces: t.Namespaces,
		NamespaceSelector: selectorFromSim(t.NamespaceSelector), TopologyKey: t.TopologyKey}
}

func podAffinityFromSim(a *sim.PodAffinity) *PodAffinity {
	if a == nil {
		return nil
	}
	out := &PodAffinity{}
	for i := range a.Required {
		out.RequiredDuringSchedulingIgnoredDuringExecution = append(out.RequiredDuringSchedulingIgnoredDuringExecution, termFromSimPod(&a.Required[i]))
	}
	for i := range a.Preferred {
		out.PreferredDuringSchedulingIgnoredDuringExecution = append(out.PreferredDuringSchedulingIgnoredDuringExecution,
			WeightedPodAffinityTerm{Weight: a.Preferred[i].Weight, PodAffinityTerm: termFromSimPod(&a.Preferred[i].Term)})
	}
	return out
}

func spreadFromSim(cs []sim.TopologySpreadConstraint) []TopologySpreadConstraint {
	var out []TopologySpreadConstraint
	for _, c := range cs {
		kc := TopologySpreadConstraint{MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, WhenUnsatisfiable: c.WhenUnsatisfiable,
			LabelSelector: selectorFromSim(c.Selector)}
		if c.MinDomains > 0 {
			kc.MinDomains = &c.MinDomains
		}
		if c.NodeAffinityPolicy != "" {
			kc.NodeAffinityPolicy = &c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != "" {
			kc.NodeTaintsPolicy = &c.NodeTaintsPolicy
		}
		out = append(out, kc)
	}
	return out
}

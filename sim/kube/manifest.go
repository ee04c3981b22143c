package kube

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/sim"
)

// ReadPods reads Pod manifests from YAML or JSON: several documents separated by "---", or a
// List whose items are pods. Services and controllers (see Read) are accepted and left out;
// other kinds are an error naming the document.
func ReadPods(data []byte) ([]Pod, error) {
	m, err := Read(data)
	if err != nil {
		return nil, err
	}
	return m.Pods, nil
}

// Manifests are the objects of a workload file: the pods, and the Services, ReplicaSets,
// StatefulSets and ReplicationControllers whose selectors kube-scheduler's default topology
// spread looks at.
type Manifests struct {
	Pods     []Pod
	Services []Service
	// Controllers are the ReplicaSets, StatefulSets and ReplicationControllers.
	Controllers []Controller
}

// Service is the part of v1.Service the scheduler reads: its pod selector.
type Service struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     struct {
		Selector map[string]string `json:"selector,omitempty"`
	} `json:"spec"`
}

// Controller is a ReplicaSet, StatefulSet (a label selector) or ReplicationController (a
// map), by its selector.
type Controller struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Selector   *LabelSelector
}

// Read reads a workload file: Pods (also as List or PodList items), Services, ReplicaSets,
// StatefulSets and ReplicationControllers, as YAML or JSON documents separated by "---".
func Read(data []byte) (*Manifests, error) {
	m := &Manifests{}
	for i, doc := range splitDocuments(data) {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var err error
		switch head.Kind {
		case "Pod", "":
			// Not strict: real manifests carry fields (command, volumes, ...) that do not
			// matter to scheduling.
			var p Pod
			err = yaml.Unmarshal(doc, &p)
			m.Pods = append(m.Pods, p)
		case "List", "PodList":
			var l struct {
				Items []Pod `json:"items"`
			}
			err = yaml.Unmarshal(doc, &l)
			m.Pods = append(m.Pods, l.Items...)
		case "Service":
			var svc Service
			err = yaml.Unmarshal(doc, &svc)
			m.Services = append(m.Services, svc)
		case "ReplicaSet", "StatefulSet":
			var c struct {
				APIVersion string     `json:"apiVersion"`
				Metadata   ObjectMeta `json:"metadata"`
				Spec       struct {
					Selector *LabelSelector `json:"selector"`
				} `json:"spec"`
			}
			err = yaml.Unmarshal(doc, &c)
			m.Controllers = append(m.Controllers, Controller{APIVersion: c.APIVersion, Kind: head.Kind, Metadata: c.Metadata, Selector: c.Spec.Selector})
		case "ReplicationController":
			var c struct {
				APIVersion string     `json:"apiVersion"`
				Metadata   ObjectMeta `json:"metadata"`
				Spec       struct {
					Selector map[string]string `json:"selector"`
				} `json:"spec"`
			}
			err = yaml.Unmarshal(doc, &c)
			m.Controllers = append(m.Controllers, Controller{APIVersion: c.APIVersion, Kind: head.Kind, Metadata: c.Metadata, Selector: &LabelSelector{MatchLabels: c.Spec.Selector}})
		default:
			return nil, fmt.Errorf("document %d: kind %q is not read; a workload file holds Pods (or a List of them), and the Services, ReplicaSets, StatefulSets and ReplicationControllers that select them", i+1, head.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
	}
	for i := range m.Controllers {
		if m.Controllers[i].Metadata.Namespace == "" {
			m.Controllers[i].Metadata.Namespace = "default"
		}
	}
	for i := range m.Services {
		if m.Services[i].Metadata.Namespace == "" {
			m.Services[i].Metadata.Namespace = "default"
		}
	}
	return m, nil
}

// controllerGroupVersion is the API version an owner reference must name for kube-scheduler
// to look the controller up.
var controllerGroupVersion = map[string]string{"ReplicationController": "v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1"}

// SpreadSelector returns the selector kube-scheduler's default topology spread uses for the
// pod: the selectors of the Services in its namespace that select it, merged, plus its
// controller's selector. It is nil when no such object selects the pod.
func (m *Manifests) SpreadSelector(p *Pod) (*sim.LabelSelector, error) {
	ns := p.Metadata.Namespace
	if ns == "" {
		ns = "default"
	}
	out := &sim.LabelSelector{}
	for _, svc := range m.Services {
		// A Service without a selector selects nothing, not everything.
		if svc.Metadata.Namespace != ns || svc.Spec.Selector == nil {
			continue
		}
		if (&sim.LabelSelector{MatchLabels: svc.Spec.Selector}).Matches(p.Metadata.Labels) {
			if out.MatchLabels == nil {
				out.MatchLabels = map[string]string{}
			}
			for k, v := range svc.Spec.Selector {
				out.MatchLabels[k] = v
			}
		}
	}
	for _, o := range p.Metadata.OwnerReferences {
		if o.Controller == nil || !*o.Controller {
			continue
		}
		if o.APIVersion != controllerGroupVersion[o.Kind] {
			continue
		}
		for _, c := range m.Controllers {
			if c.Kind != o.Kind || c.Metadata.Name != o.Name || c.Metadata.Namespace != ns {
				continue
			}
			sel, err := selectorToSim(c.Selector, nil, nil, nil, fmt.Sprintf("%s %s: selector", c.Kind, c.Metadata.Name))
			if err != nil {
				return nil, err
			}
			if sel == nil {
				continue
			}
			if c.Kind == "ReplicationController" {
				// Its selector is a label set, merged as the Services' are.
				if out.MatchLabels == nil {
					out.MatchLabels = map[string]string{}
				}
				for k, v := range sel.MatchLabels {
					out.MatchLabels[k] = v
				}
				continue
			}
			// A ReplicaSet's or StatefulSet's selector adds its requirements.
			for k, v := range sel.MatchLabels {
				out.MatchExpressions = append(out.MatchExpressions, sim.NodeSelectorRequirement{Key: k, Operator: "In", Values: []string{v}})
			}
			out.MatchExpressions = append(out.MatchExpressions, sel.MatchExpressions...)
		}
	}
	if out.Empty() {
		return nil, nil
	}
	return out, nil
}

func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		// A separator line may carry a comment or trailing spaces; drop the rest of that line.
		if i := bytes.IndexByte(d, '\n'); i >= 0 && len(bytes.TrimSpace(d[:i])) > 0 && bytes.HasPrefix(bytes.TrimSpace(d[:i]), []byte("#")) {
			d = d[i:]
		}
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

package kube

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ReadPods reads Pod manifests from YAML or JSON: several documents separated by "---", or a
// List whose items are pods. Other kinds are an error naming the document.
func ReadPods(data []byte) ([]Pod, error) {
	var pods []Pod
	for i, doc := range splitDocuments(data) {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		switch head.Kind {
		case "Pod", "":
			// Not strict: real manifests carry fields (command, volumes, ...) that do not
			// matter to scheduling.
			var p Pod
			if err := yaml.Unmarshal(doc, &p); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			pods = append(pods, p)
		case "List", "PodList":
			var l struct {
				Items []Pod `json:"items"`
			}
			if err := yaml.Unmarshal(doc, &l); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			pods = append(pods, l.Items...)
		default:
			return nil, fmt.Errorf("document %d: kind %q is not a Pod; only Pod manifests (or a List of them) describe workload", i+1, head.Kind)
		}
	}
	return pods, nil
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

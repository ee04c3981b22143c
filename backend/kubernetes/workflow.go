package kubernetes

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// WorkflowGVR is Argo's Workflow resource.
var WorkflowGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}

// WorkflowState is how an Argo Workflow stands, as its controller wrote it.
type WorkflowState struct {
	Namespace, Name string
	// Phase is Argo's: Pending, Running, Succeeded, Failed or Error ("" before the controller
	// has seen the workflow).
	Phase   string
	Message string
	// Progress is Argo's "done/total" count of the workflow's pods.
	Progress string
}

// ReadWorkflow reads the Workflow an exported run became, with the kubeconfig (default: the
// usual loading rules) in namespace (default: the kubeconfig context's). It gives up after
// timeout: it is asked while printing a status, which must not hang on an unreachable cluster.
func ReadWorkflow(ctx context.Context, kubeconfig, namespace, name string, timeout time.Duration) (*WorkflowState, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil || namespace == "" {
			namespace = "default"
		}
	}
	rc.Timeout, rc.UserAgent = timeout, "jikken"
	dc, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, err := dc.Resource(WorkflowGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read workflow %s/%s: %w", namespace, name, err)
	}
	return workflowState(u), nil
}

func workflowState(u *unstructured.Unstructured) *WorkflowState {
	w := &WorkflowState{Namespace: u.GetNamespace(), Name: u.GetName()}
	w.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	w.Message, _, _ = unstructured.NestedString(u.Object, "status", "message")
	w.Progress, _, _ = unstructured.NestedString(u.Object, "status", "progress")
	return w
}

// argoExport is how the commands treat a run 'jikken export argo' wrote: Argo runs it, under
// the Workflow name the export recorded (WorkflowName of the run id before exports recorded it).
var argoExport = &runner.Export{
	Backend: "argo",
	Engine:  "Argo",
	Workflow: func(run string, recorded map[string]string) string {
		if n := recorded["workflow"]; n != "" {
			return n
		}
		return WorkflowName(run)
	},
	Show:   func(workflow string) string { return "argo get " + workflow },
	Manage: []string{"argo resubmit", "argo stop"},
	State: func(ctx context.Context, recorded map[string]string, workflow string) (runner.ExportState, error) {
		w, err := ReadWorkflow(ctx, os.Getenv("JIKKEN_K8S_KUBECONFIG"), recorded["namespace"], workflow, 5*time.Second)
		if err != nil {
			return runner.ExportState{}, err
		}
		return w.exportState(), nil
	},
}

// exportState is the run's status and note as Argo's phase, progress and message say.
func (w *WorkflowState) exportState() runner.ExportState {
	var s runner.ExportState
	switch w.Phase {
	case "Succeeded":
		s.Status = store.Succeeded
	case "Failed", "Error":
		s.Status = store.Failed
	}
	phase := w.Phase
	if phase == "" {
		phase = "not yet seen by its controller"
	}
	s.Note = fmt.Sprintf("Argo workflow %s/%s: %s", w.Namespace, w.Name, phase)
	if w.Progress != "" {
		s.Note += ", " + w.Progress + " pods"
	}
	if w.Message != "" {
		s.Note += ": " + w.Message
	}
	return s
}

package kubernetes

import (
	"testing"

	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// TestArgoExportIsDeclaredOnTheDescriptor: the commands find the Argo export by the backend name
// its runs record, name its Workflow as the export did, and read Argo's phase as the run's end.
func TestArgoExportIsDeclaredOnTheDescriptor(t *testing.T) {
	x := runner.ExportOf("argo")
	if x != argoExport {
		t.Fatal(`ExportOf("argo") is not the kubernetes backend's Argo export`)
	}
	if runner.ExportOf("kubernetes") != nil {
		t.Error("a kubernetes run counts as exported")
	}
	if got := x.Workflow("20261128-120000-sweep-ab12", nil); got != "20261128-120000-sweep-ab12" {
		t.Errorf("workflow of a run that recorded none: %q", got)
	}
	if got := x.Workflow("r", map[string]string{"workflow": "wf-1"}); got != "wf-1" {
		t.Errorf("workflow of a run that recorded wf-1: %q", got)
	}
	for _, c := range []struct {
		w    WorkflowState
		want runner.ExportState
	}{
		{WorkflowState{Namespace: "ns", Name: "wf"}, runner.ExportState{Note: "Argo workflow ns/wf: not yet seen by its controller"}},
		{WorkflowState{Namespace: "ns", Name: "wf", Phase: "Running", Progress: "3/8"}, runner.ExportState{Note: "Argo workflow ns/wf: Running, 3/8 pods"}},
		{WorkflowState{Namespace: "ns", Name: "wf", Phase: "Succeeded", Progress: "8/8"}, runner.ExportState{Status: store.Succeeded, Note: "Argo workflow ns/wf: Succeeded, 8/8 pods"}},
		{WorkflowState{Namespace: "ns", Name: "wf", Phase: "Error", Message: "child failed"}, runner.ExportState{Status: store.Failed, Note: "Argo workflow ns/wf: Error: child failed"}},
	} {
		if got := c.w.exportState(); got != c.want {
			t.Errorf("%+v: got %+v, want %+v", c.w, got, c.want)
		}
	}
}

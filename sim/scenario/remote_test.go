package scenario

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/remote"
)

// The scenario wires a remote scheduler and a remote submitter by URL; here both are one
// test server that submits two pods and binds every pending pod to gpu-0.
func TestRemoteProfileFromScenario(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/step", func(w http.ResponseWriter, r *http.Request) {
		var req remote.StepRequest
		json.NewDecoder(r.Body).Decode(&req)
		out := remote.StepResponse{Pods: []remote.SubmitPod{}}
		if req.Time == 0 {
			out.Pods = append(out.Pods, remote.SubmitPod{Name: "a", User: "py", Duration: 10, GPU: "1"},
				remote.SubmitPod{Name: "b", User: "py", Duration: 10, GPU: "1"})
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/schedule", func(w http.ResponseWriter, r *http.Request) {
		var req remote.ScheduleRequest
		json.NewDecoder(r.Body).Decode(&req)
		var out remote.ScheduleResponse
		for _, p := range req.Pending {
			out.Bindings = append(out.Bindings, remote.Binding{Pod: p.UID, Node: "gpu-0"})
		}
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	sc := mustParse(t, `
cluster: {nodeGroups: [{name: gpu, count: 2, capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2"}}]}
workload: [{remote: {url: "`+srv.URL+`"}}]
scheduler: {profile: remote, remote: {url: "`+srv.URL+`"}}
`)
	s, c := runScenario(t, sc, Options{})
	if s.Succeeded != 2 {
		t.Fatalf("summary %+v", s)
	}
	for _, p := range c.Pods() {
		if p.LastNode != "gpu-0" || p.FirstStart != 0 || p.Phase != sim.Succeeded {
			t.Errorf("pod %s: %s at %v, %v", p.Name, p.LastNode, p.FirstStart, p.Phase)
		}
	}
	bad := mustParse(t, `
cluster: {nodeGroups: [{name: gpu, count: 1, capacity: {cpu: "8"}}]}
workload: [{remote: {url: "ftp://x"}}]
scheduler: {profile: remote}
`)
	if _, err := Build(bad, Options{}); err == nil {
		t.Error("a remote profile without a URL built")
	}
}

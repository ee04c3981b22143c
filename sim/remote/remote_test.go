package remote_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/remote"
)

// A remote submitter sends three 1-GPU pods at t=0; a remote FIFO scheduler binds the oldest
// pending pod to the first node with a free GPU. Both talk plain JSON, as a Python service would.
func TestRemoteSchedulerAndSubmitter(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/step", func(w http.ResponseWriter, r *http.Request) {
		var req remote.StepRequest
		json.NewDecoder(r.Body).Decode(&req)
		pods := []map[string]any{}
		if req.Time == 0 {
			for _, n := range []string{"a", "b", "c"} {
				pods = append(pods, map[string]any{"name": n, "user": "py", "duration_s": 100, "gpu": "1"})
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"pods": pods, "next_s": nil})
	})
	mux.HandleFunc("/schedule", func(w http.ResponseWriter, r *http.Request) {
		var req remote.ScheduleRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		free := map[string]int{}
		for _, n := range req.Nodes {
			c, _ := sim.ParseQuantity(n.Capacity[sim.GPU])
			a, _ := sim.ParseQuantity(n.Allocated[sim.GPU])
			free[n.Name] = int((c - a) / sim.Milli)
		}
		var out remote.ScheduleResponse
		for _, p := range req.Pending {
			for _, n := range req.Nodes {
				if free[n.Name] >= 1 {
					free[n.Name]--
					out.Bindings = append(out.Bindings, remote.Binding{Pod: p.UID, Node: n.Name})
					break
				}
			}
		}
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	names := sim.NewNames()
	sched, err := remote.NewScheduler(srv.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := remote.NewSubmitter(srv.URL, 0, names)
	if err != nil {
		t.Fatal(err)
	}
	var capacity sim.Resources
	capacity[sim.GPUIndex], capacity[sim.PodsIndex] = 2*sim.Milli, 110*sim.Milli
	e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{{Name: "n0", Capacity: capacity}}, Scheduler: sched,
		Submitters: []sim.Submitter{sub}, Rand: sim.NewRand(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	want := map[string]sim.Time{"a": 0, "b": 0, "c": 100 * sim.Second}
	for _, p := range e.Cluster().Pods() {
		if p.FirstStart != want[p.Name] || p.Phase != sim.Succeeded {
			t.Errorf("pod %s started %v (%v), want %v", p.Name, p.FirstStart, p.Phase, want[p.Name])
		}
	}
}

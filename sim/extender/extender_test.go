package extender_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/extender"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// fakeExtender is a real HTTP server speaking the extender protocol: filter keeps nodes
// labelled zone=b, prioritize prefers n3, bind records the bindings. It decodes the raw JSON
// with upstream field names to check the wire format, not just our own structs.
type fakeExtender struct {
	mu       sync.Mutex
	bindings []string
	calls    map[string]int
	cache    bool
}

func (f *fakeExtender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[r.URL.Path]++
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/filter", "/prioritize":
		var pod struct {
			Metadata struct{ Name string }
			Spec     struct {
				Containers []struct {
					Resources struct{ Requests map[string]string }
				}
			}
		}
		if err := json.Unmarshal(raw["Pod"], &pod); err != nil || pod.Metadata.Name == "" {
			http.Error(w, "no Pod in request", http.StatusBadRequest)
			return
		}
		if pod.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] != "1" {
			http.Error(w, "pod does not request one GPU", http.StatusBadRequest)
			return
		}
		var names []string
		if f.cache {
			if err := json.Unmarshal(raw["NodeNames"], &names); err != nil {
				http.Error(w, "no NodeNames", http.StatusBadRequest)
				return
			}
			// Without node objects a cache-capable extender knows the labels itself.
			names = slices.DeleteFunc(names, func(n string) bool { return n == "n0" || n == "n1" })
		} else {
			var list struct {
				Items []struct {
					Metadata struct {
						Name   string
						Labels map[string]string
					}
				}
			}
			if err := json.Unmarshal(raw["Nodes"], &list); err != nil {
				http.Error(w, "no Nodes", http.StatusBadRequest)
				return
			}
			for _, it := range list.Items {
				if it.Metadata.Labels["zone"] == "b" {
					names = append(names, it.Metadata.Name)
				}
			}
		}
		if r.URL.Path == "/filter" {
			out := map[string]any{"FailedNodes": map[string]string{}}
			if f.cache {
				out["NodeNames"] = names
			} else {
				items := []map[string]any{}
				for _, n := range names {
					items = append(items, map[string]any{"metadata": map[string]any{"name": n}})
				}
				out["Nodes"] = map[string]any{"items": items}
			}
			json.NewEncoder(w).Encode(out)
			return
		}
		var prios []map[string]any
		for _, n := range names {
			s := 0
			if n == "n3" {
				s = 10
			}
			prios = append(prios, map[string]any{"Host": n, "Score": s})
		}
		json.NewEncoder(w).Encode(prios)
	case "/bind":
		var b struct{ PodName, PodNamespace, PodUID, Node string }
		body, _ := json.Marshal(raw)
		json.Unmarshal(body, &b)
		if b.PodUID == "" || b.PodNamespace == "" {
			http.Error(w, "bad binding", http.StatusBadRequest)
			return
		}
		f.bindings = append(f.bindings, b.PodName+"@"+b.Node)
		json.NewEncoder(w).Encode(map[string]string{"Error": ""})
	default:
		http.NotFound(w, r)
	}
}

func node(name, zone string) sim.NodeSpec {
	var r sim.Resources
	r[sim.CPUIndex], r[sim.MemoryIndex], r[sim.GPUIndex], r[sim.PodsIndex] = 32*sim.Milli, 128<<30*sim.Milli, 4*sim.Milli, 110*sim.Milli
	return sim.NodeSpec{Name: name, Capacity: r, Labels: map[string]string{"zone": zone}}
}

func TestExtenderOverHTTP(t *testing.T) {
	for _, cache := range []bool{false, true} {
		t.Run(map[bool]string{false: "nodes", true: "nodeNames"}[cache], func(t *testing.T) {
			fe := &fakeExtender{calls: map[string]int{}, cache: cache}
			srv := httptest.NewServer(fe)
			defer srv.Close()
			names := sim.NewNames()
			ext, err := extender.New(extender.Config{URLPrefix: srv.URL, FilterVerb: "filter", PrioritizeVerb: "prioritize",
				BindVerb: "bind", Weight: 5, NodeCacheCapable: cache}, names)
			if err != nil {
				t.Fatal(err)
			}
			p := scheduler.KubeDefault()
			p.Extenders = []scheduler.Extender{ext}
			fw, err := scheduler.New(p, names, sim.NewRand(1, 1))
			if err != nil {
				t.Fatal(err)
			}
			jobs := []submitter.Job{
				{Name: "a", User: "u", Duration: 10, GPU: sim.Milli, CPU: sim.Milli},
				{Name: "b", User: "u", Submit: 1, Duration: 10, GPU: sim.Milli, CPU: sim.Milli},
			}
			e, err := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{node("n0", "a"), node("n1", "a"), node("n2", "b"), node("n3", "b")},
				Scheduler: fw, Submitters: []sim.Submitter{submitter.NewTrace(jobs)}, Rand: sim.NewRand(1, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			// Both pods go to n3: only zone b passes the extender's filter, and its score of 10 x
			// weight 5 x 10 outweighs the default plugins' preference for the emptier n2.
			if got, want := strings.Join(fe.bindings, " "), "a@n3 b@n3"; got != want {
				t.Fatalf("bindings %q, want %q", got, want)
			}
			for _, p := range e.Cluster().Pods() {
				if p.LastNode != "n3" || p.Phase != sim.Succeeded {
					t.Errorf("pod %s: node %s phase %v", p.Name, p.LastNode, p.Phase)
				}
			}
			if fe.calls["/filter"] != 2 || fe.calls["/prioritize"] != 2 {
				t.Errorf("calls %v", fe.calls)
			}
		})
	}
}

func TestExtenderErrorsAbortUnlessIgnorable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, ignorable := range []bool{false, true} {
		names := sim.NewNames()
		ext, err := extender.New(extender.Config{URLPrefix: srv.URL, FilterVerb: "filter", Ignorable: ignorable}, names)
		if err != nil {
			t.Fatal(err)
		}
		p := scheduler.KubeDefault()
		p.Extenders = []scheduler.Extender{ext}
		fw, _ := scheduler.New(p, names, sim.NewRand(1, 1))
		e, _ := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{node("n0", "a"), node("n1", "b")}, Scheduler: fw,
			Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{{Name: "a", Duration: 1, GPU: sim.Milli}})}, Rand: sim.NewRand(1, 0)})
		err = e.Run()
		if ignorable && err != nil {
			t.Errorf("ignorable extender failure aborted the run: %v", err)
		}
		if !ignorable && (err == nil || !strings.Contains(err.Error(), "HTTP 500: boom")) {
			t.Errorf("error = %v, want the extender's HTTP 500", err)
		}
	}
}

// The preempt verb may veto candidate nodes: whichever node the extender keeps is where the
// high-priority pod ends up, and only that node's pod is evicted.
func TestExtenderPreemptVerb(t *testing.T) {
	for _, cache := range []bool{false, true} {
		for _, keep := range []string{"n0", "n1"} {
			var seen []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var args extender.PreemptionArgs
				if err := json.NewDecoder(r.Body).Decode(&args); err != nil || args.Pod == nil {
					http.Error(w, "bad preemption args", http.StatusBadRequest)
					return
				}
				out := map[string]*extender.MetaVictims{}
				if cache {
					for n, v := range args.NodeNameToMetaVictims {
						seen = append(seen, n)
						if n == keep {
							out[n] = v
						}
					}
				} else {
					for n, v := range args.NodeNameToVictims {
						seen = append(seen, n)
						if n == keep {
							mv := &extender.MetaVictims{}
							for _, p := range v.Pods {
								mv.Pods = append(mv.Pods, &extender.MetaPod{UID: p.Metadata.UID})
							}
							out[n] = mv
						}
					}
				}
				json.NewEncoder(w).Encode(extender.PreemptionResult{NodeNameToMetaVictims: out})
			}))
			names := sim.NewNames()
			ext, err := extender.New(extender.Config{URLPrefix: srv.URL, PreemptVerb: "preempt", NodeCacheCapable: cache}, names)
			if err != nil {
				t.Fatal(err)
			}
			p := scheduler.KubeDefault()
			p.Extenders = []scheduler.Extender{ext}
			fw, _ := scheduler.New(p, names, sim.NewRand(1, 1))
			jobs := []submitter.Job{
				{Name: "low0", Duration: 100, GPU: 4 * sim.Milli},
				{Name: "low1", Duration: 100, GPU: 4 * sim.Milli},
				{Name: "high", Submit: 10, Duration: 10, GPU: 4 * sim.Milli, Priority: 10},
			}
			e, _ := sim.New(sim.Config{Names: names, Nodes: []sim.NodeSpec{node("n0", "a"), node("n1", "a")}, Scheduler: fw,
				Submitters: []sim.Submitter{submitter.NewTrace(jobs)}, Rand: sim.NewRand(1, 0)})
			if err := e.Run(); err != nil {
				t.Fatal(err)
			}
			srv.Close()
			slices.Sort(seen)
			if strings.Join(seen, ",") != "n0,n1" {
				t.Errorf("cache=%v: extender saw candidates %v, want n0 and n1", cache, seen)
			}
			st := e.Cluster().Stats()
			if st.Preemptions != 1 {
				t.Errorf("cache=%v keep=%s: %d preemptions, want 1", cache, keep, st.Preemptions)
			}
			for _, p := range e.Cluster().Pods() {
				if p.Name == "high" && (p.LastNode != keep || p.FirstStart != 10*sim.Second) {
					t.Errorf("cache=%v: high ran on %s from %v, want %s from 10s", cache, p.LastNode, p.FirstStart, keep)
				}
			}
		}
	}
}

package scenario

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/metrics"
	"github.com/jikken-dev/jikken/sim/submitter"
)

func mustParse(t *testing.T, y string) *Scenario {
	t.Helper()
	sc, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runScenario(t *testing.T, sc *Scenario, o Options) (metrics.Summary, *sim.Cluster) {
	t.Helper()
	rec := &metrics.Recorder{}
	o.Observer = rec
	b, err := Build(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	s, err := metrics.Summarize(b.Engine.Cluster(), rec.Samples)
	if err != nil {
		t.Fatal(err)
	}
	return s, b.Engine.Cluster()
}

// randomScenario builds a mixed scenario: several node groups (one tainted), a Poisson
// generator with gangs and priorities, node failures and pod failures.
func randomScenario(seed uint64, profile string) string {
	r := rand.New(rand.NewPCG(seed, 99))
	return fmt.Sprintf(`
seed: %d
cluster:
  nodeGroups:
    - {name: a, count: %d, capacity: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "4"}}
    - {name: b, count: %d, capacity: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "8"}, labels: {kind: big}}
    - {name: c, count: 1, capacity: {cpu: "16", memory: 64Gi}, taints: [{key: cpu-only, effect: NoSchedule}]}
workload:
  - poisson:
      rate: %v
      count: %d
      shape:
        gpus: {choice: {values: [0, 1, 2, 4, 8, 12], weights: [1, 6, 2, 1, 0.5, 0.3]}}
        duration: {lognormal: {mu: 5, sigma: 1, max: 20000}}
        cpuPerGPU: 2
        memoryPerGPU: 8Gi
        cpu: 1
        memory: 1Gi
        maxGPUsPerPod: 4
        users: [u1, u2, u3]
        priority: %d
  - uniform: {min: 10, max: 200, count: 30, shape: {gpus: 1, duration: {exponential: {mean: 300}}, users: [u4], priority: 10}}
events:
  - {at: 500, type: nodeFail, node: a-0}
  - {at: 2000, type: nodeRecover, node: a-0}
  - {at: 800, type: nodeDrain, node: b-0}
  - {at: 1500, type: nodeUncordon, node: b-0}
  - {at: 1000, type: nodeAdd, group: b, name: b-extra}
failures:
  nodes: [{group: a, mtbf: 20000, mttr: 600}]
  pods: {probability: 0.05, maxRetries: 2, backoff: 5, maxBackoff: 60}
scheduler: {profile: %s, gangTimeout: %d, starveLimit: %d}
sample: 100
`, seed, 1+r.IntN(4), 1+r.IntN(3), 0.01+r.Float64()*0.1, 50+r.IntN(150), r.IntN(3), profile, r.IntN(2)*120, r.IntN(3))
}

type checker struct {
	t *testing.T
	c *sim.Cluster
}

func (k *checker) check() {
	t, c := k.t, k.c
	up := 0
	for _, n := range c.Nodes() {
		if n.Up && !n.Removed {
			up++
		}
	}
	if st := c.Status(); st.NodesUp != up {
		t.Fatalf("t=%v status counts %d nodes up, there are %d", c.Now(), st.NodesUp, up)
	}
	for _, n := range c.Nodes() {
		if !n.Allocated.Fits(&n.Capacity) {
			t.Fatalf("t=%v node %s over capacity: %v > %v", c.Now(), n.Name, n.Allocated, n.Capacity)
		}
		var sum sim.Resources
		for _, p := range n.Pods() {
			sum.Add(&p.Requests)
			if p.Phase != sim.Running && !p.Held() {
				t.Fatalf("t=%v pod %s on node %s is %v", c.Now(), p.Name, n.Name, p.Phase)
			}
		}
		if sum != n.Allocated {
			t.Fatalf("t=%v node %s allocation %v differs from its pods' sum %v", c.Now(), n.Name, n.Allocated, sum)
		}
		if len(n.Pods()) > 0 && !n.Up {
			t.Fatalf("t=%v failed node %s still runs pods", c.Now(), n.Name)
		}
	}
	for _, p := range c.Pods() {
		if p.FirstStart >= 0 && p.FirstStart < p.Submit {
			t.Fatalf("pod %s started at %v before its submission at %v", p.Name, p.FirstStart, p.Submit)
		}
	}
}

func TestInvariantsOnRandomScenarios(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		for _, profile := range Profiles() {
			t.Run(fmt.Sprintf("%s/%d", profile, seed), func(t *testing.T) {
				b, err := Build(mustParse(t, randomScenario(seed, profile)), Options{})
				if err != nil {
					t.Fatal(err)
				}
				e := b.Engine
				k := &checker{t: t, c: e.Cluster()}
				for !e.Done() {
					if err := e.Step(); err != nil {
						t.Fatal(err)
					}
					k.check()
				}
				c := e.Cluster()
				st := c.Stats()
				if len(c.Pods()) == 0 {
					t.Fatal("no pod was submitted")
				}
				if st.Submitted != len(c.Pods()) {
					t.Fatalf("submitted %d but %d pods recorded", st.Submitted, len(c.Pods()))
				}
				for _, p := range c.Pods() {
					if p.Phase != sim.Succeeded && p.Phase != sim.Failed {
						t.Errorf("pod %s ended the run %v", p.Name, p.Phase)
					}
					if p.Phase == sim.Succeeded && p.End-p.FirstStart < p.Duration {
						t.Errorf("pod %s ran %v, less than its duration %v", p.Name, p.End-p.FirstStart, p.Duration)
					}
				}
				if st.Finished != len(c.Pods()) {
					t.Errorf("finished %d of %d", st.Finished, len(c.Pods()))
				}
			})
		}
	}
}

func TestDeterminism(t *testing.T) {
	for _, profile := range []string{"kube-default", KubeFramework, "las", "drf"} {
		a, _ := runScenario(t, mustParse(t, randomScenario(3, profile)), Options{})
		b, _ := runScenario(t, mustParse(t, randomScenario(3, profile)), Options{})
		if a.DeterminismHash != b.DeterminismHash {
			t.Errorf("%s: same seed, different hashes %s and %s", profile, a.DeterminismHash, b.DeterminismHash)
		}
		c, _ := runScenario(t, mustParse(t, randomScenario(3, profile)), Options{Seed: 4})
		if c.DeterminismHash == a.DeterminismHash {
			t.Errorf("%s: different seeds gave the same hash", profile)
		}
	}
}

// The hosted default plugins are sim/scheduler's, so hosting them must not change a decision:
// on a philly workload (no priorities, so no preemption; no gangs), kube-framework places every pod
// where kube-default does, at the same time. Any difference comes from the host's own part:
// the scan order, the percentage of nodes scored, PreScore skips, weights, tie draws.
func TestHostedDefaultsMatchKubeDefault(t *testing.T) {
	// Nodes of 128 GPUs take philly's largest jobs whole: no gangs, which the hosted profile
	// would place member by member (it has no coscheduling plugin).
	scenario := func(profile string) *Scenario {
		return mustParse(t, fmt.Sprintf(`
seed: 42
cluster:
  nodeGroups:
    - {name: gpu, count: 120, capacity: {cpu: "1024", memory: 8Ti, nvidia.com/gpu: "128"}}
workload:
  - preset: {name: philly, jobs: 4000, load: 0.95}
scheduler: {profile: %s}
`, profile))
	}
	_, a := runScenario(t, scenario("kube-default"), Options{})
	_, b := runScenario(t, scenario(KubeFramework), Options{})
	diff := 0
	for i, p := range a.Pods() {
		q := b.Pods()[i]
		if p.LastNode != q.LastNode || p.FirstStart != q.FirstStart {
			if diff++; diff <= 3 {
				t.Errorf("pod %s: kube-default ran it on %s at %v, kube-framework on %s at %v", p.Name, p.LastNode, p.FirstStart, q.LastNode, q.FirstStart)
			}
		}
	}
	if diff > 0 || len(a.Pods()) != len(b.Pods()) {
		t.Errorf("%d of %d pods differ (%d vs %d pods)", diff, len(a.Pods()), len(a.Pods()), len(b.Pods()))
	}
}

// Switching the scheduler must not change the workload: submitters draw from their own streams.
func TestSameWorkloadAcrossProfiles(t *testing.T) {
	sc := mustParse(t, randomScenario(5, "fifo"))
	_, a := runScenario(t, sc, Options{})
	_, b := runScenario(t, sc, Options{Profile: "sjf"})
	if len(a.Pods()) != len(b.Pods()) {
		t.Fatalf("%d pods vs %d", len(a.Pods()), len(b.Pods()))
	}
	for i, p := range a.Pods() {
		q := b.Pods()[i]
		if p.Name != q.Name || p.Submit != q.Submit || p.Duration != q.Duration || p.Requests != q.Requests {
			t.Fatalf("pod %d differs: %+v vs %+v", i, p, q)
		}
	}
}

func TestBuildErrorsNameTheField(t *testing.T) {
	base := `
seed: 1
cluster:
  nodeGroups:
    - {name: g, count: 2, capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}}
workload:
  - poisson: {rate: 0.1, count: 5, shape: {gpus: 1, duration: 100}}
scheduler: {profile: kube-default}
`
	cases := []struct {
		name, from, to, want string
	}{
		{"negative capacity", `nvidia.com/gpu: "4"`, `nvidia.com/gpu: "-4"`, `cluster.nodeGroups[0].capacity: nvidia.com/gpu: quantity "-4" is negative`},
		{"unknown plugin", `{profile: kube-default}`, `{profile: kube-default, plugins: {filter: [NodeResourcesFit, GPUTopology]}}`, `scheduler.plugins: filter plugin "GPUTopology" is unknown`},
		{"unknown profile", `{profile: kube-default}`, `{profile: lottery}`, `scheduler.profile: "lottery" is unknown`},
		{"never fits", `gpus: 1,`, `gpus: 6,`, `workload[0].poisson.shape: the largest pod of this workload`},
		{"unknown field", `count: 2,`, `count: 2, cpus: 3,`, `unknown field "cpus"`},
		{"bad event node", `scheduler:`, "events: [{at: 10, type: nodeFail, node: nope}]\nscheduler:", `events[0].node: no node named "nope"`},
		{"bad event type", `scheduler:`, "events: [{at: 10, type: explode, node: g-0}]\nscheduler:", `events[0].type: "explode" is unknown`},
		{"bad placement", `{profile: kube-default}`, `{profile: fifo, placement: random}`, `scheduler.placement: placement "random" is unknown`},
		{"bad weight", `{profile: kube-default}`, `{profile: kube-default, plugins: {score: [{name: NodeResourcesFit, weight: -1}]}}`, `weight -1 is negative`},
		{"misspelt plugin args", `{profile: kube-default}`, `{profile: kube-default, pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resource: [{name: cpu}]}}]}`, `scheduler.pluginConfig[0].args: json: unknown field "resource"`},
		{"two scoring strategies", `{profile: kube-default}`, `{profile: kube-default, scoringStrategy: {type: MostAllocated}, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: LeastAllocated}}}]}`, `scoringStrategy is set both here and under scheduler.scoringStrategy`},
		{"args for an argless plugin", `{profile: kube-default}`, `{profile: kube-default, pluginConfig: [{name: TaintToleration, args: {}}]}`, `"TaintToleration" is not a custom plugin of this program (custom plugins: none), nor NodeResourcesFit`},
		{"plugin args twice", `{profile: kube-default}`, `{profile: kube-default, pluginConfig: [{name: NodeResourcesFit}, {name: NodeResourcesFit}]}`, `scheduler.pluginConfig[1]: plugin "NodeResourcesFit" is configured twice`},
		{"framework point in kube-default", `{profile: kube-default}`, `{profile: kube-default, plugins: {permit: [Pair]}}`, `permit, preBind, postBind and multiPoint are extension points of kube-scheduler framework plugins; use profile kube-framework`},
		{"hosted unknown plugin", `{profile: kube-default}`, `{profile: kube-framework, plugins: {multiPoint: [{name: GPUClass}]}}`, `scheduler.plugins: multiPoint plugin "GPUClass" is unknown; known framework plugins: DefaultBinder, NodeAffinity, NodeResourcesBalancedAllocation, NodeResourcesFit, NodeUnschedulable, PrioritySort, TaintToleration (a plugin of your own joins a jikken built with it: cmd/jikken/app.WithFrameworkPlugin)`},
		{"hosted wrong point", `{profile: kube-default}`, `{profile: kube-framework, plugins: {permit: [NodeAffinity]}}`, `plugin "NodeAffinity" does not implement the permit extension point`},
		{"hosted args unused", `{profile: kube-default}`, `{profile: kube-framework, plugins: {score: []}, pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu}]}}]}`, `pluginConfig names "NodeResourcesBalancedAllocation", which no extension point uses`},
		{"hosted misspelt args", `{profile: kube-default}`, `{profile: kube-framework, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {kind: MostAllocated}}}]}`, `plugin NodeResourcesFit: args: json: unknown field "kind"`},
		{"hosted extenders", `{profile: kube-default}`, `{profile: kube-framework, extenders: [{urlPrefix: "http://x"}]}`, `scheduler.extenders: the kube-framework profile has no extenders`},
		{"two sources", `- poisson:`, `- preset: {name: gavel, jobs: 3}
    poisson:`, `workload[0]: set exactly one of`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(base, c.from, c.to, 1)
			if y == base {
				t.Fatalf("replacement %q not found", c.from)
			}
			sc, err := Parse([]byte(y))
			if err == nil {
				_, err = Build(sc, Options{})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// buildTrace builds a one-node fifo scenario replaying a CSV trace and returns the trace's
// path and the error.
func buildTrace(t *testing.T, trace string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.csv")
	os.WriteFile(path, []byte(trace), 0o644)
	sc := mustParse(t, `
cluster: {nodeGroups: [{name: g, count: 1, capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}]}
workload: [{trace: {path: jobs.csv}}]
scheduler: {profile: fifo}
`)
	sc.Dir = dir
	_, err := Build(sc, Options{})
	return path, err
}

func TestTraceNeverFits(t *testing.T) {
	_, err := buildTrace(t, "name,user,submit_s,duration_s,cpu,memory,gpu\nbig,u,0,10,1,1Gi,16\n")
	if err == nil || !strings.Contains(err.Error(), "workload[0].trace: pod big") || !strings.Contains(err.Error(), "fits on no node group") {
		t.Fatalf("error = %v", err)
	}
}

func TestTraceErrorsNameFileAndLine(t *testing.T) {
	path, err := buildTrace(t, "name,user,submit_s,duration_s,cpu,memory,gpu\na,u,0,10,1,1Gi,1\nb,u,0,10,1\n")
	want := "workload[0].trace: " + path + ":3: 5 fields, but the header names 7 columns"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error = %v, want it to start with %q", err, want)
	}
}

func TestManifestNeverAdmissible(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pods.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: picky, annotations: {sim.jikken.dev/duration: "60"}}
spec:
  nodeSelector: {zone: mars}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
`), 0o644)
	sc := mustParse(t, `
cluster: {nodeGroups: [{name: g, count: 1, capacity: {cpu: "8", memory: 32Gi}, labels: {zone: earth}}]}
workload: [{trace: {path: pods.yaml}}]
scheduler: {profile: kube-default}
`)
	sc.Dir = dir
	_, err := Build(sc, Options{})
	if err == nil || !strings.Contains(err.Error(), "workload[0].trace: pod picky fits no node group once its node selector") {
		t.Fatalf("error = %v", err)
	}
}

// Every example scenario must build, and the small ones must run: the docs point at them.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/sim/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Build(sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b.Total > 6000 {
				t.Skip("too large for a unit test; see bench/sim")
			}
			if len(sc.Scheduler.Extenders) > 0 || sc.Scheduler.Remote != nil {
				t.Skip("needs a running extender or remote service")
			}
			if err := b.Engine.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Generating a scenario's jobs and replaying them as a trace must reproduce the run exactly.
func TestJobsReplayReproducesRun(t *testing.T) {
	y := `
seed: 9
cluster:
  nodeGroups: [{name: g, count: 4, capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}]
workload:
  - preset: {name: philly, jobs: 300, load: 1.2}
  - poisson: {rate: 0.01, count: 40, shape: {gpus: {choice: {values: [1, 2]}}, duration: {exponential: {mean: 900}}, users: [x]}}
scheduler: {profile: kube-default}
`
	direct, _ := runScenario(t, mustParse(t, y), Options{})
	jobs, err := Jobs(mustParse(t, y), 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, _ := os.Create(filepath.Join(dir, "jobs.csv"))
	if err := submitter.WriteCSV(f, jobs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	replay := mustParse(t, strings.Split(y, "workload:")[0]+
		"workload: [{trace: {path: jobs.csv}}]\nscheduler: {profile: kube-default}\n")
	replay.Dir = dir
	again, _ := runScenario(t, replay, Options{})
	if direct.DeterminismHash != again.DeterminismHash {
		t.Fatalf("replayed trace differs from the direct run: %+v\nvs\n%+v", direct, again)
	}
}

// Scenarios are YAML 1.2: n, yes and on stay strings (YAML 1.1 made them booleans, so a
// scenario named n was called false), 010 is ten, dates stay text.
func TestYAML12(t *testing.T) {
	sc := mustParse(t, `
name: n
seed: 010
cluster:
  nodeGroups:
    - {name: on, count: 1, capacity: {cpu: "8", memory: 32Gi}, labels: {zone: no, since: 2001-12-14}}
workload:
  - poisson: {name: yes, rate: 0.1, count: 5, shape: {duration: 100}}
scheduler: {profile: fifo}
`)
	g := sc.Cluster.NodeGroups[0]
	if sc.Name != "n" || sc.Seed != 10 || g.Name != "on" || g.Labels["zone"] != "no" || g.Labels["since"] != "2001-12-14" || sc.Workload[0].Poisson.Name != "yes" {
		t.Fatalf("parsed %+v, group %+v", sc, g)
	}
	for _, c := range []struct{ y, want string }{
		{"name: a\nname: b\n", `line 2: key "name" appears twice`},
		{"seed: .inf\n", `line 1: ".inf" is not a finite number`},
		{"cluster: {nodeGroups: [{name: g, count: 1e18}]}\n", "cannot unmarshal number 1e+18"},
		{"seed: [1\n", "did not find expected"},
	} {
		if _, err := Parse([]byte(c.y)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.y, err, c.want)
		}
	}
}

// A workload or a sampling rate that could not fit in memory is refused before anything runs,
// with the estimate; a cap of -1 lifts the check.
func TestMemoryEstimateRefusesHugeRuns(t *testing.T) {
	base := `
cluster: {nodeGroups: [{name: g, count: 2, capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "8"}}]}
workload: [{poisson: {rate: 1, count: COUNT, shape: {gpus: 1, duration: 100}}}]
scheduler: {profile: fifo}
sample: SAMPLE
`
	for _, c := range []struct{ count, sample, want string }{
		{"1000000000000", "60", "(1e+12 pods, 1.67e+10 time-series samples), over the cap of 4.0 GiB"},
		{"1000", "1us", "(1e+03 pods, 1e+09 time-series samples), over the cap of 4.0 GiB"},
	} {
		y := strings.NewReplacer("COUNT", c.count, "SAMPLE", c.sample).Replace(base)
		_, err := Build(mustParse(t, y), Options{})
		var me *MemoryError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("count %s, sample %s: error %v, want a MemoryError containing %q", c.count, c.sample, err, c.want)
		}
		if _, err := Build(mustParse(t, y), Options{MaxMemory: -1}); err != nil {
			t.Errorf("count %s, sample %s, no cap: %v", c.count, c.sample, err)
		}
	}
	if err := (Budget{Cap: 1 << 20}).Check(100, 10); err != nil {
		t.Errorf("small run refused: %v", err)
	}
	if err := (Budget{Cap: 1 << 20}).Check(1000, 10); err == nil {
		t.Error("1,000 pods fit in 1 MiB")
	}
}

// gittins learns the service distribution from the workload without using up its jobs.
func TestGittinsLearnsFromTheWorkload(t *testing.T) {
	y := randomScenario(2, "fifo")
	a, _ := runScenario(t, mustParse(t, y), Options{})
	g, _ := runScenario(t, mustParse(t, y), Options{Profile: "gittins"})
	if a.Pods == 0 || g.Pods != a.Pods || g.Jobs != a.Jobs || g.JobsUnfinished != 0 {
		t.Fatalf("fifo ran %d pods (%d jobs), gittins %d (%d, %d unfinished)", a.Pods, a.Jobs, g.Pods, g.Jobs, g.JobsUnfinished)
	}
}

// NodeResourcesFit and NodeResourcesBalancedAllocation take their args as in a
// KubeSchedulerConfiguration: the same strategy through pluginConfig or scoringStrategy gives
// the same run, and BalancedAllocation's resource list is its own.
func TestStockPluginArgs(t *testing.T) {
	base := `
seed: 1
cluster:
  nodeGroups:
    - {name: g, count: 3, capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}}
workload:
  - poisson: {rate: 0.1, count: 40, shape: {gpus: 1, duration: 100}}
scheduler:
  profile: kube-default
`
	run := func(extra string) string {
		t.Helper()
		sc, err := Parse([]byte(base + extra))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Build(sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Engine.Run(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, p := range b.Engine.Cluster().Pods() {
			out.WriteString(p.LastNode + " ")
		}
		return out.String()
	}
	viaStrategy := run("  scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu}]}\n")
	viaArgs := run("  pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu}]}}}]\n")
	if viaStrategy != viaArgs {
		t.Errorf("scoringStrategy and NodeResourcesFit args differ:\n%s\n%s", viaStrategy, viaArgs)
	}
	if spread := run(""); spread == viaArgs {
		t.Errorf("MostAllocated through pluginConfig placed as LeastAllocated: %s", spread)
	}
	sc, err := Parse([]byte(base + "  pluginConfig: [{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu}, {name: nvidia.com/gpu}]}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(sc, Options{}); err != nil {
		t.Errorf("BalancedAllocation args: %v", err)
	}
}

// The placement example's constraints hold in the run: replicas with anti-affinity on three
// distinct nodes, and the database two per zone.
func TestPlacementExample(t *testing.T) {
	sc, err := Load("../../examples/sim/placement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, c := runScenario(t, sc, Options{})
	serve, zones := map[string]bool{}, map[string]int{}
	for _, p := range c.Pods() {
		if p.Phase != sim.Succeeded {
			t.Fatalf("%s is %s", p.Name, p.Phase)
		}
		switch p.Labels["app"] {
		case "serve":
			if serve[p.LastNode] {
				t.Errorf("two replicas on %s", p.LastNode)
			}
			serve[p.LastNode] = true
		case "db":
			zones[c.Node(p.LastNode).Labels["topology.kubernetes.io/zone"]]++
		}
	}
	if len(serve) != 3 || zones["a"] != 2 || zones["b"] != 2 {
		t.Errorf("replicas on %v, database members per zone %v; want 3 nodes and 2 per zone", serve, zones)
	}
}

// Nodes carry their names as kubernetes.io/hostname, so a pod pinned to one is admissible.
func TestManifestPinnedToHost(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pods.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: pinned, annotations: {sim.jikken.dev/duration: "60"}}
spec:
  nodeSelector: {kubernetes.io/hostname: g-1}
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
`), 0o644)
	sc := mustParse(t, `
cluster: {nodeGroups: [{name: g, count: 2, capacity: {cpu: "8", memory: 32Gi}}]}
workload: [{trace: {path: pods.yaml}}]
scheduler: {profile: kube-default}
`)
	sc.Dir = dir
	_, c := runScenario(t, sc, Options{})
	if p := c.Pods()[0]; p.Phase != sim.Succeeded || p.LastNode != "g-1" {
		t.Errorf("pinned pod %s on %q, want Succeeded on g-1", p.Phase, p.LastNode)
	}
	sc.Cluster.NodeGroups[0].Count = 1
	if _, err := Build(sc, Options{}); err == nil || !strings.Contains(err.Error(), "pod pinned fits no node group") {
		t.Errorf("pinned to a missing host: %v", err)
	}
}

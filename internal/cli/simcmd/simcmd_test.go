package simcmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/metrics"
	"github.com/jikken-dev/jikken/sim/scenario"
)

func TestRunWritesResults(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	dir := t.TempDir()
	o := &runOptions{f: &cmdutil.Factory{IO: ios}, scenario: "../../../examples/sim/small.yaml", dir: dir, format: "json", timeline: "csv"}
	if err := runRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var s metrics.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Makespan != 200 || s.Wait.Mean != 33.3333 || s.Succeeded != 3 {
		t.Fatalf("summary %+v", s)
	}
	for _, f := range []string{"summary.json", "pods.csv", "timeline.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestCompareProfiles(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	o := &compareOptions{f: &cmdutil.Factory{IO: ios}, files: []string{"../../../examples/sim/small.yaml"}, profiles: []string{"fifo", "kube-default"}, format: "text"}
	if err := runCompare(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[0], "fifo") || !strings.Contains(lines[0], "kube-default") {
		t.Fatalf("header %q", lines[0])
	}
	if !strings.Contains(out.String(), "wait_mean_s") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// cancelAt cancels a context at the sample of simulated time 10 s and counts the samples
// that follow.
type cancelAt struct {
	cancel context.CancelFunc
	after  int
	seen   bool
}

func (c *cancelAt) Sampled(s *sim.Sample) {
	if c.seen {
		c.after++
	}
	if s.Time == 10*sim.Second {
		c.seen = true
		c.cancel()
	}
}
func (c *cancelAt) PodDone(*sim.Pod) {}

// An interrupt stops the run after the step under way, not thousands of steps later.
func TestInterruptStopsAfterTheCurrentStep(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	sc, err := scenario.Parse([]byte(`
cluster: {nodeGroups: [{name: g, count: 1, capacity: {cpu: "64", memory: 64Gi, nvidia.com/gpu: "8"}}]}
workload: [{uniform: {min: 1, max: 1, count: 20000, shape: {gpus: 1, duration: 5}}}]
scheduler: {profile: fifo}
sample: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &cancelAt{cancel: cancel}
	_, err = simulate(ctx, &cmdutil.Factory{IO: ios}, sc, scenario.Options{Observer: obs}, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if obs.after > 2 {
		t.Fatalf("%d samples (one per simulated second) were taken after the interrupt", obs.after)
	}
}

// The estimate errs low (runs outlast their last arrival); the budget stops a run whose
// samples outgrow the cap while it goes, and says which flag raises it.
func TestBudgetStopsARunThatOutgrowsTheCap(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	sc, err := scenario.Parse([]byte(`
cluster: {nodeGroups: [{name: g, count: 1, capacity: {cpu: "64", memory: 64Gi, nvidia.com/gpu: "8"}}]}
workload: [{uniform: {min: 1, max: 1, count: 100, shape: {gpus: 1, duration: 100000}}}]
scheduler: {profile: fifo}
sample: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = simulate(context.Background(), &cmdutil.Factory{IO: ios}, sc, scenario.Options{MaxMemory: 1 << 20}, false)
	var me *scenario.MemoryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "over the cap of 1.0 MiB") || !strings.HasSuffix(err.Error(), "with --max-memory") {
		t.Fatalf("error = %v", err)
	}
}

// run hashes pods.csv as it writes it; the hash must be the one Summarize computes for the
// same run, and the hidden profile flags must leave their files.
func TestRunHashMatchesSummarize(t *testing.T) {
	const file = "../../../examples/sim/philly-small.yaml"
	ios, _, out, _ := iostreams.Test()
	dir := t.TempDir()
	o := &runOptions{f: &cmdutil.Factory{IO: ios}, scenario: file, dir: dir, format: "json", timeline: "csv",
		cpuProfile: filepath.Join(dir, "cpu.prof"), memProfile: filepath.Join(dir, "mem.prof")}
	if err := runRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var got metrics.Summary
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := &metrics.Recorder{}
	b, err := scenario.Build(sc, scenario.Options{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	want, err := metrics.Summarize(b.Engine.Cluster(), rec.Samples)
	if err != nil {
		t.Fatal(err)
	}
	if got.DeterminismHash == "" || got.DeterminismHash != want.DeterminismHash {
		t.Fatalf("run's determinism hash %q, Summarize's %q", got.DeterminismHash, want.DeterminismHash)
	}
	for _, f := range []string{"cpu.prof", "mem.prof"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (size %v)", f, err, st)
		}
	}
}

package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/policy"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// runJobs runs a trace on two 4-GPU nodes under fifo.
func runJobs(t *testing.T, jobs []submitter.Job) *sim.Cluster {
	t.Helper()
	var nodes []sim.NodeSpec
	for _, name := range []string{"n0", "n1"} {
		var r sim.Resources
		r[sim.CPUIndex], r[sim.MemoryIndex], r[sim.GPUIndex], r[sim.PodsIndex] = 64*sim.Milli, 256<<30*sim.Milli, 4*sim.Milli, 110*sim.Milli
		nodes = append(nodes, sim.NodeSpec{Name: name, Capacity: r})
	}
	s, err := policy.New("fifo", policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Nodes: nodes, Scheduler: s, Rand: sim.NewRand(1, 0), Submitters: []sim.Submitter{submitter.NewTrace(jobs)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return e.Cluster()
}

// A gang is one job. a (4 GPUs, 100 s) runs first; gang g (two 4-GPU pods, 100 s) starts at
// 100 s, when both nodes are free; b (2 GPUs, 50 s) waits behind g (FIFO) and runs 200-250 s.
// Jobs: a 0-100 (JCT 100), g 0-200 (JCT 200), b 0-250 (JCT 250): mean 183.33. Pods: a 100,
// g-0 200, g-1 200, b 250: mean 187.5.
func TestJobsCountGangsOnce(t *testing.T) {
	trace := []submitter.Job{
		{Name: "a", User: "alice", Duration: 100, GPU: 4 * sim.Milli},
		{Name: "g-0", User: "bob", Duration: 100, GPU: 4 * sim.Milli, Gang: "g", GangSize: 2},
		{Name: "g-1", User: "bob", Duration: 100, GPU: 4 * sim.Milli, Gang: "g", GangSize: 2},
		{Name: "b", User: "alice", Duration: 50, GPU: 2 * sim.Milli},
	}
	c := runJobs(t, trace)
	s, err := Summarize(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Jobs != 3 || s.JobsSucceeded != 3 || s.Pods != 4 {
		t.Fatalf("%d jobs (%d succeeded), %d pods; want 3, 3, 4", s.Jobs, s.JobsSucceeded, s.Pods)
	}
	if s.JCT.Mean != 183.3333 || s.PodJCT.Mean != 187.5 {
		t.Errorf("mean JCT %v (jobs), %v (pods); want 183.3333 and 187.5", s.JCT.Mean, s.PodJCT.Mean)
	}
	if s.Wait.Mean != 100 || s.PodWait.Mean != 100 {
		t.Errorf("mean wait %v (jobs), %v (pods); want 100 and 100", s.Wait.Mean, s.PodWait.Mean)
	}
	if u := s.Users["bob"]; u.Jobs != 1 || u.JCT.Mean != 200 || u.GPUSeconds != 800 {
		t.Errorf("bob: %+v; want 1 job, JCT 200, 800 GPU-seconds", u)
	}
	if u := s.Users["alice"]; u.Jobs != 2 || u.Wait.Max != 200 || u.Slowdown.Mean != 3 {
		t.Errorf("alice: %+v; want 2 jobs, max wait 200, mean slowdown (1 + 5) / 2", u)
	}
	var buf bytes.Buffer
	if err := WriteJobs(&buf, Jobs(c.Pods())); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "jobs.golden")
	if *update {
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("jobs.csv differs from %s (run with -update to accept):\n%s", golden, buf.String())
	}
}

// Gang members submitted apart, with other pods between them, still form one job with its
// pods in submission order; each job's pods are a slice of their own, so appending to one
// job's pods leaves the next job's alone.
func TestJobsInterleavedGangMembers(t *testing.T) {
	trace := []submitter.Job{
		{Name: "g-0", User: "bob", Submit: 0, Duration: 100, GPU: 4 * sim.Milli, Gang: "g", GangSize: 2},
		{Name: "a", User: "alice", Submit: 1, Duration: 10, GPU: sim.Milli},
		{Name: "b", User: "alice", Submit: 2, Duration: 10, GPU: sim.Milli},
		{Name: "g-1", User: "bob", Submit: 3, Duration: 100, GPU: 4 * sim.Milli, Gang: "g", GangSize: 2},
	}
	c := runJobs(t, trace)
	jobs := Jobs(c.Pods())
	var got []string
	for _, j := range jobs {
		s := j.Name + ":"
		for _, p := range j.Pods {
			s += " " + p.Name
		}
		got = append(got, s)
	}
	want := []string{"g: g-0 g-1", "a: a", "b: b"}
	if len(got) != len(want) {
		t.Fatalf("jobs %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("jobs %q, want %q", got, want)
		}
	}
	k := 0
	for j := range EachJob(c.Pods()) {
		if j.Name != jobs[k].Name || len(j.Pods) != len(jobs[k].Pods) || j.JCT() != jobs[k].JCT() {
			t.Fatalf("EachJob's job %d is %s (%d pods, JCT %v); Jobs has %s (%d pods, JCT %v)",
				k, j.Name, len(j.Pods), j.JCT(), jobs[k].Name, len(jobs[k].Pods), jobs[k].JCT())
		}
		k++
	}
	if k != len(jobs) {
		t.Fatalf("EachJob yields %d jobs, Jobs %d", k, len(jobs))
	}
	_ = append(jobs[1].Pods, jobs[0].Pods[0])
	if jobs[2].Pods[0].Name != "b" {
		t.Fatalf("appending to a's pods changed b's to %s", jobs[2].Pods[0].Name)
	}
}

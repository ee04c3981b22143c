//go:build unix

package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// execEnv, when set in the environment of this test binary, makes it a trial's executor
// (jikken trial-exec) instead of running tests: the options are its JSON.
const execEnv = "JIKKEN_RUNNER_TEST_EXEC"

type execOptions struct {
	Store, Run, Trial, OutputDir, Script string
	Attempt                              int
	Env                                  []string
}

func TestMain(m *testing.M) {
	if v := os.Getenv(execEnv); v != "" {
		os.Exit(trialExec(v))
	}
	os.Exit(m.Run())
}

// trialExec runs a trial as jikken trial-exec runs it on a cluster's node: its outputs and its
// live points go to the store from here, not through the runner.
func trialExec(opts string) int {
	var o execOptions
	if err := json.Unmarshal([]byte(opts), &o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	blob, err := store.OpenFolder(o.Store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, err := executor.Run(context.Background(), executor.Options{
		Argv: []string{"/bin/sh", "-c", o.Script}, Env: append(os.Environ(), o.Env...),
		Store: blob, RunID: o.Run, Trial: o.Trial, Attempt: o.Attempt, OutputDir: o.OutputDir,
		LiveEvery: 20 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return res.ExitCode
}

// execBackend runs each attempt under an executor (this test binary, see TestMain) that stores
// its outputs and live points itself, as the Slurm backend with an S3 store and the
// Kubernetes backend do.
type execBackend struct {
	store string
}

func (b *execBackend) Name() string            { return "exec" }
func (b *execBackend) Plan([]experiment.Trial) {}
func (b *execBackend) Live(context.Context, string) ([]runner.LiveTrial, error) {
	return nil, nil
}
func (b *execBackend) StopLive(context.Context, runner.LiveTrial) error { return nil }

func (b *execBackend) Start(_ context.Context, a *runner.Attempt) (runner.Process, error) {
	o, err := json.Marshal(execOptions{Store: b.store, Run: a.RunID, Trial: a.Trial.Name, OutputDir: a.OutputDir,
		Script: a.Trial.Cmd.Shell, Attempt: a.N, Env: a.Env})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), execEnv+"="+string(o))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &execProc{cmd: cmd}, nil
}

type execProc struct{ cmd *exec.Cmd }

func (p *execProc) Handle() string      { return fmt.Sprint(p.cmd.Process.Pid) }
func (p *execProc) OutputsStored() bool { return true }

func (p *execProc) Stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	time.AfterFunc(grace, func() { _ = p.cmd.Process.Kill() })
	return nil
}

func (p *execProc) Wait() runner.Exit {
	err := p.cmd.Wait()
	if err != nil && p.cmd.ProcessState == nil {
		return runner.Exit{Code: -1, Err: err}
	}
	return runner.Exit{Code: p.cmd.ProcessState.ExitCode()}
}

// TestPruningReadsTheExecutorsLivePoints: on a backend whose executor stores a trial's outputs
// and live points itself (Slurm with an S3 store, Kubernetes), the runner reads those points back
// from the store, and a search's pruner stops trials there as it does on the local backend.
func TestPruningReadsTheExecutorsLivePoints(t *testing.T) {
	const script = `for s in 0 1 2 3 4 5 6 7; do printf '{"name":"loss","value":%s,"step":%d}\n' $(awk -v x={{x}} -v s=$s 'BEGIN{print x*x+8-s}') $s >> "$JIKKEN_OUTPUT_DIR/metrics.jsonl"; sleep 0.05; done`
	spec, err := json.Marshal(map[string]any{"search": map[string]any{
		"name": "p", "cmd": script, "space": map[string]any{"x": map[string]any{"low": -5, "high": 5}},
		"objective": "loss", "sampler": "random", "trials": 10, "parallel": 2, "seed": 3,
		"pruner": map[string]any{"name": "median", "options": map[string]any{"startup_trials": 2}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := experiment.Parse("test.json", spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("test", time.Now()), Trials: exp.Trials}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := runs.WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: &execBackend{store: storeDir}, Runs: runs, Jobs: 2, WorkRoot: filepath.Join(dir, "work"),
		Workdir: dir, StopGrace: time.Second, Search: exp.Search, LiveEvery: 20 * time.Millisecond}
	sum, err := r.Execute(ctx, m, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counts %+v", sum.Counts)
	if sum.Counts.Pruned == 0 || sum.Counts.Succeeded == 0 || sum.Counts.Pruned+sum.Counts.Succeeded != 10 {
		t.Fatalf("counts %+v: want 10 trials, some pruned from the points their executor stored, the rest succeeded", sum.Counts)
	}
	// The same search on the local backend, whose runner reads the trials' files itself, prunes
	// the same trials: the pruner is fed the same points, finished trials' curves whole.
	local, _, _ := run(t, string(spec), func(r *runner.Runner) { r.Search = exp.Search; r.LiveEvery = 20 * time.Millisecond })
	if got, want := statuses(sum), statuses(local); !maps.Equal(got, want) {
		t.Errorf("statuses %v, on the local backend %v: want the same", got, want)
	}
	for _, rec := range sum.Trials {
		if rec != nil && rec.Status == store.Pruned && (rec.PrunedAt < 1 || rec.Values["loss"] == 0) {
			t.Errorf("trial %s pruned at point %d on %v: want the points it was judged on", rec.Name, rec.PrunedAt, rec.Values)
		}
	}
}

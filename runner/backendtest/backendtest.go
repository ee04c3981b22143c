// Package backendtest is the conformance suite of runner.Backend: every backend (local, docker,
// kubernetes) runs it, so the runner can rely on one contract. A backend's test hands Run a
// Harness that says how to build a trial running a POSIX shell script there, and which parts
// of the contract the engine can show (a simulated cluster runs no process).
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// Harness adapts one backend to the suite.
type Harness struct {
	// New returns a backend. The suite calls it again to stand for a runner started after the
	// first one died: the new backend must find what the first one left running.
	New func(t *testing.T) runner.Backend
	// Trial returns a trial named name that runs script with /bin/sh on the backend (with the
	// usual tools: echo, printf, sleep, test, env, kill, cat, touch, mkdir, trap).
	Trial func(name, script string) experiment.Trial
	// Workdir is where a trial runs when it sets none (local backend); may be empty.
	Workdir string
	// Cannot lists what the engine cannot show; those checks are skipped with the reason.
	Cannot map[Capability]string
	// Registered is the backend's registered name (runner.Register): the suite then checks
	// that what it declares it can do (runner.Capabilities) it does, and runs the contract of
	// each declared capability. "": only the Backend contract is checked.
	Registered string
}

// Capability is a part of the contract a backend may be unable to show in a test.
type Capability string

// The capabilities the suite checks.
const (
	// Processes: the trial's script really runs (its output, files, environment and signals).
	Processes Capability = "processes"
	// Health: health checks declared by the trial run against it.
	Health Capability = "health"
)

// Run runs the suite against h's backend.
func Run(t *testing.T, h Harness) {
	s := &suite{h: h}
	t.Run("ExitCodes", s.exitCodes)
	t.Run("KilledBySignal", s.killedBySignal)
	t.Run("Logs", s.logs)
	t.Run("Outputs", s.outputs)
	t.Run("Env", s.env)
	t.Run("NoStoreCredentials", s.noStoreCredentials)
	t.Run("StopWithGrace", s.stopWithGrace)
	t.Run("StopKillsAfterGrace", s.stopKillsAfterGrace)
	t.Run("Health", s.health)
	t.Run("LiveAfterRunnerCrash", s.liveAfterCrash)
	t.Run("LiveMetrics", s.liveMetrics)
	if h.Registered != "" {
		t.Run("Declared", s.declared)
		t.Run("DeletesRun", s.deletesRun)
	}
}

// descriptor returns the backend's registration.
func (s *suite) descriptor(t *testing.T) runner.Descriptor {
	t.Helper()
	d, ok := runner.Lookup(s.h.Registered)
	if !ok {
		t.Fatalf("no backend %q is registered (runner.Register)", s.h.Registered)
	}
	return d
}

// declared checks that each capability the backend declares is implemented by the backend or
// its processes, and that what it implements is declared: a command reads the declaration, so
// an undeclared DeleteRun is never called and a declared one that is missing fails at rm.
func (s *suite) declared(t *testing.T) {
	d := s.descriptor(t)
	b := s.h.New(t)
	if b.Name() != d.Name {
		t.Errorf("the backend calls itself %q, registered as %q", b.Name(), d.Name)
	}
	_, adopts := b.(runner.Adopter)
	_, deletes := b.(runner.RunDeleter)
	_, limits := b.(runner.StartLimiter)
	for _, c := range []struct {
		what             string
		declared, actual bool
	}{{"Adopts (runner.Adopter)", d.Caps.Adopts, adopts}, {"DeletesRuns (runner.RunDeleter)", d.Caps.DeletesRuns, deletes},
		{"StartLimit (runner.StartLimiter)", d.Caps.StartLimit, limits}} {
		if c.declared != c.actual {
			t.Errorf("%s: declared %t, implemented %t", c.what, c.declared, c.actual)
		}
	}
	if d.Caps.DeletesRuns && d.Noun == "" {
		t.Errorf("DeletesRuns declared without the Noun 'jikken rm' counts")
	}
	if d.Settings != nil {
		if v := d.Settings(); v == nil {
			t.Errorf("Settings returned nil")
		}
	}
	_, p := s.start(t, b, s.h.Trial("declared", `exit 0`))
	inner := p.(*once).Process
	for _, c := range []struct {
		what     string
		declared bool
		ok       bool
	}{
		{"Notifies (runner.Notifier)", d.Caps.Notifies, is[runner.Notifier](inner)},
		{"StoresOutputs (runner.OutputStorer)", d.Caps.StoresOutputs, is[runner.OutputStorer](inner)},
		{"HealthChecks (runner.Healthier)", d.Caps.HealthChecks, is[runner.Healthier](inner)},
		{"ImageDigests (runner.ImageDigester)", d.Caps.ImageDigests, is[runner.ImageDigester](inner)},
	} {
		if c.declared && !c.ok {
			t.Errorf("%s declared, but the backend's processes do not implement it", c.what)
		}
	}
	wait(t, p, 2*time.Minute)
}

func is[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// deletesRun: a backend that declares DeletesRuns deletes what a run left running, says how
// many went, and nothing of another run.
func (s *suite) deletesRun(t *testing.T) {
	d := s.descriptor(t)
	if !d.Caps.DeletesRuns {
		t.Skipf("%s does not declare DeletesRuns", d.Name)
	}
	b := s.h.New(t)
	a, p := s.start(t, b, s.h.Trial("doomed", `sleep 300`))
	other, op := s.start(t, b, s.h.Trial("bystander", `sleep 300`))
	if _, ok := s.h.Cannot[Processes]; !ok {
		waitFor(t, func() bool { return alive(t, s.h.New(t), a.RunID) }, "the trial to be live")
	}
	n, err := s.h.New(t).(runner.RunDeleter).DeleteRun(context.Background(), a.RunID)
	if err != nil || n < 1 {
		t.Fatalf("DeleteRun = %d %s, %v; want 1 or more", n, d.Noun, err)
	}
	wait(t, p, 2*time.Minute)
	waitFor(t, func() bool { return !alive(t, b, a.RunID) }, "Live to list nothing after DeleteRun")
	if !alive(t, b, other.RunID) {
		t.Errorf("deleting run %s deleted run %s too", a.RunID, other.RunID)
	}
	_ = op.Stop(time.Second)
}

type suite struct{ h Harness }

func (s *suite) need(t *testing.T, caps ...Capability) {
	t.Helper()
	for _, c := range caps {
		if why, ok := s.h.Cannot[c]; ok {
			t.Skipf("the backend cannot show %s here: %s", c, why)
		}
	}
}

var seq int

// start starts attempt 1 of a trial running script on b, in a run of its own.
func (s *suite) start(t *testing.T, b runner.Backend, tr experiment.Trial) (*runner.Attempt, runner.Process) {
	t.Helper()
	seq++
	run := fmt.Sprintf("conformance-%d-%d", time.Now().UnixNano()%1_000_000_000, seq)
	a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), run, tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Workdir = s.h.Workdir
	if a.Workdir == "" {
		a.Workdir = t.TempDir()
	}
	started, err := b.Start(context.Background(), a)
	if err != nil {
		t.Fatalf("start %s: %v", tr.Name, err)
	}
	p := &once{Process: started}
	t.Cleanup(func() {
		// Whatever a failed check left running goes with the test.
		_ = p.Stop(time.Second)
		wait(t, p, time.Minute)
	})
	return a, p
}

// once calls the backend's Wait once, as the runner does, for the checks that wait for it
// and for the cleanup.
type once struct {
	runner.Process
	o    sync.Once
	exit runner.Exit
}

func (p *once) Wait() runner.Exit {
	p.o.Do(func() { p.exit = p.Process.Wait() })
	return p.exit
}

// wait waits for p to end, failing the test if it does not within limit.
func wait(t *testing.T, p runner.Process, limit time.Duration) runner.Exit {
	t.Helper()
	done := make(chan runner.Exit, 1)
	go func() { done <- p.Wait() }()
	select {
	case e := <-done:
		return e
	case <-time.After(limit):
		t.Fatalf("the attempt did not end within %s", limit)
	}
	return runner.Exit{}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", filepath.Base(path), err)
	}
	return string(b)
}

func (s *suite) exitCodes(t *testing.T) {
	b := s.h.New(t)
	for _, c := range []struct {
		script string
		code   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"true", 0}, {"false", 1}} {
		_, p := s.start(t, b, s.h.Trial("exit", c.script))
		if e := wait(t, p, 2*time.Minute); e.Err != nil || e.Code != c.code {
			t.Errorf("%q: exit %+v, want code %d", c.script, e, c.code)
		}
	}
}

func (s *suite) killedBySignal(t *testing.T) {
	s.need(t, Processes)
	b := s.h.New(t)
	// In a container the script may be PID 1, which its own namespace cannot kill: a child shell
	// kills itself and the script reports how it died.
	_, p := s.start(t, b, s.h.Trial("signal", "sh -c 'kill -KILL $$'; exit $?"))
	if e := wait(t, p, 2*time.Minute); e.Code == 0 || !strings.Contains(e.Reason, "signal") && e.Code != 137 {
		t.Errorf("killed by SIGKILL: exit %+v, want a signal reported (or code 137)", e)
	}
}

func (s *suite) logs(t *testing.T) {
	s.need(t, Processes)
	a, p := s.start(t, s.h.New(t), s.h.Trial("logs", `echo out-line; echo err-line >&2; printf 'no newline'`))
	if e := wait(t, p, 2*time.Minute); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	if got := read(t, a.StdoutPath); got != "out-line\nno newline" {
		t.Errorf("stdout = %q", got)
	}
	if got := read(t, a.StderrPath); got != "err-line\n" {
		t.Errorf("stderr = %q", got)
	}
}

func (s *suite) outputs(t *testing.T) {
	s.need(t, Processes)
	a, p := s.start(t, s.h.New(t), s.h.Trial("outputs",
		`mkdir -p "$JIKKEN_OUTPUT_DIR/sub/deeper" && echo '{"loss": 0.5}' > "$JIKKEN_OUTPUT_DIR/result.json" && echo deep > "$JIKKEN_OUTPUT_DIR/sub/deeper/x y.txt"`))
	if e := wait(t, p, 2*time.Minute); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	if got := read(t, filepath.Join(a.OutputDir, "result.json")); got != "{\"loss\": 0.5}\n" {
		t.Errorf("result.json = %q", got)
	}
	if got := read(t, filepath.Join(a.OutputDir, "sub", "deeper", "x y.txt")); got != "deep\n" {
		t.Errorf("sub/deeper/x y.txt = %q", got)
	}
}

func (s *suite) env(t *testing.T) {
	s.need(t, Processes)
	tr := s.h.Trial("env-check", `env | sort; cat "$JIKKEN_PARAMS"`)
	tr.Env = map[string]string{"MY_SETTING": "a b=c"}
	tr.Params = map[string]any{"lr": 0.5}
	seed := int64(7)
	tr.Seed = &seed
	a, p := s.start(t, s.h.New(t), tr)
	if e := wait(t, p, 2*time.Minute); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	out := read(t, a.StdoutPath)
	for _, want := range []string{"JIKKEN_RUN_ID=" + a.RunID, "JIKKEN_TRIAL=env-check", "JIKKEN_ATTEMPT=1", "JIKKEN_SEED=7",
		"JIKKEN_PARAM_LR=0.5", "MY_SETTING=a b=c", "JIKKEN_OUTPUT_DIR=", "JIKKEN_PARAMS=", `"lr": 0.5`, `"seed": 7`} {
		if !strings.Contains(out, want) {
			t.Errorf("the trial does not see %s:\n%s", want, out)
		}
	}
}

// noStoreCredentials: the runner's store credentials never reach a trial that did not ask.
func (s *suite) noStoreCredentials(t *testing.T) {
	s.need(t, Processes)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "conformance-secret")
	t.Setenv("AWS_ACCESS_KEY_ID", "conformance-key-id")
	t.Setenv("JIKKEN_S3_CONFIG", "conformance-config")
	a, p := s.start(t, s.h.New(t), s.h.Trial("secrets", `env`))
	if e := wait(t, p, 2*time.Minute); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	out := read(t, a.StdoutPath)
	for _, secret := range []string{"conformance-secret", "conformance-key-id", "conformance-config"} {
		if strings.Contains(out, secret) {
			t.Errorf("the trial sees the runner's store credentials (%s):\n%s", secret, out)
		}
	}
}

// stopWithGrace: Stop sends SIGTERM first; a trial that handles it ends as it chooses.
func (s *suite) stopWithGrace(t *testing.T) {
	s.need(t, Processes)
	a, p := s.start(t, s.h.New(t), s.h.Trial("graceful",
		`trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done`))
	waitFor(t, func() bool { b, _ := os.ReadFile(a.StdoutPath); return strings.Contains(string(b), "ready") }, "the trial to start")
	if err := p.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	e := wait(t, p, 2*time.Minute)
	if e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	if got := read(t, a.StdoutPath); !strings.Contains(got, "got-term") {
		t.Errorf("the trial did not get SIGTERM first: stdout %q, exit %+v", got, e)
	}
}

// stopKillsAfterGrace: a trial that ignores SIGTERM is killed once the grace period is over.
func (s *suite) stopKillsAfterGrace(t *testing.T) {
	s.need(t, Processes)
	a, p := s.start(t, s.h.New(t), s.h.Trial("stubborn",
		`trap '' TERM; echo ready; while true; do sleep 0.1; done`))
	waitFor(t, func() bool { b, _ := os.ReadFile(a.StdoutPath); return strings.Contains(string(b), "ready") }, "the trial to start")
	go func() { _ = p.Stop(time.Second) }()
	if e := wait(t, p, 2*time.Minute); e.Code == 0 && e.Err == nil {
		t.Errorf("a trial ignoring SIGTERM ended %+v after Stop", e)
	}
}

func (s *suite) health(t *testing.T) {
	s.need(t, Processes, Health)
	b := s.h.New(t)
	ctx := context.Background()

	tr := s.h.Trial("becomes-healthy", `sleep 0.5; touch "$JIKKEN_OUTPUT_DIR/ready"; sleep 60`)
	tr.Health = &experiment.Health{Cmd: experiment.Command{Shell: `test -f "$JIKKEN_OUTPUT_DIR/ready"`}, Interval: experiment.Duration(50 * time.Millisecond)}
	tr.Service = true
	_, p := s.start(t, b, tr)
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := healthier(t, p).WaitHealthy(hctx); err != nil {
		t.Errorf("WaitHealthy of a trial that becomes healthy: %v", err)
	}
	_ = p.Stop(time.Second)
	wait(t, p, time.Minute)

	// The deadline is the caller's: a check that never passes waits until ctx is done.
	tr = s.h.Trial("never-healthy", `sleep 60`)
	tr.Health = &experiment.Health{Cmd: experiment.Command{Shell: "false"}, Interval: experiment.Duration(50 * time.Millisecond)}
	tr.Service = true
	_, p = s.start(t, b, tr)
	hctx, cancel = context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := healthier(t, p).WaitHealthy(hctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitHealthy of a trial that never becomes healthy = %v, want the context's deadline", err)
	}
	_ = p.Stop(time.Second)
	wait(t, p, time.Minute)

	// An attempt that ends before it is healthy says so.
	tr = s.h.Trial("ends-first", `exit 2`)
	tr.Health = &experiment.Health{Cmd: experiment.Command{Shell: "false"}, Interval: experiment.Duration(50 * time.Millisecond)}
	tr.Service = true
	_, p = s.start(t, b, tr)
	go p.Wait()
	hctx, cancel = context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := healthier(t, p).WaitHealthy(hctx); !errors.Is(err, runner.ErrAttemptEnded) {
		t.Errorf("WaitHealthy of an attempt that ended = %v, want ErrAttemptEnded", err)
	}
}

func healthier(t *testing.T, p runner.Process) runner.Healthier {
	t.Helper()
	if o, ok := p.(*once); ok {
		p = o.Process
	}
	h, ok := p.(runner.Healthier)
	if !ok {
		t.Fatalf("the process (%T) has no health check", p)
	}
	return h
}

// liveAfterCrash: what a runner started is found, and stopped, by a backend made after that
// runner died, from the engine alone; other runs' attempts are left alone.
func (s *suite) liveAfterCrash(t *testing.T) {
	first := s.h.New(t)
	a, p := s.start(t, first, s.h.Trial("survivor", `sleep 300`))
	other, op := s.start(t, first, s.h.Trial("bystander", `sleep 300`))
	if _, ok := s.h.Cannot[Processes]; !ok {
		waitFor(t, func() bool { return alive(t, s.h.New(t), a.RunID) }, "the trial to be live")
	}
	next := s.h.New(t)
	ctx := context.Background()
	live, err := next.Live(ctx, a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Trial != "survivor" || live[0].Attempt != 1 || live[0].RunID != a.RunID || live[0].Handle == "" {
		t.Fatalf("Live(%s) = %+v, want the survivor's attempt 1", a.RunID, live)
	}
	if err := next.StopLive(ctx, live[0]); err != nil {
		t.Fatal(err)
	}
	wait(t, p, 2*time.Minute)
	waitFor(t, func() bool { return !alive(t, next, a.RunID) }, "Live to list nothing after StopLive")
	if err := next.StopLive(ctx, live[0]); err != nil {
		t.Errorf("StopLive of what is already gone: %v", err)
	}
	if !alive(t, next, other.RunID) {
		t.Errorf("stopping run %s stopped run %s too", a.RunID, other.RunID)
	}
	_ = op.Stop(time.Second)
}

func alive(t *testing.T, b runner.Backend, run string) bool {
	t.Helper()
	live, err := b.Live(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return len(live) > 0
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

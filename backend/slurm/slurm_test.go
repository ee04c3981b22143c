package slurm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/slurm"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// start submits attempt 1 of tr in a run of its own and stops it when the test ends.
func start(t *testing.T, b *slurm.Backend, tr experiment.Trial) (*runner.Attempt, runner.Process) {
	t.Helper()
	run := "slurm-test-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())) + "-" + time.Now().Format("150405.000")
	a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), run, tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Workdir = t.TempDir()
	p, err := b.Start(context.Background(), a)
	if err != nil {
		t.Fatalf("start %s: %v", tr.Name, err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return a, p
}

func scontrol(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("scontrol", "-o", "show", "job", id).CombinedOutput()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v: %s", id, err, out)
	}
	return string(out)
}

func waitFile(t *testing.T, path, want string) {
	t.Helper()
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), want) {
			return
		}
	}
	t.Fatalf("%s never said %q", filepath.Base(path), want)
}

// TestResources: cpu, memory, whole GPUs and the timeout reach Slurm as the job's request, and
// the job sees the GPUs Slurm gave it (dummy device files on the test cluster).
func TestResources(t *testing.T) {
	needSlurm(t)
	b := slurm.New(slurm.Config{})
	tr := experiment.Trial{Name: "sized", Cmd: experiment.Command{Shell: `echo "conf=$SLURM_CONF"; echo "gpus=$CUDA_VISIBLE_DEVICES"; sleep 60`},
		Resources: experiment.Resources{CPU: 2, Memory: 300 << 20, GPU: 2}, Timeout: experiment.Duration(90 * time.Second)}
	a, p := start(t, b, tr)
	waitFile(t, a.StdoutPath, "gpus=")
	job := scontrol(t, p.Handle())
	for _, want := range []string{"cpu=2", "mem=300M", "gres:gpu:2", "TimeLimit=00:03:00", "WorkDir=" + a.Dir} {
		if !strings.Contains(job, want) {
			t.Errorf("the job does not ask for %s:\n%s", want, job)
		}
	}
	out, _ := os.ReadFile(a.StdoutPath)
	if !strings.Contains(string(out), "gpus=0,1") {
		t.Errorf("the job does not see its two GPUs: %q", out)
	}
	// The cluster's configuration reaches the trial (a trial may call Slurm itself).
	if conf := os.Getenv("SLURM_CONF"); conf != "" && !strings.Contains(string(out), "conf="+conf+"\n") {
		t.Errorf("the job does not see SLURM_CONF=%s: %q", conf, out)
	}
}

// syncBuffer is a log sink the poller and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPendingReason: a job that waits in the queue has its reason logged with its trial.
func TestPendingReason(t *testing.T) {
	needSlurm(t)
	var log syncBuffer
	b := slurm.New(slurm.Config{Log: slog.New(slog.NewTextHandler(&log, nil))})
	all := experiment.Resources{GPU: 4}
	_, first := start(t, b, experiment.Trial{Name: "holds-gpus", Cmd: experiment.Command{Shell: "sleep 120"}, Resources: all})
	_, second := start(t, b, experiment.Trial{Name: "waits", Cmd: experiment.Command{Shell: "true"}, Resources: all})
	for end := time.Now().Add(time.Minute); !strings.Contains(log.String(), "trial=waits"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no pending reason logged for the waiting trial:\n%s", log.String())
		}
	}
	if s := log.String(); !strings.Contains(s, "reason=Resources") && !strings.Contains(s, "reason=Priority") {
		t.Errorf("the pending reason is not Slurm's: %s", s)
	}
	// Stopping a job that never started cancels it.
	if err := second.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := second.Wait(); e.Code == 0 {
		t.Errorf("a cancelled pending job ended %+v", e)
	}
	_ = first.Stop(time.Second)
}

// TestTimeLimit: a job ended by Slurm's time limit says so.
func TestTimeLimit(t *testing.T) {
	needSlurm(t)
	if testing.Short() {
		t.Skip("Slurm enforces time limits every 30 s")
	}
	b := slurm.New(slurm.Config{SbatchArgs: []string{"--time=0:02"}})
	_, p := start(t, b, experiment.Trial{Name: "overtime", Cmd: experiment.Command{Shell: "sleep 300"}})
	if e := p.Wait(); e.Code == 0 || !strings.Contains(e.Reason, "time limit") {
		t.Errorf("a job past its time limit ended %+v", e)
	}
}

// TestHostileValues: env values and arguments full of shell syntax reach the trial as they
// are, and none of them runs.
func TestHostileValues(t *testing.T) {
	needSlurm(t)
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	hostile := "$(touch " + pwned + ")`touch " + pwned + "`'\"; touch " + pwned + "\nsecond line %j \\"
	tr := experiment.Trial{Name: "hostile", Env: map[string]string{"HOSTILE": hostile},
		Cmd: experiment.Command{Argv: []string{"/bin/sh", "-c", `printf '%s|%s' "$HOSTILE" "$1"`, "sh", hostile}}}
	a, p := start(t, slurm.New(slurm.Config{}), tr)
	if e := p.Wait(); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	if got, _ := os.ReadFile(a.StdoutPath); string(got) != hostile+"|"+hostile {
		t.Errorf("the trial saw %q, want the value twice", got)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("a value was run as a command")
	}
}

// TestCheck: what the cluster can never run is refused before anything is submitted, with
// what to do.
func TestCheck(t *testing.T) {
	needSlurm(t)
	ctx := context.Background()
	plain := experiment.Trial{Name: "plain", Cmd: experiment.Command{Shell: "true"}}
	if err := slurm.New(slurm.Config{}).Check(ctx, []experiment.Trial{plain}); err != nil {
		t.Errorf("a plain trial refused: %v", err)
	}
	for _, c := range []struct {
		cfg   slurm.Config
		trial experiment.Trial
		want  string
	}{
		{slurm.Config{Partition: "no-such-partition"}, plain, "invalid partition"},
		{slurm.Config{}, experiment.Trial{Name: "greedy", Cmd: plain.Cmd, Resources: experiment.Resources{GPU: 64}}, "greedy"},
		{slurm.Config{}, experiment.Trial{Name: "db", Cmd: plain.Cmd, Service: true}, "service"},
	} {
		err := slurm.New(c.cfg).Check(ctx, []experiment.Trial{plain, c.trial})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was submitted") {
			t.Errorf("Check of %s with %+v = %v, want an error saying %q", c.trial.Name, c.cfg, err, c.want)
		} else if strings.Contains(err.Error(), "sbatch: sbatch:") || strings.Contains(err.Error(), "\n") && c.want != "service" {
			// Slurm's message on one line, the command named once.
			t.Errorf("Check's error is hard to read: %q", err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if err := slurm.New(slurm.Config{}).Check(ctx, []experiment.Trial{plain}); !errors.Is(err, slurm.ErrNoSlurm) {
		t.Errorf("Check without sbatch on PATH = %v", err)
	}
}

// TestDeleteRun: 'jikken rm --backend-objects' cancels what a run still has on the cluster.
func TestDeleteRun(t *testing.T) {
	needSlurm(t)
	b := slurm.New(slurm.Config{})
	a, p := start(t, b, experiment.Trial{Name: "left", Cmd: experiment.Command{Shell: "sleep 300"}})
	n, err := b.DeleteRun(context.Background(), a.RunID)
	if err != nil || n != 1 {
		t.Fatalf("DeleteRun = %d, %v; want 1 job cancelled", n, err)
	}
	if e := p.Wait(); e.Code == 0 {
		t.Errorf("a cancelled job ended %+v", e)
	}
	if n, err := b.DeleteRun(context.Background(), a.RunID); err != nil || n != 0 {
		t.Errorf("DeleteRun of a run with nothing left = %d, %v", n, err)
	}
}

// memoryEnforced says why the cluster does not hold jobs to their --mem ("" when it does):
// only Slurm's cgroup task plugin does, which scripts/ci/slurm.sh configures where the machine
// has a writable cgroup v1 memory hierarchy.
func memoryEnforced() string {
	out, err := exec.Command("scontrol", "show", "config").Output()
	if err != nil {
		return "scontrol show config: " + err.Error()
	}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "TaskPlugin" {
			if v = strings.TrimSpace(v); !strings.Contains(v, "task/cgroup") {
				return "the cluster does not hold jobs to their memory (TaskPlugin=" + v + ")"
			}
			return ""
		}
	}
	return "scontrol show config names no TaskPlugin"
}

// TestOutOfMemory: a job that outgrows its memory is ended by Slurm and reported as the other
// backends report it: exit code 137, out of memory, with the limit.
func TestOutOfMemory(t *testing.T) {
	needSlurm(t)
	if why := memoryEnforced(); why != "" {
		t.Skip(why + "; scripts/ci/slurm.sh configures task/cgroup where the machine allows it")
	}
	b := slurm.New(slurm.Config{})
	// tail keeps a line in memory until its end: 400 MiB of zeros and no newline.
	_, p := start(t, b, experiment.Trial{Name: "greedy", Cmd: experiment.Command{Shell: "head -c 400M /dev/zero | tail >/dev/null"},
		Resources: experiment.Resources{Memory: 50 << 20}})
	if e := p.Wait(); e.Code != 137 || e.Reason != "out of memory (limit 50MiB)" {
		t.Errorf("a job over its memory ended %+v", e)
	}
}

// TestAdopt: a runner that resumes a run (Plan, then Live) is handed the newest
// live job of each planned trial to re-attach to, not to stop; Start of that attempt watches
// the same job, submitting nothing; a job of another attempt than the one started is cancelled.
func TestAdopt(t *testing.T) {
	needSlurm(t)
	ctx := context.Background()
	run := "slurm-test-adopt-" + time.Now().Format("150405.000000")
	sleeper := func(name string) experiment.Trial {
		return experiment.Trial{Name: name, Cmd: experiment.Command{Shell: "sleep 300"}}
	}
	submit := func(b *slurm.Backend, tr experiment.Trial, n int) runner.Process {
		t.Helper()
		a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), run, tr, n)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Start(ctx, a)
		if err != nil {
			t.Fatalf("start %s: %v", tr.Name, err)
		}
		t.Cleanup(func() { _ = p.Stop(time.Second) })
		return p
	}
	dead := slurm.New(slurm.Config{NoArrays: true})
	a1, a2 := submit(dead, sleeper("a"), 1), submit(dead, sleeper("a"), 2)
	b1, c1 := submit(dead, sleeper("b"), 1), submit(dead, sleeper("c"), 1)

	b := slurm.New(slurm.Config{NoArrays: true})
	if err := b.Check(ctx, []experiment.Trial{sleeper("a"), sleeper("b")}); err != nil {
		t.Fatal(err)
	}
	b.Plan([]experiment.Trial{sleeper("a"), sleeper("b")})
	live, err := b.Live(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, lt := range live {
		listed = append(listed, fmt.Sprintf("%s@%d=%s", lt.Trial, lt.Attempt, lt.Handle))
	}
	sort.Strings(listed)
	if want := []string{"a@1=" + a1.Handle(), "c@1=" + c1.Handle()}; !slices.Equal(listed, want) {
		t.Errorf("Live listed %v to stop, want %v", listed, want)
	}
	if got := b.Adopted(run); !maps.Equal(got, map[string]int{"a": 2, "b": 1}) {
		t.Errorf("Adopted = %v, want a's attempt 2 and b's attempt 1", got)
	}
	if p := submit(b, sleeper("a"), 2); p.Handle() != a2.Handle() {
		t.Errorf("attempt 2 of a is job %s, want the one left running, %s", p.Handle(), a2.Handle())
	}
	if p := submit(b, sleeper("b"), 2); p.Handle() == b1.Handle() {
		t.Errorf("attempt 2 of b re-attached to attempt 1's job")
	}
	if e := b1.Wait(); e.Code == 0 {
		t.Errorf("the job of b's attempt 1 was not cancelled: %+v", e)
	}
	// Later Lives list everything: what a run leaves at its end is stopped, not adopted.
	if live, err := b.Live(ctx, run); err != nil || len(live) != 4 {
		t.Errorf("Live after the resume = %v, %v; want a@1, a@2, b@2 and c@1", live, err)
	}
}

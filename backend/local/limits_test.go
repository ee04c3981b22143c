//go:build unix

package local_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/host/cgroup"
	"github.com/jikken-dev/jikken/runner"
)

var runSeq int

// start starts attempt 1 of a trial running script with resources r on b, in a run of its own.
func start(t *testing.T, b *local.Backend, script string, r experiment.Resources) (*runner.Attempt, runner.Process) {
	t.Helper()
	runSeq++
	run := fmt.Sprintf("limits-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9, runSeq)
	tr := experiment.Trial{Name: "t", Cmd: experiment.Command{Shell: script}, Resources: r}
	a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), run, tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Workdir = t.TempDir()
	p, err := b.Start(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return a, p
}

func wait(t *testing.T, p runner.Process) runner.Exit {
	t.Helper()
	done := make(chan runner.Exit, 1)
	go func() { done <- p.Wait() }()
	select {
	case e := <-done:
		return e
	case <-time.After(2 * time.Minute):
		t.Fatal("the attempt did not end within 2 minutes")
	}
	return runner.Exit{}
}

// noGroupsLeft checks that run has no cgroup left once its attempt is over, and no folder
// once the runner has asked what is live at the end of the run.
func noGroupsLeft(t *testing.T, run string) {
	t.Helper()
	m, err := cgroup.Detect(cgroup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := m.Find(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		t.Errorf("cgroup %v of %s@%d is left", g.Dirs(), g.Trial, g.Attempt)
	}
	if _, err := (&local.Backend{}).Live(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == run {
			t.Errorf("the cgroup folder %s of the run is left", p)
		}
		return nil
	})
}

// A trial allocating 300 MiB under memory: 64Mi is killed, and reported as Docker reports it.
func TestOOMKilled(t *testing.T) {
	needCgroups(t)
	a, p := start(t, &local.Backend{}, "head -c 300M /dev/zero | tail > /dev/null", experiment.Resources{Memory: 64 << 20})
	e := wait(t, p)
	if e.Code != 137 || e.Reason != "out of memory (limit 64MiB)" || e.Err != nil {
		t.Errorf("exit %+v, want code 137 and reason \"out of memory (limit 64MiB)\"", e)
	}
	noGroupsLeft(t, a.RunID)

	// NoEnforce does not turn limits off where cgroups can enforce them.
	a, p = start(t, &local.Backend{NoEnforce: true}, "head -c 300M /dev/zero | tail > /dev/null", experiment.Resources{Memory: 64 << 20})
	if e := wait(t, p); e.Reason != "out of memory (limit 64MiB)" {
		t.Errorf("with NoEnforce where cgroups work: exit %+v, want the limit enforced", e)
	}
	noGroupsLeft(t, a.RunID)

	// Within its limit, the same trial succeeds.
	a, p = start(t, &local.Backend{}, "head -c 8M /dev/zero | tail > /dev/null", experiment.Resources{Memory: 64 << 20})
	if e := wait(t, p); e.Code != 0 || e.Reason != "" {
		t.Errorf("8 MiB under 64 MiB: exit %+v", e)
	}
	noGroupsLeft(t, a.RunID)
}

// quotaScript prints the CPU quota of the trial's own cgroup, read from where the trial runs.
const quotaScript = `p=$(grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
if [ -n "$p" ] && [ -f "/sys/fs/cgroup/cpu$p/cpu.cfs_quota_us" ]; then
  echo "$(cat /sys/fs/cgroup/cpu$p/cpu.cfs_quota_us)/$(cat /sys/fs/cgroup/cpu$p/cpu.cfs_period_us)"
else
  p=$(grep '^0::' /proc/self/cgroup | cut -d: -f3); tr ' ' / < "/sys/fs/cgroup$p/cpu.max"
fi`

func TestCPUQuota(t *testing.T) {
	needCgroups(t)
	for _, c := range []struct {
		cpu  float64
		want string
	}{{2, "200000/100000"}, {0.5, "50000/100000"}} {
		a, p := start(t, &local.Backend{}, quotaScript, experiment.Resources{CPU: c.cpu})
		if e := wait(t, p); e.Code != 0 {
			b, _ := os.ReadFile(a.StderrPath)
			t.Fatalf("cpu %v: exit %+v: %s", c.cpu, e, b)
		}
		if b, _ := os.ReadFile(a.StdoutPath); strings.TrimSpace(string(b)) != c.want {
			t.Errorf("cpu %v: the trial's quota is %q, want %s", c.cpu, b, c.want)
		}
		noGroupsLeft(t, a.RunID)
	}
	// Without limits there is no cgroup of its own: the quota is the runner's.
	a, p := start(t, &local.Backend{}, quotaScript, experiment.Resources{})
	wait(t, p)
	if b, _ := os.ReadFile(a.StdoutPath); strings.HasPrefix(string(b), "200000/") || strings.HasPrefix(string(b), "50000/") {
		t.Errorf("a trial without limits runs under a quota: %s", b)
	}
}

// escapeScript starts a child that leaves the attempt's session and process group and drops
// its environment, so only the cgroup still knows it, and writes its pid.
const escapeScript = `setsid env -i sleep 300 & echo $! > "$JIKKEN_OUTPUT_DIR/pid.tmp" && mv "$JIKKEN_OUTPUT_DIR/pid.tmp" "$JIKKEN_OUTPUT_DIR/pid"; `

func escapedPid(t *testing.T, a *runner.Attempt) int {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(a.OutputDir, "pid"))
		if err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			// setsid forks when the shell made it a group leader; its child is the sleep.
			if kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil && len(strings.Fields(string(kids))) == 1 {
				pid, _ = strconv.Atoi(strings.Fields(string(kids))[0])
			}
			// Whatever happens, it does not outlive the test.
			t.Cleanup(func() {
				if !gone(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			return pid
		}
	}
	t.Fatal("the escaping child did not start")
	return 0
}

func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return strings.Contains(string(st), ") Z ")
}

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if gone(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("%s: the child that left the session (pid %d) lives on", what, pid)
}

// Stop ends a child that left the attempt's session and environment: the cgroup holds it.
func TestStopKillsEscapedChild(t *testing.T) {
	needCgroups(t)
	a, p := start(t, &local.Backend{}, escapeScript+"sleep 300", experiment.Resources{CPU: 1})
	pid := escapedPid(t, a)
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	waitGone(t, pid, "Stop")
	noGroupsLeft(t, a.RunID)
}

// When the trial's first process ends, what it left in its cgroup ends with it.
func TestWaitKillsEscapedChild(t *testing.T) {
	needCgroups(t)
	a, p := start(t, &local.Backend{}, escapeScript+"while [ ! -f \"$JIKKEN_OUTPUT_DIR/pid\" ]; do sleep 0.05; done", experiment.Resources{Memory: 256 << 20})
	wait(t, p)
	waitGone(t, escapedPid(t, a), "the attempt's end")
	noGroupsLeft(t, a.RunID)
}

// After a runner dies, a new backend finds an attempt by its cgroup alone (its first process
// has exited, its child left the session and dropped its environment), stops it and removes
// the cgroup; an empty cgroup left behind is removed by Live.
func TestLiveFindsCgroupAfterRunnerCrash(t *testing.T) {
	needCgroups(t)
	first := &local.Backend{}
	a, p := start(t, first, escapeScript, experiment.Resources{CPU: 1, Memory: 256 << 20})
	pid := escapedPid(t, a)
	// The first runner is dead: nobody waits for the attempt.

	m, err := cgroup.Detect(cgroup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := m.Create(a.RunID, "stale", 3, cgroup.Limits{CPU: 1})
	if err != nil {
		t.Fatal(err)
	}

	next := &local.Backend{}
	ctx := context.Background()
	var live []runner.LiveTrial
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if live, err = next.Live(ctx, a.RunID); err != nil {
			t.Fatal(err)
		}
		// Until the first process exits, its environment names the attempt too.
		if len(live) == 1 && live[0].Handle != p.Handle() {
			break
		}
	}
	if len(live) != 1 || live[0].Trial != "t" || live[0].Attempt != 1 {
		t.Fatalf("Live = %+v, want attempt 1 of t, found by its cgroup", live)
	}
	for _, d := range stale.Dirs() {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("Live left the empty cgroup %s", d)
		}
	}
	if err := next.StopLive(ctx, live[0]); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, "StopLive")
	noGroupsLeft(t, a.RunID)
}

// Where no cgroup can be made, a trial with limits is refused, saying how to fix it, unless
// NoEnforce; a trial without limits runs.
func TestRefusedWithoutCgroups(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"proc/self/mountinfo": "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n",
		"proc/self/cgroup":    "0::/\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	limited := experiment.Trial{Name: "big", Cmd: experiment.Command{Shell: "true"}, Resources: experiment.Resources{CPU: 2, Memory: 64 << 20}}
	plain := experiment.Trial{Name: "plain", Cmd: experiment.Command{Shell: "true"}}
	ctx := context.Background()

	b := &local.Backend{CgroupRoot: root}
	err := b.Check(ctx, []experiment.Trial{plain, limited})
	want := "trial big declares cpu 2 and memory 64MiB, which the local backend enforces with cgroups, but none can be made here: no cgroup filesystem is mounted; " +
		"run jikken as root (cgroup v1), or in a delegated cgroup v2 group (systemd-run --user --scope -p Delegate=yes jikken run ...), or pass --no-enforce to run them without limits"
	if err == nil || err.Error() != want {
		t.Errorf("Check:\n got %v\nwant %s", err, want)
	}
	if err := b.Check(ctx, []experiment.Trial{limited, limited}); err == nil || !strings.HasPrefix(err.Error(), "2 trials declare resources.cpu or resources.memory (big: cpu 2 and memory 64MiB)") {
		t.Errorf("Check of two trials: %v", err)
	}
	if err := b.Check(ctx, []experiment.Trial{plain}); err != nil {
		t.Errorf("Check of a trial without limits: %v", err)
	}
	a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), "refused", limited, 1)
	if err != nil {
		t.Fatal(err)
	}
	a.Workdir = t.TempDir()
	if _, err := b.Start(ctx, a); err == nil || err.Error() != want {
		t.Errorf("Start:\n got %v\nwant %s", err, want)
	}

	b = &local.Backend{CgroupRoot: root, NoEnforce: true}
	if err := b.Check(ctx, []experiment.Trial{limited}); err != nil {
		t.Errorf("Check with NoEnforce: %v", err)
	}
	p, err := b.Start(ctx, a)
	if err != nil {
		t.Fatalf("Start with NoEnforce: %v", err)
	}
	if e := wait(t, p); e.Code != 0 {
		t.Errorf("exit %+v", e)
	}
}

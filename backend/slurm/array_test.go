package slurm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/slurm"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// TestArray: attempts started together go in one job array, and each task runs its own
// attempt: its environment (values full of shell syntax included), its command, its logs, its
// exit code; Live names each task's trial, and stopping one task leaves the others.
func TestArray(t *testing.T) {
	needSlurm(t)
	// A linger long enough for the test's goroutines on a loaded machine: which attempts share
	// an array depends on when they start, and this test is about what an array does.
	b := slurm.New(slurm.Config{Linger: 2 * time.Second})
	run := fmt.Sprintf("slurm-test-array-%d", time.Now().UnixNano())
	const n = 6
	hostile := "$(echo no)'\"\n; x=%a"
	trials := make([]experiment.Trial, n)
	for i := range n {
		script := fmt.Sprintf(`printf '%%s|%%s' "$JIKKEN_TRIAL" "$V"; echo err-%d >&2; echo '{"i": %d}' > "$JIKKEN_OUTPUT_DIR/result.json"; exit %d`, i, i, i)
		if i == n-1 {
			script = `echo started; sleep 300`
		}
		trials[i] = experiment.Trial{Name: fmt.Sprintf("t-%d", i), Cmd: experiment.Command{Shell: script}, Env: map[string]string{"V": hostile}}
	}
	atts, procs := startTogether(t, b, run, trials, nil)
	t.Cleanup(func() { _ = procs[n-1].Stop(time.Second) })
	arrays := map[string]bool{}
	for _, p := range procs {
		id, _, _ := strings.Cut(p.Handle(), "_")
		arrays[id] = true
	}
	if len(arrays) != 1 || !strings.Contains(procs[0].Handle(), "_") {
		t.Errorf("attempts started together are not one array: %v", arrays)
	}
	for i := range n - 1 {
		e := procs[i].Wait()
		if e.Code != i || e.Err != nil {
			t.Errorf("task %d: exit %+v, want %d", i, e, i)
		}
		if got, _ := os.ReadFile(atts[i].StdoutPath); string(got) != fmt.Sprintf("t-%d|%s", i, hostile) {
			t.Errorf("task %d: stdout %q", i, got)
		}
		if got, _ := os.ReadFile(atts[i].StderrPath); string(got) != fmt.Sprintf("err-%d\n", i) {
			t.Errorf("task %d: stderr %q", i, got)
		}
		if got, _ := os.ReadFile(filepath.Join(atts[i].OutputDir, "result.json")); string(got) != fmt.Sprintf("{\"i\": %d}\n", i) {
			t.Errorf("task %d: result.json %q", i, got)
		}
	}
	waitFile(t, atts[n-1].StdoutPath, "started")
	live, err := slurm.New(slurm.Config{}).Live(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Trial != fmt.Sprintf("t-%d", n-1) || live[0].Attempt != 1 || live[0].Handle != procs[n-1].Handle() {
		t.Errorf("Live = %+v, want the last task", live)
	}
	if err := procs[n-1].Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if e := procs[n-1].Wait(); e.Code == 0 {
		t.Errorf("a stopped task ended %+v", e)
	}
}

// TestArrayLimit: an array carries the run's cap as its throttle (--array=...%N), so Slurm
// itself runs no more of its tasks at once, and says so as the waiting task's pending reason;
// the reason reaches the runner through Attempt.Queued.
func TestArrayLimit(t *testing.T) {
	needSlurm(t)
	b := slurm.New(slurm.Config{Linger: 2 * time.Second, ArrayLimit: 2})
	run := fmt.Sprintf("slurm-test-array-limit-%d", time.Now().UnixNano())
	const n = 3
	reasons := make(chan string, 10*n)
	trials := make([]experiment.Trial, n)
	for i := range n {
		trials[i] = experiment.Trial{Name: fmt.Sprintf("t-%d", i), Cmd: experiment.Command{Shell: "sleep 300"}}
	}
	_, procs := startTogether(t, b, run, trials, func(a *runner.Attempt) {
		a.Queued = func(reason string) {
			select {
			case reasons <- a.Trial.Name + ": " + reason:
			default: // the poller must not wait for a test that has seen what it wanted
			}
		}
	})
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.Stop(time.Second)
		}
	})
	id, _, _ := strings.Cut(procs[0].Handle(), "_")
	if job := scontrol(t, id); !strings.Contains(job, "ArrayTaskThrottle=2") {
		t.Errorf("the array has not the run's cap as its throttle:\n%s", job)
	}
	// The node has room for all three: only the throttle holds the third back.
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case r := <-reasons:
			if strings.HasSuffix(r, ": JobArrayTaskLimit") {
				return
			}
		case <-timeout:
			t.Fatalf("no task waited for the array's throttle")
		}
	}
}

// startTogether starts attempt 1 of each trial of run at once, as the runner starts a matrix,
// with prepare (when set) applied to each attempt first.
func startTogether(t *testing.T, b *slurm.Backend, run string, trials []experiment.Trial, prepare func(*runner.Attempt)) ([]*runner.Attempt, []runner.Process) {
	t.Helper()
	atts := make([]*runner.Attempt, len(trials))
	procs := make([]runner.Process, len(trials))
	for i, tr := range trials {
		a, err := runner.NewAttempt(filepath.Join(t.TempDir(), "attempt"), run, tr, 1)
		if err != nil {
			t.Fatal(err)
		}
		a.Workdir = t.TempDir()
		if prepare != nil {
			prepare(a)
		}
		atts[i] = a
	}
	var wg sync.WaitGroup
	for i, a := range atts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := b.Start(context.Background(), a)
			if err != nil {
				t.Errorf("start %s: %v", a.Trial.Name, err)
				return
			}
			procs[i] = p
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return atts, procs
}

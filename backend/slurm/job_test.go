package slurm

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

func TestCommentRoundTrip(t *testing.T) {
	for _, trial := range []string{"train", "opt-de-s3", "a b=c trial=x"} {
		run, got, n, ok := parseComment(comment("20261124-r", trial, 3))
		if !ok || run != "20261124-r" || got != trial || n != 3 {
			t.Errorf("parseComment(comment(%q)) = %q %q %d %v", trial, run, got, n, ok)
		}
	}
	for _, c := range []string{"", "(null)", "someone else's job", "jikken run=r attempt=x trial=t"} {
		if _, _, _, ok := parseComment(c); ok {
			t.Errorf("parseComment(%q) accepted a comment jikken did not write", c)
		}
	}
}

func TestResourceArgs(t *testing.T) {
	tr := experiment.Trial{Resources: experiment.Resources{CPU: 1.5, Memory: 300<<20 + 1, GPU: 2}, Timeout: experiment.Duration(90 * time.Second)}
	want := []string{"--cpus-per-task=2", "--mem=301M", "--gres=gpu:2", "--time=3"}
	if got := resourceArgs(tr); !reflect.DeepEqual(got, want) {
		t.Errorf("resourceArgs = %q, want %q", got, want)
	}
	if got := resourceArgs(experiment.Trial{}); len(got) != 0 {
		t.Errorf("a trial asking for nothing gets %q", got)
	}
	tr = experiment.Trial{Timeout: experiment.Duration(5 * time.Minute), Checkpoint: &experiment.Checkpoint{Signal: "USR1", Before: experiment.Duration(90 * time.Second)}}
	want = []string{"--time=6", "--signal=B:USR1@90"}
	if got := resourceArgs(tr); !reflect.DeepEqual(got, want) {
		t.Errorf("resourceArgs of a trial warned before its end = %q, want %q", got, want)
	}
}

func TestUnsupported(t *testing.T) {
	cmd := experiment.Command{Shell: "true"}
	for _, tr := range []experiment.Trial{
		{Name: "svc", Cmd: cmd, Service: true},
		{Name: "half", Cmd: cmd, Resources: experiment.Resources{GPU: 0.5}},
		{Name: "mig", Cmd: cmd, Resources: experiment.Resources{MIG: "1g.5gb"}},
		{Name: "image-only"},
	} {
		if unsupported(tr) == "" {
			t.Errorf("trial %s accepted", tr.Name)
		}
	}
	if why := unsupported(experiment.Trial{Cmd: cmd, Resources: experiment.Resources{GPU: 2}}); why != "" {
		t.Errorf("two whole GPUs refused: %s", why)
	}
}

func TestFilePattern(t *testing.T) {
	if got := filePattern("/work/100%/a%j/stdout.log"); got != "/work/100%%/a%%j/stdout.log" {
		t.Errorf("filePattern = %q", got)
	}
}

func TestParse(t *testing.T) {
	// squeue -O exit_code prints the wait status (as Slurm 22.05 does: 768 is exit 3, 9 is
	// SIGKILL, 35072 is exit 137).
	jobs := parseSqueue("12|RUNNING|0|None|jikken run=r attempt=1 trial=a|\n13|PENDING|0|Resources|jikken run=r attempt=2 trial=b|c|\n" +
		"14|FAILED|768|NonZeroExitCode|(null)|\n15|FAILED|9|None||\n16|FAILED|35072|x||\n\n")
	if len(jobs) != 5 || jobs[1].Reason != "Resources" || jobs[1].Comment != "jikken run=r attempt=2 trial=b|c" || jobs[0].Comment != "jikken run=r attempt=1 trial=a" {
		t.Errorf("parseSqueue = %+v", jobs)
	}
	for i, want := range [][2]int{{3, 0}, {0, 9}, {137, 0}} {
		if j := jobs[2+i]; j.Exit != want[0] || j.Signal != want[1] || !j.HasExit {
			t.Errorf("job %s: exit %d signal %d, want %v", j.ID, j.Exit, j.Signal, want)
		}
	}
	j, ok := parseScontrol("JobId=30 JobName=jikken-r UserId=root(0) JobState=CANCELLED Reason=None ExitCode=0:9 Comment=x")
	if !ok || j.State != "CANCELLED" || j.Signal != 9 || j.Exit != 0 || !j.HasExit {
		t.Errorf("parseScontrol = %+v %v", j, ok)
	}
}

func TestExitOf(t *testing.T) {
	for _, c := range []struct {
		j      jobState
		memory int64
		code   int
		why    string
	}{
		{jobState{State: "COMPLETED"}, 0, 0, ""},
		{jobState{State: "FAILED", Exit: 3}, 0, 3, ""},
		{jobState{State: "FAILED", Signal: 9}, 0, 137, "signal 9"},
		{jobState{State: "CANCELLED", Signal: 15}, 0, 143, "cancelled"},
		{jobState{State: "TIMEOUT"}, 0, -1, "time limit"},
		{jobState{State: "OUT_OF_MEMORY", Exit: 0}, 0, 137, "out of memory"},
		{jobState{State: "OUT_OF_MEMORY", Signal: 125}, 50 << 20, 137, "out of memory (limit 50Mi"},
		{jobState{State: "NODE_FAIL"}, 0, -1, "node failed"},
	} {
		e := exitOf(c.j, c.memory)
		if e.Code != c.code || !strings.Contains(e.Reason, c.why) {
			t.Errorf("exitOf(%+v) = %+v, want code %d and %q", c.j, e, c.code, c.why)
		}
	}
	// The ends that are the cluster's doing, not the trial's: a preemptible trial is requeued.
	for state, want := range map[string]runner.Interruption{
		"TIMEOUT": runner.TimeLimit, "DEADLINE": runner.TimeLimit, "PREEMPTED": runner.Preempted,
		"NODE_FAIL": runner.NodeLost, "BOOT_FAIL": runner.NodeLost, "FAILED": runner.NotInterrupted, "CANCELLED": runner.NotInterrupted,
	} {
		if got := exitOf(jobState{State: state, Exit: 1}, 0).Interrupted; got != want {
			t.Errorf("exitOf(%s) is interrupted %q, want %q", state, got, want)
		}
	}
}

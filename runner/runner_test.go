//go:build unix

package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// run parses the experiment JSON, runs it on the local backend and returns the summary and store.
func run(t *testing.T, spec string, mod func(*runner.Runner)) (*runner.Summary, store.Runs, string) {
	t.Helper()
	exp, err := experiment.Parse("test.json", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	blob, err := store.OpenFolder(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("test", time.Now()), Trials: exp.Trials}
	if err := runs.WriteManifest(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 2, WorkRoot: filepath.Join(dir, "work"), Workdir: dir, StopGrace: time.Second}
	if mod != nil {
		mod(r)
	}
	// A runner that never ends fails the test (trials left pending) instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := r.Execute(ctx, m, false)
	if err != nil {
		t.Fatal(err)
	}
	return sum, runs, dir
}

func statuses(sum *runner.Summary) map[string]store.Status {
	out := map[string]store.Status{}
	for _, rec := range sum.Trials {
		if rec != nil {
			out[rec.Name] = rec.Status
		}
	}
	return out
}

func TestDependsWaitsForHealthyServiceAndStopsIt(t *testing.T) {
	// The client can only connect once the service listens: it waits for the health check.
	// The service never exits by itself: the runner stops it when the client is done.
	spec := `[
	  {"name":"svc","cmd":"sleep 0.3; exec python3 -c 'import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"127.0.0.1\", 47311)); s.listen(); time.sleep(60)'","service":true,"health":{"tcp":"127.0.0.1:47311","interval":0.05}},
	  {"name":"client","cmd":"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 47311))'","depends":["svc"]}
	]`
	sum, _, _ := run(t, spec, nil)
	st := statuses(sum)
	if st["client"] != store.Succeeded || st["svc"] != store.Stopped || sum.Status != store.Succeeded {
		t.Fatalf("statuses = %v, run %s", st, sum.Status)
	}
	if !strings.Contains(sum.Trials[0].Reason, "stopped after its dependants ended") {
		t.Fatalf("service reason = %q", sum.Trials[0].Reason)
	}
}

func TestFailFastStopsTheRest(t *testing.T) {
	spec := `[{"name":"bad","cmd":"exit 1"},{"name":"long","cmd":"sleep 30"},{"name":"later","cmd":"true","after":["long"]}]`
	start := time.Now()
	sum, _, _ := run(t, spec, func(r *runner.Runner) { r.FailFast = true })
	st := statuses(sum)
	if st["bad"] != store.Failed || st["long"] != store.Killed {
		t.Fatalf("statuses = %v", st)
	}
	if _, ran := st["later"]; ran {
		t.Fatalf("later ran after fail-fast: %v", st)
	}
	if sum.Status != store.Killed || time.Since(start) > 20*time.Second {
		t.Fatalf("status %s after %s", sum.Status, time.Since(start))
	}
}

func TestRetryKeepsTheLastAttemptsOutputsAndEveryAttemptsLogs(t *testing.T) {
	spec := `[{"name":"r","cmd":"echo attempt $JIKKEN_ATTEMPT; touch $JIKKEN_OUTPUT_DIR/from-$JIKKEN_ATTEMPT; echo '{}' > $JIKKEN_OUTPUT_DIR/trial.json; test $JIKKEN_ATTEMPT = 3","retries":3,"backoff":0.01}]`
	sum, runs, _ := run(t, spec, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 3 || *rec.Attempts[0].ExitCode != 1 {
		t.Fatalf("record = %+v", rec)
	}
	ctx := context.Background()
	var keys []string
	_ = runs.Blob.List(ctx, store.TrialKey(sum.RunID, "r", "")+"/", func(in store.Info) error {
		keys = append(keys, strings.TrimPrefix(in.Key, store.TrialKey(sum.RunID, "r", "")+"/"))
		return nil
	})
	// Only the last attempt's outputs, every attempt's logs; the trial's own trial.json is kept
	// as an artifact.
	want := "artifacts/trial.json attempts/1/stderr.log attempts/1/stdout.log attempts/2/stderr.log attempts/2/stdout.log from-3 params.json stderr.log stdout.log trial.json"
	if got := strings.Join(keys, " "); got != want {
		t.Fatalf("stored files = %s\nwant %s", got, want)
	}
	out, _ := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "r", "stdout.log"))
	if string(out) != "attempt 3\n" {
		t.Fatalf("stdout = %q", out)
	}
	for n := 1; n <= 2; n++ {
		out, _ := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "r", fmt.Sprintf("attempts/%d/stdout.log", n)))
		if string(out) != fmt.Sprintf("attempt %d\n", n) {
			t.Fatalf("attempt %d's stdout = %q", n, out)
		}
	}
	// The trial's own trial.json did not replace the record.
	got, err := runs.Trial(ctx, sum.RunID, "r")
	if err != nil || got.Status != store.Succeeded {
		t.Fatalf("record after run = %+v, %v", got, err)
	}
}

func TestTrialInterfaceEnvAndParams(t *testing.T) {
	spec := `{"matrix":{"name":"m","params":{"lr":[0.5],"model":["mlp"]},"seeds":[7],"cmd":"env | grep ^JIKKEN_ | sort > $JIKKEN_OUTPUT_DIR/env.txt; cp $JIKKEN_PARAMS $JIKKEN_OUTPUT_DIR/p.json"}}`
	sum, runs, _ := run(t, spec, nil)
	ctx := context.Background()
	env, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "m-0.5-mlp-s7", "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"JIKKEN_ATTEMPT=1", "JIKKEN_PARAM_LR=0.5", "JIKKEN_PARAM_MODEL=mlp", "JIKKEN_SEED=7", "JIKKEN_TRIAL=m-0.5-mlp-s7", "JIKKEN_TRIAL_INDEX=0", "JIKKEN_RUN_ID=" + sum.RunID} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	var p map[string]any
	data, _ := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "m-0.5-mlp-s7", "p.json"))
	if err := json.Unmarshal(data, &p); err != nil || p["lr"] != 0.5 || p["model"] != "mlp" || p["seed"] != 7.0 {
		t.Fatalf("params.json = %s (%v)", data, err)
	}
}

func TestSoonerRetryIsNotHeldBehindALaterOne(t *testing.T) {
	// slow fails at once and retries after 2s; quick fails a little later and retries after
	// 50ms. quick's whole second attempt must come before slow's.
	spec := `[
	  {"name":"slow","cmd":"test $JIKKEN_ATTEMPT = 2","retries":1,"backoff":2},
	  {"name":"quick","cmd":"sleep 0.2; test $JIKKEN_ATTEMPT = 2","retries":1,"backoff":0.05}
	]`
	sum, _, _ := run(t, spec, nil)
	slow, quick := sum.Trials[0], sum.Trials[1]
	if slow.Status != store.Succeeded || quick.Status != store.Succeeded || len(slow.Attempts) != 2 || len(quick.Attempts) != 2 {
		t.Fatalf("records: %+v / %+v", slow, quick)
	}
	// Held behind slow's timer, quick's retry would start together with slow's.
	if !quick.Attempts[1].Finished.Before(slow.Attempts[1].Started) {
		t.Fatalf("quick's retry ended at %s, after slow's retry started at %s", quick.Attempts[1].Finished, slow.Attempts[1].Started)
	}
}

func TestStoreCredentialsDoNotReachTrials(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "runner-secret")
	t.Setenv("AWS_REGION", "eu-west-1")
	spec := `[
	  {"name":"plain","cmd":"echo secret=${AWS_SECRET_ACCESS_KEY:-unset} region=$AWS_REGION"},
	  {"name":"asked","cmd":"echo secret=$AWS_SECRET_ACCESS_KEY","env":{"AWS_SECRET_ACCESS_KEY":"trial-own"}}
	]`
	sum, runs, _ := run(t, spec, nil)
	ctx := context.Background()
	plain, _ := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "plain", "stdout.log"))
	asked, _ := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, "asked", "stdout.log"))
	if string(plain) != "secret=unset region=eu-west-1\n" || string(asked) != "secret=trial-own\n" {
		t.Fatalf("plain: %q, asked: %q", plain, asked)
	}
}

func TestReusedAttemptFoldersStartEmptyAndNoneAreLeft(t *testing.T) {
	// Odd trials leave a file and a folder of outputs, even ones nothing: an attempt must never
	// see an earlier attempt's outputs, whether its folder was new or reused.
	spec := `{"name":"t","matrix":{"name":"t","params":{"i":[1,2,3,4,5,6,7,8,9,10,11,12]},
	  "cmd":"test -z \"$(ls -A \"$JIKKEN_OUTPUT_DIR\")\" || exit 9; [ $(({{i}} % 2)) = 0 ] || { mkdir \"$JIKKEN_OUTPUT_DIR/sub\"; echo {{i}} > \"$JIKKEN_OUTPUT_DIR/sub/x\"; echo {{i}} > \"$JIKKEN_OUTPUT_DIR/y\"; }"}}`
	var work string
	sum, runs, _ := run(t, spec, func(r *runner.Runner) { work = r.WorkRoot })
	if sum.Status != store.Succeeded {
		t.Fatalf("run %s: %v", sum.Status, statuses(sum))
	}
	for _, rec := range sum.Trials {
		var i int
		fmt.Sscanf(rec.Name, "t-%d", &i)
		if i%2 == 1 {
			if _, err := runs.Blob.Stat(context.Background(), store.TrialKey(sum.RunID, rec.Name, "sub/x")); err != nil {
				t.Errorf("%s: sub/x not stored: %v", rec.Name, err)
			}
		}
	}
	left := func() []string {
		names, _ := filepath.Glob(filepath.Join(work, sum.RunID, "*"))
		hidden, _ := filepath.Glob(filepath.Join(work, sum.RunID, ".*"))
		return append(names, hidden...)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("the run's work folder still holds %v", l)
	}

	// A free folder a killed runner left is removed by the next runner of the run.
	if err := os.MkdirAll(filepath.Join(work, sum.RunID, ".free-3", "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := runs.Manifest(context.Background(), sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 2, WorkRoot: work, StopGrace: time.Second}
	if _, err := r.Execute(context.Background(), m, true); err != nil {
		t.Fatal(err)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("after resume the run's work folder still holds %v", l)
	}
}

// countScript counts to 100, saving its step in $JIKKEN_CHECKPOINT_DIR every 10 steps and
// starting from the saved step; its first attempt is SIGKILLed at step 35 by no one the runner
// knows (a preemption, as a host that reclaims its machines does it).
const countScript = `ck=\"$JIKKEN_CHECKPOINT_DIR/step\"; i=0; [ -f \"$ck\" ] && i=$(cat \"$ck\"); ` +
	`echo \"attempt $JIKKEN_ATTEMPT resumed=${JIKKEN_RESUMED:-0} from step $i\"; ` +
	`while [ $i -lt 100 ]; do i=$((i+1)); ` +
	`if [ $((i % 10)) -eq 0 ] && [ -n \"$JIKKEN_CHECKPOINT_DIR\" ]; then echo $i > \"$ck.tmp\"; mv \"$ck.tmp\" \"$ck\"; fi; ` +
	`if [ $i -eq 35 ] && [ $JIKKEN_ATTEMPT = 1 ]; then kill -9 $$; fi; done; echo \"done at step $i\"`

// TestPreemptibleContinuesFromCheckpoint: a preemptible trial killed from outside starts again
// without using a retry, from its checkpoint folder (its own log says so); the record tells the
// interruption, the checkpoint each attempt started from, and the compute lost.
func TestPreemptibleContinuesFromCheckpoint(t *testing.T) {
	sum, runs, _ := run(t, `[{"name":"count","cmd":"`+countScript+`","preemptible":true}]`, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 2 {
		t.Fatalf("status %s after %d attempts: %q", rec.Status, len(rec.Attempts), rec.Reason)
	}
	a1, a2 := rec.Attempts[0], rec.Attempts[1]
	if !a1.Requeued || a1.Interrupted != "preempted" || a1.Checkpoint != 0 || a1.CheckpointEnd != 1 || a2.Checkpoint != 1 {
		t.Fatalf("attempts: %+v\n%+v", a1, a2)
	}
	if c := rec.Compute; c == nil || c.Lost <= 0 || c.Lost >= c.Spent {
		t.Fatalf("compute: %+v", rec.Compute)
	}
	out, err := store.ReadAll(context.Background(), runs.Blob, store.TrialKey(sum.RunID, "count", "stdout.log"))
	if err != nil || !strings.Contains(string(out), "attempt 2 resumed=1 from step 30") || !strings.Contains(string(out), "done at step 100") {
		t.Fatalf("stdout of the second attempt: %q %v", out, err)
	}
}

// TestNotPreemptibleFailsAsBefore: the same kill fails a trial that is not preemptible, as any
// other killed attempt, and it gets no checkpoint folder.
func TestNotPreemptibleFailsAsBefore(t *testing.T) {
	sum, runs, _ := run(t, `[{"name":"count","cmd":"`+countScript+`"}]`, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Failed || len(rec.Attempts) != 1 || rec.Attempts[0].Requeued || rec.Reason != "killed by signal killed" {
		t.Fatalf("status %s after %d attempts: %q", rec.Status, len(rec.Attempts), rec.Reason)
	}
	out, _ := store.ReadAll(context.Background(), runs.Blob, store.TrialKey(sum.RunID, "count", "stdout.log"))
	if !strings.Contains(string(out), "attempt 1 resumed=0 from step 0") {
		t.Fatalf("stdout: %q", out)
	}
}

// TestWarnedTimeLimit: a preemptible trial with a timeout is warned with its checkpoint signal
// before the timeout, saves and leaves; the time limit requeues it, and the next attempt goes on
// from the saved step and finishes.
func TestWarnedTimeLimit(t *testing.T) {
	script := `ck=\"$JIKKEN_CHECKPOINT_DIR/step\"; i=0; [ -f \"$ck\" ] && i=$(cat \"$ck\"); ` +
		`echo \"attempt $JIKKEN_ATTEMPT from step $i\"; ` +
		`trap 'echo $i > \"$ck.tmp\"; mv \"$ck.tmp\" \"$ck\"; echo \"warned at step $i\"; exit 0' USR1; ` +
		`while [ $i -lt 20 ]; do i=$((i+1)); if [ $JIKKEN_ATTEMPT = 1 ] && [ $i = 10 ]; then while :; do sleep 0.05; done; fi; done; echo \"done at step $i\"`
	sum, runs, _ := run(t, `[{"name":"w","cmd":"`+script+`","preemptible":true,"timeout":"3s","checkpoint":{"signal":"USR1","before":"2s"}}]`, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 2 || rec.Attempts[0].Interrupted != "time limit" || !rec.Attempts[0].Requeued {
		t.Fatalf("status %s after %d attempts: %+v", rec.Status, len(rec.Attempts), rec.Attempts)
	}
	first, _ := store.ReadAll(context.Background(), runs.Blob, store.TrialKey(sum.RunID, "w", "attempts/1/stdout.log"))
	out, _ := store.ReadAll(context.Background(), runs.Blob, store.TrialKey(sum.RunID, "w", "stdout.log"))
	if !strings.Contains(string(first), "warned at step 10") || !strings.Contains(string(out), "attempt 2 from step 10") {
		t.Fatalf("first attempt: %q\nsecond: %q", first, out)
	}
}

// TestCheckpointOverItsCap: a checkpoint folder over its cap is noted in the attempt's record.
func TestCheckpointOverItsCap(t *testing.T) {
	sum, _, _ := run(t, `[{"name":"big","cmd":"head -c 5000 /dev/zero > \"$JIKKEN_CHECKPOINT_DIR/big\"","checkpoint":{"max_size":"4Ki"}}]`, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 1 || len(rec.Attempts[0].Notes) != 1 || !strings.Contains(rec.Attempts[0].Notes[0], "over its cap of 4KiB") {
		t.Fatalf("record: %s %+v", rec.Status, rec.Attempts)
	}
}

//go:build unix

package executor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/checkpoint"
)

// TestCheckpointAcrossAttempts runs two attempts of a trial through the executor, as two pods
// would: the first saves step 10 in its checkpoint folder, which the executor uploads while it
// runs; then it is warned (the signal a deleted pod or a batch system's warning sends), saves
// its last step and exits; the executor uploads that too. The second attempt, in a fresh
// folder, finds the last step restored, JIKKEN_RESUMED=1, and finishes from there.
func TestCheckpointAcrossAttempts(t *testing.T) {
	b := openStore(t)
	ctx := context.Background()
	script := `ck="$JIKKEN_CHECKPOINT_DIR/step"; i=0; [ -f "$ck" ] && i=$(cat "$ck")
echo "attempt $JIKKEN_ATTEMPT resumed=${JIKKEN_RESUMED:-0} from step $i"
trap 'i=$((i < 37 ? i : 37)); echo $i > "$ck.tmp"; mv "$ck.tmp" "$ck"; echo "warned at step $i"; exit 143' USR2
while [ $i -lt 100 ]; do
  i=$((i+1))
  if [ $i -eq 10 ]; then echo $i > "$ck.tmp"; mv "$ck.tmp" "$ck"; fi
  if [ $JIKKEN_ATTEMPT = 1 ] && [ $i -ge 37 ]; then [ $i = 37 ] && echo "holding at step 37"; i=38; sleep 0.05; continue; fi
done
echo "done at step $i"`
	attempt := func(n int, during func(logDir string)) (Result, string) {
		logDir := t.TempDir()
		out := filepath.Join(t.TempDir(), "out")
		var stderr bytes.Buffer
		done := make(chan struct{})
		var res Result
		go func() {
			defer close(done)
			var err error
			res, err = Run(ctx, Options{
				Argv: []string{"/bin/sh", "-c", script}, Env: append(os.Environ(), "JIKKEN_ATTEMPT="+string(rune('0'+n))),
				Store: b, RunID: "r1", Trial: "t1", Attempt: n, OutputDir: out, LogDir: logDir, FlushEvery: -1, LiveEvery: -1,
				Stderr:     &stderr,
				Signals:    []os.Signal{syscall.SIGUSR2},
				Checkpoint: &Checkpoint{Dir: filepath.Join(t.TempDir(), "ck"), Every: 20 * time.Millisecond},
			})
			if err != nil {
				t.Error(err)
			}
		}()
		if during != nil {
			during(logDir)
		}
		<-done
		log, _ := os.ReadFile(filepath.Join(logDir, "stdout.log"))
		return res, string(log) + stderr.String()
	}
	remote := checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("r1", "t1")}
	res, log := attempt(1, func(logDir string) {
		// The periodic upload brings step 10 to the store while the trial runs; the trial
		// then holds at step 37 until it is warned.
		for {
			if b, _ := os.ReadFile(filepath.Join(logDir, "stdout.log")); strings.Contains(string(b), "holding at step 37") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for {
			m, err := remote.Latest(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			if m != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	})
	if res.ExitCode != 143 || !strings.Contains(log, "warned at step 37") {
		t.Fatalf("first attempt: %+v\n%s", res, log)
	}
	m, err := remote.Latest(ctx)
	// Step 10 went up while it ran, step 37 once it ended (and maybe a half-written step.tmp
	// in between: the trial renames its saves into place, so each version holds whole files).
	if err != nil || m == nil || m.Version < 2 || m.Attempt != 1 {
		t.Fatalf("after the first attempt: %+v %v\n%s", m, err, log)
	}
	res, log = attempt(2, nil)
	if res.ExitCode != 0 || !strings.Contains(log, "attempt 2 resumed=1 from step 37") || !strings.Contains(log, "done at step 100") ||
		!strings.Contains(log, fmt.Sprintf("restored checkpoint version %d ", m.Version)) {
		t.Fatalf("second attempt: %+v\n%s", res, log)
	}
}

// TestCheckpointTooLarge: a folder over the cap is not uploaded; the trial's log and the
// result's notes say so, and the last good version stays.
func TestCheckpointTooLarge(t *testing.T) {
	b := openStore(t)
	var stderr bytes.Buffer
	res, err := Run(context.Background(), Options{
		Argv:  []string{"/bin/sh", "-c", `head -c 5000 /dev/zero > "$JIKKEN_CHECKPOINT_DIR/big"`},
		Store: b, RunID: "r1", Trial: "t1", Attempt: 1, OutputDir: filepath.Join(t.TempDir(), "out"), FlushEvery: -1, LiveEvery: -1,
		Stderr:     &stderr,
		Checkpoint: &Checkpoint{Dir: filepath.Join(t.TempDir(), "ck"), Max: 4096},
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !strings.Contains(stderr.String(), "over its cap of 4096") || len(res.Notes) != 1 {
		t.Fatalf("stderr %q, notes %q", stderr.String(), res.Notes)
	}
	if m, _ := (checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("r1", "t1")}).Latest(context.Background()); m != nil {
		t.Fatalf("a checkpoint over its cap was saved: %+v", m)
	}
}

// TestCheckpointUploadedAfterWarning: a trial that saves on its warning but does not leave has
// its folder uploaded within its before, while it still runs, so what it saved reaches the
// store before SIGKILL would end the executor with it.
func TestCheckpointUploadedAfterWarning(t *testing.T) {
	b := openStore(t)
	ctx := context.Background()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `echo $$ > ` + pidFile + `; ck="$JIKKEN_CHECKPOINT_DIR/step"
trap 'echo warned > "$ck.tmp"; mv "$ck.tmp" "$ck"' USR2
while :; do sleep 0.05; done`
	done := make(chan Result)
	go func() {
		res, err := Run(ctx, Options{
			Argv: []string{"/bin/sh", "-c", script}, Env: os.Environ(),
			Store: b, RunID: "r1", Trial: "t1", Attempt: 1, OutputDir: filepath.Join(t.TempDir(), "out"), FlushEvery: -1, LiveEvery: -1,
			Signals:    []os.Signal{syscall.SIGUSR2},
			Checkpoint: &Checkpoint{Dir: filepath.Join(t.TempDir(), "ck"), Before: 200 * time.Millisecond},
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	remote := checkpoint.Remote{Blob: b, Prefix: checkpoint.Key("r1", "t1")}
	for {
		m, err := remote.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m != nil && len(m.Files) == 1 && m.Files[0].Path == "step" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid, _ := os.ReadFile(pidFile)
	n := 0
	fmt.Sscan(string(pid), &n)
	_ = syscall.Kill(n, syscall.SIGKILL)
	if res := <-done; res.ExitCode != 128+9 {
		t.Fatalf("the trial ended %+v", res)
	}
}

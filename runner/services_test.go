//go:build unix

package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// A health probe command that hangs does not hold the check past its deadline.
func TestHangingHealthProbeDoesNotHangTheRun(t *testing.T) {
	spec := `[
	  {"name":"svc","cmd":"sleep 60","service":true,"health":{"cmd":"sleep 600","timeout":1}},
	  {"name":"client","cmd":"true","depends":["svc"]}
	]`
	sum, _, _ := run(t, spec, nil)
	if st := statuses(sum); st["svc"] != store.Failed || st["client"] != store.Skipped {
		t.Fatalf("statuses = %v", st)
	}
}

// restart: on-failure starts a service again when it fails, as compose does; the dependant
// waits for it to be healthy again.
func TestServiceRestartsOnFailure(t *testing.T) {
	spec := `[
	  {"name":"svc","cmd":"test $JIKKEN_ATTEMPT -ge 2 || exit 3; exec sleep 60","service":true,"restart":"on-failure","backoff":0.05,
	   "health":{"cmd":"test $JIKKEN_ATTEMPT -ge 2","interval":0.05}},
	  {"name":"client","cmd":"true","depends":["svc"]}
	]`
	sum, _, _ := run(t, spec, nil)
	st := statuses(sum)
	if st["svc"] != store.Stopped || st["client"] != store.Succeeded {
		t.Fatalf("statuses = %v (svc: %q)", st, sum.Trials[0].Reason)
	}
	if n := len(sum.Trials[0].Attempts); n != 2 {
		t.Fatalf("service attempts = %d", n)
	}
}

// Values substituted into a string cmd cannot run commands, whatever they hold and wherever
// the placeholder stands (bare, in double or in single quotes): the trial sees the value.
func TestParamsCannotRunCommands(t *testing.T) {
	payloads := []string{"0.1; touch pwned-semicolon", "$(touch pwned-subst)", "`touch pwned-backtick`",
		"x\ntouch pwned-newline", "a' ; touch pwned-quote ; '", `a" ; touch pwned-dquote ; "`, "&& touch pwned-and", "| touch pwned-pipe"}
	var quoted []string
	for _, p := range payloads {
		quoted = append(quoted, strconv.Quote(p))
	}
	spec := `{"matrix":{"name":"m","params":{"p":[` + strings.Join(quoted, ",") + `]},
	  "cmd":"printf '%s|' {{p}} > $JIKKEN_OUTPUT_DIR/bare; printf '%s|' \"{{p}}\" > $JIKKEN_OUTPUT_DIR/double; printf '%s|' '{{p}}' > $JIKKEN_OUTPUT_DIR/single"}}`
	sum, runs, dir := run(t, spec, nil)
	if sum.Status != store.Succeeded {
		t.Fatalf("run %s: %+v", sum.Status, statuses(sum))
	}
	pwned, _ := filepath.Glob(filepath.Join(dir, "pwned-*"))
	if len(pwned) > 0 {
		t.Fatalf("params ran commands: %v", pwned)
	}
	ctx := context.Background()
	for i, rec := range sum.Trials {
		for _, f := range []string{"bare", "double", "single"} {
			got, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(sum.RunID, rec.Name, f))
			if err != nil {
				t.Fatal(err)
			}
			if want := payloads[i] + "|"; string(got) != want {
				t.Errorf("payload %q, %s: the trial saw %q", payloads[i], f, got)
			}
		}
	}
}

// A trial's child that left its process group (setsid) is stopped with the trial: on a
// timeout, and when the trial ends by itself.
func TestProcessesThatLeaveTheGroupAreStopped(t *testing.T) {
	spec := `[
	  {"name":"hangs","cmd":"setsid sleep 300 & echo $! > hangs.pid; sleep 60","timeout":1},
	  {"name":"leaves","cmd":"setsid sleep 300 & echo $! > leaves.pid"}
	]`
	_, _, dir := run(t, spec, nil)
	for _, name := range []string{"hangs", "leaves"} {
		data, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s: its child %d outlived the run", name, pid)
		}
	}
}

func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

// An output the runner cannot store (a symbolic link) is noted in the trial's record.
func TestSkippedOutputsAreNoted(t *testing.T) {
	spec := `[{"name":"ln","cmd":"echo x > $JIKKEN_OUTPUT_DIR/real; ln -s /etc/hostname $JIKKEN_OUTPUT_DIR/link"}]`
	sum, _, _ := run(t, spec, nil)
	rec := sum.Trials[0]
	if rec.Status != store.Succeeded || len(rec.Attempts) != 1 {
		t.Fatalf("record = %+v", rec)
	}
	notes := strings.Join(rec.Attempts[0].Notes, "\n")
	if !strings.Contains(notes, "output link not stored: a symbolic link (to /etc/hostname)") {
		t.Fatalf("notes = %q", notes)
	}
}

// Health goes on after the first pass: a service whose probe keeps failing once it was healthy
// is stopped and, with restart: on-failure, started again while its dependant runs.
func TestServiceThatTurnsUnhealthyIsRestarted(t *testing.T) {
	spec := `[
	  {"name":"svc","cmd":"exec sleep 60","service":true,"restart":"on-failure","backoff":0.1,
	   "health":{"cmd":"test ! -e down-$JIKKEN_ATTEMPT","interval":0.05}},
	  {"name":"client","cmd":"sleep 0.5; touch down-1; sleep 3","depends":["svc"]}
	]`
	sum, _, _ := run(t, spec, nil)
	st := statuses(sum)
	if st["svc"] != store.Stopped || st["client"] != store.Succeeded {
		t.Fatalf("statuses = %v (svc: %q)", st, sum.Trials[0].Reason)
	}
	a := sum.Trials[0].Attempts
	if len(a) != 2 || !strings.HasPrefix(a[0].Reason, "not healthy any more: 3 probes in a row failed") {
		t.Fatalf("service attempts: %+v", a)
	}
}

// health: {http: URL} passes on a 2xx or 3xx answer; a 404 never does.
func TestHTTPHealthCheck(t *testing.T) {
	spec := `[
	  {"name":"web","cmd":"exec python3 -m http.server 47313 --bind 127.0.0.1","service":true,
	   "health":{"http":"http://127.0.0.1:47313/","interval":0.05}},
	  {"name":"client","cmd":"true","depends":["web"]}
	]`
	sum, _, _ := run(t, spec, nil)
	if st := statuses(sum); st["web"] != store.Stopped || st["client"] != store.Succeeded {
		t.Fatalf("statuses = %v (web: %q)", st, sum.Trials[0].Reason)
	}
	spec = `[
	  {"name":"web","cmd":"exec python3 -m http.server 47314 --bind 127.0.0.1","service":true,
	   "health":{"http":"http://127.0.0.1:47314/missing","interval":0.05,"timeout":2}},
	  {"name":"client","cmd":"true","depends":["web"]}
	]`
	sum, _, _ = run(t, spec, nil)
	if st := statuses(sum); st["web"] != store.Failed || st["client"] != store.Skipped {
		t.Fatalf("statuses = %v (web: %q)", st, sum.Trials[0].Reason)
	}
	if r := sum.Trials[0].Reason; !strings.Contains(r, "(health check: http http://127.0.0.1:47314/missing)") {
		t.Fatalf("web reason = %q", r)
	}
}

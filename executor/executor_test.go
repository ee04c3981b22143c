package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

func openStore(t *testing.T) store.Blob {
	t.Helper()
	b, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func get(t *testing.T, b store.Blob, trial, name string) string {
	t.Helper()
	data, err := store.ReadAll(context.Background(), b, store.TrialKey("r1", trial, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(data)
}

func TestRunUploadsOutputsAndLogs(t *testing.T) {
	b := openStore(t)
	out := filepath.Join(t.TempDir(), "out")
	params := filepath.Join(t.TempDir(), "params.json")
	script := `echo hello; echo oops >&2; echo '::metric acc=0.5 step=2'
mkdir -p "$JIKKEN_OUTPUT_DIR/artifacts"
echo '{"loss":0.25}' > "$JIKKEN_OUTPUT_DIR/result.json"
echo model > "$JIKKEN_OUTPUT_DIR/artifacts/model.bin"
echo mine > "$JIKKEN_OUTPUT_DIR/stdout.log"
cat "$JIKKEN_PARAMS"`
	var console bytes.Buffer
	res, err := Run(context.Background(), Options{
		Argv: []string{"/bin/sh", "-c", script}, Env: append(os.Environ(), "JIKKEN_OUTPUT_DIR="+out, "JIKKEN_PARAMS="+params),
		Store: b, RunID: "r1", Trial: "t1", OutputDir: out,
		Params: []byte(`{"lr":0.1}`), ParamsPath: params,
		ScanStdoutMetrics: true, Stdout: &console, FlushEvery: -1,
	})
	if err != nil || res.ExitCode != 0 || res.Upload != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !strings.Contains(console.String(), "hello") {
		t.Errorf("console did not get the command's stdout: %q", console.String())
	}
	if got := get(t, b, "t1", "stdout.log"); !strings.HasPrefix(got, "hello\n") || !strings.Contains(got, `{"lr":0.1}`) {
		t.Errorf("stdout.log = %q", got)
	}
	if got := get(t, b, "t1", "stderr.log"); got != "oops\n" {
		t.Errorf("stderr.log = %q", got)
	}
	if got := get(t, b, "t1", "result.json"); got != "{\"loss\":0.25}\n" {
		t.Errorf("result.json = %q", got)
	}
	if got := get(t, b, "t1", "artifacts/model.bin"); got != "model\n" {
		t.Errorf("artifact = %q", got)
	}
	if got := get(t, b, "t1", "artifacts/stdout.log"); got != "mine\n" {
		t.Errorf("a trial's own stdout.log should be kept under artifacts/, got %q", got)
	}
	var m struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Step  int64   `json:"step"`
	}
	if err := json.Unmarshal([]byte(get(t, b, "t1", "metrics.jsonl")), &m); err != nil || m.Name != "acc" || m.Value != 0.5 || m.Step != 2 {
		t.Errorf("metrics.jsonl = %+v, %v", m, err)
	}
	if got := get(t, b, "t1", "params.json"); got != `{"lr":0.1}` {
		t.Errorf("params.json = %q", got)
	}
	if _, err := b.Stat(context.Background(), store.TrialKey("r1", "t1", "trial.json")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("trial.json written without Record: %v", err)
	}
}

func TestRunWithoutScanLeavesMetricsToTheRunner(t *testing.T) {
	b := openStore(t)
	out := t.TempDir()
	res, err := Run(context.Background(), Options{
		Argv: []string{"/bin/sh", "-c", "echo '::metric acc=1'"}, Store: b, RunID: "r1", Trial: "t", OutputDir: out, FlushEvery: -1,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if _, err := b.Stat(context.Background(), store.TrialKey("r1", "t", "metrics.jsonl")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("metrics.jsonl uploaded although scanning was off: %v", err)
	}
}

func TestRunRecordsFailureWithExitCode(t *testing.T) {
	b := openStore(t)
	seed := int64(7)
	res, err := Run(context.Background(), Options{
		Argv: []string{"/bin/sh", "-c", "exit 3"}, Store: b, RunID: "r1", Trial: "t", OutputDir: t.TempDir(), Attempt: 2, FlushEvery: -1,
		Record: &store.TrialRecord{Index: 4, Seed: &seed, Backend: "argo"},
	})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	var rec store.TrialRecord
	if err := json.Unmarshal([]byte(get(t, b, "t", "trial.json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.Failed || rec.ExitCode == nil || *rec.ExitCode != 3 || rec.Index != 4 || rec.Run != "r1" ||
		len(rec.Attempts) != 1 || rec.Attempts[0].N != 2 || rec.Reason != "exit status 3" {
		t.Errorf("record = %+v", rec)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	b := openStore(t)
	res, err := Run(context.Background(), Options{
		Argv: []string{"/no/such/program"}, Store: b, RunID: "r1", Trial: "t", OutputDir: t.TempDir(), FlushEvery: -1,
		Record: &store.TrialRecord{},
	})
	if err != nil || res.ExitCode != 127 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := get(t, b, "t", "stderr.log"); !strings.Contains(got, "/no/such/program") {
		t.Errorf("stderr.log should say what could not start: %q", got)
	}
}

// failingBlob refuses every write, as a store with wrong credentials does.
type failingBlob struct{ store.Blob }

func (failingBlob) Put(context.Context, string, io.Reader, int64) error {
	return errors.New("access denied")
}

func TestRunReportsUploadFailure(t *testing.T) {
	b := failingBlob{openStore(t)}
	res, err := Run(context.Background(), Options{
		Argv: []string{"/bin/true"}, Store: b, RunID: "r1", Trial: "t", OutputDir: t.TempDir(), FlushEvery: -1,
	})
	if err != nil || res.ExitCode != 0 || res.Upload == nil || !strings.Contains(res.Upload.Error(), "access denied") {
		t.Fatalf("Run = %+v, %v; want the upload error reported", res, err)
	}
}

func TestInstallCopiesOwnBinary(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "bin", "jikken")
	if err := Install(dest); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Mode()&0o100 == 0 || st.Size() == 0 {
		t.Fatalf("installed binary: %v %v", st, err)
	}
}

// TestRunKeepsStoreCredentialsFromTheTrial: the executor's environment holds the store's
// credentials (a Secret on Kubernetes); the trial's does not, whatever it prints or writes.
func TestRunKeepsStoreCredentialsFromTheTrial(t *testing.T) {
	b := openStore(t)
	out := filepath.Join(t.TempDir(), "out")
	const secret = "s3cr3t-value-42"
	env := append(os.Environ(), "JIKKEN_OUTPUT_DIR="+out, "AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY="+secret,
		"AWS_SESSION_TOKEN="+secret+"-token", "JIKKEN_S3_CONFIG=/etc/jikken/s3.json", "KEEP_ME=1")
	var console bytes.Buffer
	res, err := Run(context.Background(), Options{
		Argv: []string{"/bin/sh", "-c", `env; env >&2; env > "$JIKKEN_OUTPUT_DIR/env.txt"`}, Env: env,
		Store: b, RunID: "r1", Trial: "t1", OutputDir: out, Stdout: &console, Stderr: &console, FlushEvery: -1,
	})
	if err != nil || res.ExitCode != 0 || res.Upload != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for name, got := range map[string]string{"console": console.String(), "stdout.log": get(t, b, "t1", "stdout.log"),
		"stderr.log": get(t, b, "t1", "stderr.log"), "env.txt": get(t, b, "t1", "env.txt")} {
		if !strings.Contains(got, "KEEP_ME=1") {
			t.Errorf("%s lacks the rest of the environment:\n%s", name, got)
		}
		for _, v := range []string{secret, "AKIDTEST", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "JIKKEN_S3_CONFIG"} {
			if strings.Contains(got, v) {
				t.Errorf("%s shows %s", name, v)
			}
		}
	}
}

// TestRunOutputsFollowTheTrialContract: trial-exec stores outputs as the runner collects them: a
// trial's own attempts/1/stdout.log goes under artifacts/, never over the key where attempt 1's
// log is kept, and a symbolic link is left out with a note (in the result, the stored stderr and
// the record), not silently.
func TestRunOutputsFollowTheTrialContract(t *testing.T) {
	ctx := context.Background()
	b := openStore(t)
	kept := store.TrialKey("r1", "t1", "attempts/1/stdout.log")
	if err := b.Put(ctx, kept, strings.NewReader("attempt 1\n"), 10); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	script := `mkdir -p "$JIKKEN_OUTPUT_DIR/attempts/1"
echo mine > "$JIKKEN_OUTPUT_DIR/attempts/1/stdout.log"
ln -s /etc/hostname "$JIKKEN_OUTPUT_DIR/link"`
	res, err := Run(ctx, Options{
		Argv: []string{"/bin/sh", "-c", script}, Env: append(os.Environ(), "JIKKEN_OUTPUT_DIR="+out),
		Store: b, RunID: "r1", Trial: "t1", OutputDir: out, FlushEvery: -1, Attempt: 2,
		Record: &store.TrialRecord{},
	})
	if err != nil || res.ExitCode != 0 || res.Upload != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if got := get(t, b, "t1", "attempts/1/stdout.log"); got != "attempt 1\n" {
		t.Errorf("attempt 1's log = %q, want it untouched", got)
	}
	if got := get(t, b, "t1", "artifacts/attempts/1/stdout.log"); got != "mine\n" {
		t.Errorf("artifacts/attempts/1/stdout.log = %q", got)
	}
	const note = "output link not stored: a symbolic link (to /etc/hostname)"
	if len(res.Notes) != 1 || !strings.HasPrefix(res.Notes[0], note) {
		t.Errorf("notes = %q, want %q", res.Notes, note)
	}
	if got := get(t, b, "t1", "stderr.log"); !strings.Contains(got, note) {
		t.Errorf("stderr.log = %q, want the note", got)
	}
	var rec store.TrialRecord
	if err := json.Unmarshal([]byte(get(t, b, "t1", "trial.json")), &rec); err != nil || len(rec.Attempts) != 1 ||
		len(rec.Attempts[0].Notes) != 1 || !strings.HasPrefix(rec.Attempts[0].Notes[0], note) {
		t.Errorf("record = %+v, %v; want the note on its attempt", rec, err)
	}
}

package storecmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// result is what one jikken command did.
type result struct {
	code           int
	stdout, stderr string
}

// jikken runs the CLI in-process in the current directory.
func jikken(t *testing.T, args ...string) result {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code := cli.Run(context.Background(), ios, args)
	t.Logf("jikken %s -> %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	return result{code, out.String(), errOut.String()}
}

func must(t *testing.T, args ...string) result {
	t.Helper()
	r := jikken(t, args...)
	if r.code != 0 {
		t.Fatalf("jikken %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// servers runs fn against the in-process fake and, when its binary is present (always under
// CI=true), a real MinIO.
func servers(t *testing.T, fn func(t *testing.T, srv *s3test.Server)) {
	t.Run("fake", func(t *testing.T) { fn(t, s3test.Fake(t)) })
	t.Run("minio", func(t *testing.T) { fn(t, s3test.MinIO(t)) })
}

// isolate gives the test a fresh working directory and HOME (so no local state is shared
// between "machines"), with the S3 environment of srv.
func isolate(t *testing.T, srv *s3test.Server) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, ".home"))
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("JIKKEN_STORE", "")
	t.Setenv("JIKKEN_JOBS", "2")
	if srv != nil {
		srv.Setenv(t)
	}
	t.Chdir(dir)
	return dir
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sweep is an experiment whose trials write metrics (both ways), a result and artifacts with
// spaces and non-ASCII letters in their names.
const sweep = `{
  name: "sweep",
  matrix: {
    name: "t",
    params: { algo: ["a", "b"] },
    seeds: 2,
    cmd: "sh emit.sh {{algo}}",
  },
}
`

const emit = `bonus=0
[ "$1" = b ] && bonus=1
echo "::metric score=$((JIKKEN_SEED * 10 + bonus)) step=1"
echo '{"name":"loss","value":0.5,"step":1,"ts":1767225600123}' >> "$JIKKEN_OUTPUT_DIR/metrics.jsonl"
echo '{"name":"loss","value":"NaN","step":2,"ts":1767225600124}' >> "$JIKKEN_OUTPUT_DIR/metrics.jsonl"
echo "{\"acc\": 0.$((JIKKEN_SEED + 5))}" > "$JIKKEN_OUTPUT_DIR/result.json"
mkdir -p "$JIKKEN_OUTPUT_DIR/artifacts/plots"
echo "figure $1" > "$JIKKEN_OUTPUT_DIR/artifacts/plots/ü nicode figure.svg"
echo "log of $1 on stderr" >&2
`

// readCommands are the commands whose answers must not depend on the store or the machine.
var readCommands = [][]string{
	{"results", "latest", "-o", "csv"},
	{"results", "latest", "-o", "json"},
	{"status", "latest"},
	{"logs", "latest", "t-b-s1"},
	{"logs", "latest", "t-a-s0", "--stderr"},
}

func answers(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	for _, args := range readCommands {
		out = append(out, must(t, append(args, "--store", store)...).stdout)
	}
	return out
}

// TestRunIntoS3ReadElsewhere runs an experiment straight into s3://, then reads it from a
// second, empty working directory with another HOME, and from a folder copy made by sync: all
// give the same answers.
func TestRunIntoS3ReadElsewhere(t *testing.T) {
	servers(t, func(t *testing.T, srv *s3test.Server) {
		bucket := srv.NewBucket()
		url := "s3://" + bucket + "/team/results"
		dir := isolate(t, srv)
		writeFile(t, filepath.Join(dir, "exp.jsonnet"), sweep)
		writeFile(t, filepath.Join(dir, "emit.sh"), emit)
		r := must(t, "run", "exp.jsonnet", "--store", url, "-j", "2")
		if !strings.Contains(r.stdout, "4 trials, 4 succeeded") {
			t.Fatalf("run: %s", r.stdout)
		}
		here := answers(t, url)
		if !strings.Contains(here[0], "trial,status,algo,seed,acc,loss,score") || !strings.Contains(here[0], "t-b-s1,succeeded,b,1,0.6,NaN,11") {
			t.Fatalf("results csv:\n%s", here[0])
		}
		if !strings.Contains(here[3], "::metric score=11") || !strings.Contains(here[4], "log of a on stderr") {
			t.Fatalf("logs: %q %q", here[3], here[4])
		}
		keys := strings.Join(srv.Keys(bucket), "\n")
		if !strings.Contains(keys, "/trials/t-a-s0/artifacts/plots/ü nicode figure.svg") {
			t.Errorf("artifact with an odd name missing from the bucket:\n%s", keys)
		}
		for _, k := range srv.Keys(bucket) {
			if !strings.HasPrefix(k, "team/results/runs/") {
				t.Errorf("object %q outside the store's prefix", k)
			}
			if body := srv.Read(bucket, k); strings.Contains(body, s3test.SecretKey) {
				t.Errorf("object %q holds the secret key", k)
			}
		}

		// Another machine: a fresh directory and HOME, nothing but the URL and the environment.
		isolate(t, srv)
		if there := answers(t, url); strings.Join(there, "\x00") != strings.Join(here, "\x00") {
			t.Fatalf("answers differ from another directory:\n%q\n%q", here, there)
		}
		runs := must(t, "runs", "--store", url).stdout
		if !strings.Contains(runs, "sweep") {
			t.Fatalf("runs: %s", runs)
		}

		// The same run copied into a folder answers the same.
		folder := filepath.Join(t.TempDir(), "copy")
		must(t, "store", "sync", "latest", "--from", url, "--to", folder)
		if local := answers(t, folder); strings.Join(local, "\x00") != strings.Join(here, "\x00") {
			t.Fatalf("answers differ in the folder copy:\n%q\n%q", here, local)
		}
	})
}

// TestSyncFolderToS3 syncs a laptop run into a bucket, twice (the second copies nothing), and
// reads it back.
func TestSyncFolderToS3(t *testing.T) {
	servers(t, func(t *testing.T, srv *s3test.Server) {
		bucket := srv.NewBucket()
		url := "s3://" + bucket + "/jikken"
		dir := isolate(t, srv)
		writeFile(t, filepath.Join(dir, "exp.jsonnet"), sweep)
		writeFile(t, filepath.Join(dir, "emit.sh"), emit)
		local := filepath.Join(dir, ".jikken")
		must(t, "run", "exp.jsonnet", "--store", local)
		want := answers(t, local)

		r := must(t, "store", "sync", "latest", "--store", local, "--to", url)
		if !strings.Contains(r.stdout, "files copied") || strings.Contains(r.stdout, " 0 files copied") {
			t.Fatalf("first sync: %s", r.stdout)
		}
		r = must(t, "store", "sync", "latest", "--from", local, "--to", url, "-o", "json")
		if !strings.Contains(r.stdout, `"copied": 0`) {
			t.Fatalf("second sync copied again: %s", r.stdout)
		}
		isolate(t, srv)
		if got := answers(t, url); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("answers from the bucket differ:\n%q\n%q", want, got)
		}

		// A run a runner still holds is refused, unless --force.
		manifests, _ := filepath.Glob(filepath.Join(local, "runs", "*", "manifest.json"))
		if len(manifests) != 1 {
			t.Fatalf("manifests: %v", manifests)
		}
		lock := filepath.Join(filepath.Dir(manifests[0]), "lock")
		writeFile(t, lock, `{"host":"elsewhere","pid":42,"started":"2026-11-22T10:00:00Z"}`)
		other := url + "-2"
		if r := jikken(t, "store", "sync", "latest", "--from", local, "--to", other); r.code != 1 || !strings.Contains(r.stderr, "held by a runner (pid 42 on elsewhere") {
			t.Errorf("sync of a locked run: %d %s", r.code, r.stderr)
		}
		must(t, "store", "sync", "latest", "--from", local, "--to", other, "--force")
		if keys := strings.Join(srv.Keys(bucket), "\n"); strings.Contains(keys, "/lock") {
			t.Errorf("the lock was copied:\n%s", keys)
		}

		// Errors: no --to, the same store twice, an unknown run.
		if r := jikken(t, "store", "sync", "latest", "--from", url); r.code != 2 || !strings.Contains(r.stderr, "--to is required") {
			t.Errorf("sync without --to: %d %s", r.code, r.stderr)
		}
		if r := jikken(t, "store", "sync", "latest", "--from", url, "--to", url); r.code != 2 || !strings.Contains(r.stderr, "the same store") {
			t.Errorf("sync onto itself: %d %s", r.code, r.stderr)
		}
		if r := jikken(t, "store", "sync", "nosuch", "--from", url, "--to", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, `no run "nosuch"`) {
			t.Errorf("sync of an unknown run: %d %s", r.code, r.stderr)
		}
	})
}

// TestWrongCredentials: a bad secret is reported, without the secret, before any trial starts.
// Only MinIO checks signatures; the fake accepts any.
func TestWrongCredentials(t *testing.T) {
	srv := s3test.MinIO(t)
	bucket := srv.NewBucket()
	dir := isolate(t, srv)
	const bad = "not-the-secret-4242"
	t.Setenv("AWS_SECRET_ACCESS_KEY", bad)
	writeFile(t, filepath.Join(dir, "exp.jsonnet"), `[{ name: "a", cmd: "touch started" }]`)
	r := jikken(t, "run", "exp.jsonnet", "--store", "s3://"+bucket+"/x")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	if !strings.Contains(r.stderr, "refused the credentials") || !strings.Contains(r.stderr, "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("stderr does not say what to fix: %s", r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, bad) || strings.Contains(r.stderr+r.stdout, s3test.SecretKey) {
		t.Errorf("a secret was printed: %s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Errorf("the trial ran")
	}
	if keys := srv.Keys(bucket); len(keys) != 0 {
		t.Errorf("objects written: %v", keys)
	}

	// A missing bucket is named, with what to do.
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	r = jikken(t, "runs", "--store", "s3://no-such-bucket-jikken/x")
	if r.code != 1 || !strings.Contains(r.stderr, `bucket "no-such-bucket-jikken" does not exist`) {
		t.Errorf("missing bucket: %d %s", r.code, r.stderr)
	}
}

// TestTrialNamesCannotEscape: a trial name that would leave its folder is refused before the
// run is recorded.
func TestTrialNamesCannotEscape(t *testing.T) {
	srv := s3test.Fake(t)
	bucket := srv.NewBucket()
	dir := isolate(t, srv)
	for _, name := range []string{"../escape", "a/../../b", "ü nicode space"} {
		writeFile(t, filepath.Join(dir, "exp.jsonnet"), `[{ name: "`+name+`", cmd: "true" }]`)
		if r := jikken(t, "run", "exp.jsonnet", "--store", "s3://"+bucket+"/x"); r.code == 0 || !strings.Contains(r.stderr, "not a valid name") {
			t.Errorf("trial %q: exit %d, %s", name, r.code, r.stderr)
		}
	}
	if keys := srv.Keys(bucket); len(keys) != 0 {
		t.Errorf("objects written: %v", keys)
	}
}

// TestPythonTrial: a trial using clients/python/jikken_track.py with Debian's python3, its
// metrics read back by 'jikken results' from the bucket.
func TestPythonTrial(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	client, err := filepath.Abs(filepath.Join("..", "..", "..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	servers(t, func(t *testing.T, srv *s3test.Server) {
		bucket := srv.NewBucket()
		url := "s3://" + bucket + "/py"
		dir := isolate(t, srv)
		t.Setenv("PYTHONPATH", client)
		t.Setenv("PYTHONDONTWRITEBYTECODE", "1")
		writeFile(t, filepath.Join(dir, "exp.jsonnet"), `{
  name: "py",
  matrix: { name: "lr", params: { lr: [0.1, 0.5] }, cmd: "`+python+` train.py {{lr}}" },
}`)
		writeFile(t, filepath.Join(dir, "train.py"), `import sys
import jikken_track as jt

lr = float(sys.argv[1])
jt.log_params(lr_used=lr)
loss = 1.0
for epoch in range(3):
    loss *= 1 - lr
    with jt.track.path("train/"):
        jt.log_metric("loss", loss, step=epoch)
jt.log_metric("diverged", float("inf"))

@jt.track
def accuracy():
    return round(1 - loss, 4)

accuracy()
jt.result(epochs=3)
with open("weights.txt", "w") as f:
    f.write("w")
jt.save_artifact("weights.txt")
`)
		must(t, "run", "exp.jsonnet", "--store", url)
		r := must(t, "results", "latest", "-o", "csv", "--store", url)
		for _, want := range []string{
			"trial,status,lr,accuracy,diverged,epochs,train/loss",
			"lr-0.1,succeeded,0.1,0.271,+Inf,3,0.7290000000000001",
			"lr-0.5,succeeded,0.5,0.875,+Inf,3,0.125",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("results lack %q:\n%s", want, r.stdout)
			}
		}
		keys := strings.Join(srv.Keys(bucket), "\n")
		for _, want := range []string{"/trials/lr-0.1/artifacts/weights.txt", "/trials/lr-0.1/logged_params.json", "/trials/lr-0.5/metrics.jsonl"} {
			if !strings.Contains(keys, want) {
				t.Errorf("bucket lacks %s:\n%s", want, keys)
			}
		}
	})
}

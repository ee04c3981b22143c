package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// slurmS3 skips a test without a Slurm cluster, else builds jikken into a folder of the test,
// starts a MinIO with a bucket and points HOME, JIKKEN_STORE and the S3 settings at them. It
// returns the folder and the binary.
func slurmS3(t *testing.T) (dir, bin string) {
	t.Helper()
	if ok, err := slurmReady(); err != nil {
		t.Fatal(err)
	} else if !ok {
		t.Skip("needs a Slurm cluster: export SLURM_CONF=$(scripts/ci/slurm.sh | tail -n 1)")
	}
	if testing.Short() {
		t.Skip("builds jikken and starts MinIO")
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "jikken")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jikken-dev/jikken/cmd/jikken").CombinedOutput(); err != nil {
		t.Fatalf("build jikken: %v\n%s", err, out)
	}
	minio := s3test.MinIO(t)
	minio.Setenv(t)
	// The runner's work folder (under HOME with an S3 store) is the test's own.
	t.Setenv("HOME", dir)
	t.Setenv("JIKKEN_STORE", "s3://"+minio.NewBucket()+"/lab")
	return dir, bin
}

// TestSlurmS3Store: 'jikken run --backend slurm' with an S3 store runs each trial under
// jikken trial-exec on the node, which puts its outputs in the store, so nothing depends on
// the node sharing the runner's folders; results, logs and metrics read back as on any backend.
func TestSlurmS3Store(t *testing.T) {
	dir, bin := slurmS3(t)
	file := filepath.Join(dir, "sweep.jsonnet")
	if err := os.WriteFile(file, []byte(`{
  name: "sweep",
  matrix: {
    name: "t",
    params: { x: [1, 2, 3] },
    cmd: "echo ::metric sq=$(({{x}} * {{x}})); echo '{\"y\": {{x}}}' > $JIKKEN_OUTPUT_DIR/result.json",
  },
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	jikken := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("jikken %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := jikken("run", file, "--backend", "slurm", "-j", "3"); !strings.Contains(out, "3 trials, 3 succeeded") {
		t.Fatalf("jikken run: %s", out)
	}
	out := jikken("results", "latest", "-o", "csv")
	for _, want := range []string{",sq,", "t-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("results lack %q:\n%s", want, out)
		}
	}
	if out := jikken("logs", "latest", "t-3"); !strings.Contains(out, "::metric sq=9") {
		t.Errorf("the log of t-3 is not in the store: %q", out)
	}
	// The jobs ran trial-exec, their own output going nowhere: the runner's work folder had no
	// part in it.
	var run struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(jikken("status", "latest", "-o", "json")), &run); err != nil || run.RunID == "" {
		t.Fatalf("status: %v", err)
	}
	jobs, err := exec.Command("scontrol", "-o", "show", "job").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, job := range strings.Split(string(jobs), "\n") {
		if strings.Contains(job, " JobName=jikken-"+run.RunID+" ") {
			n++
			if !strings.Contains(job, " StdOut=/dev/null ") || !strings.Contains(job, "trial-exec") {
				t.Errorf("a job did not run under trial-exec: %s", job)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d jobs of run %s, want 3", n, run.RunID)
	}
}

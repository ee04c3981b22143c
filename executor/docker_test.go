package executor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestTrialExecInScratchContainerUploadsToMinIO is the executor end to end as the container
// backends use it: the static jikken binary in a FROM scratch image (plus busybox for the
// trial's shell), started by the Docker engine with `jikken trial-exec`, uploading the trial's
// outputs and logs to a real MinIO. Skipped without a Docker engine or the MinIO binary.
func TestTrialExecInScratchContainerUploadsToMinIO(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jikken and an image")
	}
	if err := exec.Command("docker", "version").Run(); err != nil {
		if os.Getenv("CI") == "true" && os.Getenv("JIKKEN_MINIO") != "" {
			t.Fatalf("no Docker engine: %v (scripts/ci/docker.sh starts one)", err)
		}
		t.Skip("no Docker engine")
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no static busybox (apt-get install busybox-static)")
	}
	minio := s3test.MinIO(t)
	bucket := minio.NewBucket()

	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "jikken"), "github.com/jikken-dev/jikken/cmd/jikken")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build jikken: %v\n%s", err, out)
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "busybox"), bb, 0o755); err != nil {
		t.Fatal(err)
	}
	dockerfile := "FROM scratch\nCOPY jikken /jikken\nCOPY busybox /bin/busybox\nENTRYPOINT [\"/jikken\"]\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "jikken-exec-test:" + strings.TrimPrefix(bucket, "jikken-test-")
	docker := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", args[0], err, out)
		}
		return string(out)
	}
	docker("build", "-q", "-t", image, ctxDir)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })

	storeURL := "s3://" + bucket + "/lab"
	args := []string{"run", "--rm", "--network", "host"}
	for k, v := range minio.Env() {
		if k != "JIKKEN_S3_CONFIG" {
			args = append(args, "-e", k+"="+v)
		}
	}
	args = append(args, "-e", "JIKKEN_RUN_ID=r1", "-e", "JIKKEN_TRIAL=t1", "-e", "JIKKEN_OUTPUT_DIR=/job/out",
		"-e", "JIKKEN_PARAMS=/job/params.json", "-e", `JIKKEN_PARAMS_JSON={"lr":0.5}`,
		image, "trial-exec", "--store", storeURL, "--log-dir", "/job/logs", "--",
		"/bin/busybox", "sh", "-c", `echo "::metric acc=0.75 step=1"; cat $JIKKEN_PARAMS; mkdir -p $JIKKEN_OUTPUT_DIR/artifacts; echo '{"loss":0.1}' > $JIKKEN_OUTPUT_DIR/result.json; echo w > $JIKKEN_OUTPUT_DIR/artifacts/w.bin; echo warn >&2`)
	out := docker(args...)
	if !strings.Contains(out, "::metric acc=0.75") {
		t.Errorf("the container log should carry the trial's output: %q", out)
	}

	minio.Setenv(t)
	blob, err := store.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"result.json": "{\"loss\":0.1}\n", "artifacts/w.bin": "w\n", "stderr.log": "warn\n", "params.json": `{"lr":0.5}`,
	} {
		got, err := store.ReadAll(context.Background(), blob, store.TrialKey("r1", "t1", name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	metrics, err := store.ReadAll(context.Background(), blob, store.TrialKey("r1", "t1", "metrics.jsonl"))
	if err != nil || !strings.Contains(string(metrics), `"name":"acc","value":0.75,"step":1`) {
		t.Errorf("metrics.jsonl = %q, %v", metrics, err)
	}
	stdout, err := store.ReadAll(context.Background(), blob, store.TrialKey("r1", "t1", "stdout.log"))
	if err != nil || !strings.Contains(string(stdout), `{"lr":0.5}`) {
		t.Errorf("stdout.log = %q, %v", stdout, err)
	}
}

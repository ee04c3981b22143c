package slurm_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/slurm"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestUpload: with an S3 store, a job runs under jikken trial-exec in a scratch folder of the
// node and puts its outputs, logs and params in the store itself, so nothing needs the
// runner's folders on the node; the trial never sees the store's credentials.
func TestUpload(t *testing.T) {
	needSlurm(t)
	if testing.Short() {
		t.Skip("builds jikken and starts MinIO")
	}
	minio := s3test.MinIO(t)
	minio.Setenv(t)
	bin := filepath.Join(t.TempDir(), "jikken")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jikken-dev/jikken/cmd/jikken").CombinedOutput(); err != nil {
		t.Fatalf("build jikken: %v\n%s", err, out)
	}
	storeURL := "s3://" + minio.NewBucket() + "/lab"
	b := slurm.New(slurm.Config{Upload: &slurm.Upload{Store: storeURL, Jikken: bin}})
	tr := experiment.Trial{Name: "up", Params: map[string]any{"lr": 0.5},
		Cmd: experiment.Command{Shell: `echo "::metric acc=0.75 step=1"; echo "secret=${AWS_SECRET_ACCESS_KEY:-none}"; cat "$JIKKEN_PARAMS"; echo '{"loss": 0.1}' > "$JIKKEN_OUTPUT_DIR/result.json"; echo warn >&2`}}
	a, p := start(t, b, tr)
	if e := p.Wait(); e.Code != 0 || e.Err != nil {
		t.Fatalf("exit %+v", e)
	}
	if s, ok := p.(runner.OutputStorer); !ok || !s.OutputsStored() {
		t.Errorf("the runner is not told that the outputs are stored")
	}
	blob, err := store.Open(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		rc, err := blob.Get(context.Background(), store.TrialKey(a.RunID, tr.Name, name))
		if err != nil {
			t.Errorf("%s is not in the store: %v", name, err)
			return ""
		}
		defer rc.Close()
		var sb strings.Builder
		_, _ = io.Copy(&sb, rc)
		return sb.String()
	}
	if got := read("result.json"); got != "{\"loss\": 0.1}\n" {
		t.Errorf("result.json = %q", got)
	}
	if got := read("stdout.log"); !strings.Contains(got, "secret=none") || !strings.Contains(got, `"lr": 0.5`) {
		t.Errorf("stdout.log = %q: the trial should see its params and no store credentials", got)
	}
	if got := read("stderr.log"); got != "warn\n" {
		t.Errorf("stderr.log = %q", got)
	}
	if got := read("metrics.jsonl"); !strings.Contains(got, `"acc"`) {
		t.Errorf("metrics.jsonl = %q", got)
	}
	// Nothing went through the attempt folder, and the job's environment, with the store's
	// credentials, is not left there.
	for _, name := range []string{"stdout.log", filepath.Join("out", "result.json"), "slurm-job.env"} {
		if _, err := os.Stat(filepath.Join(a.Dir, name)); err == nil {
			t.Errorf("%s was written in the attempt folder", name)
		}
	}
}

// TestUploadPrunes: a search with a pruner on Slurm with an S3 store prunes trials as on the
// local backend, though the runner never sees the trials' files: it reads back the live points
// each job's trial-exec appends to the store.
func TestUploadPrunes(t *testing.T) {
	needSlurm(t)
	if testing.Short() {
		t.Skip("builds jikken and starts MinIO")
	}
	minio := s3test.MinIO(t)
	minio.Setenv(t)
	bin := filepath.Join(t.TempDir(), "jikken")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/jikken-dev/jikken/cmd/jikken").CombinedOutput(); err != nil {
		t.Fatalf("build jikken: %v\n%s", err, out)
	}
	storeURL := "s3://" + minio.NewBucket() + "/lab"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	blob, err := store.Open(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	const script = `for s in 0 1 2 3 4 5 6 7; do echo "::metric loss=$(awk -v x={{x}} -v s=$s 'BEGIN{print x*x+8-s}') step=$s"; sleep 0.5; done`
	spec, err := json.Marshal(map[string]any{"search": map[string]any{
		"name": "p", "cmd": script, "space": map[string]any{"x": map[string]any{"low": -5, "high": 5}},
		"objective": "loss", "sampler": "random", "trials": 10, "parallel": 2, "seed": 3,
		"pruner": map[string]any{"name": "median", "options": map[string]any{"startup_trials": 2}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := experiment.Parse("prune.json", spec)
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("prune", time.Now()), Trials: exp.Trials}
	if err := runs.WriteManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: slurm.New(slurm.Config{Upload: &slurm.Upload{Store: storeURL, Jikken: bin}}), Runs: runs,
		Jobs: 2, WorkRoot: t.TempDir(), Workdir: t.TempDir(), StopGrace: time.Second, Search: exp.Search,
		LiveEvery: 200 * time.Millisecond}
	sum, err := r.Execute(ctx, m, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counts %+v", sum.Counts)
	if sum.Counts.Pruned == 0 || sum.Counts.Pruned+sum.Counts.Succeeded != 10 {
		t.Fatalf("counts %+v: want 10 trials, some pruned from the points their trial-exec stored", sum.Counts)
	}
}

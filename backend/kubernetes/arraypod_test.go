package kubernetes_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/experiment"
)

// TestArrayPodRunsItsIndex plays the pod of index 2 of an array Job with the jikken binary:
// the container's command and environment as the Job gives them, its index table where the
// ConfigMap is mounted, $JOB_COMPLETION_INDEX as the Job controller sets it. The trial of index
// 2, and no other, runs with its own params and lands in the store under its own name.
func TestArrayPodRunsItsIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the jikken binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "jikken")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/jikken-dev/jikken/cmd/jikken")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build jikken: %v\n%s", err, out)
	}
	storeDir := filepath.Join(dir, "store")
	cfg := kubernetes.Config{Namespace: "default", StoreURL: storeDir, ExecutorImage: "jikken:test", LogFlush: 1e9}
	var specs []kubernetes.PodSpec
	for i := range 4 {
		seed := int64(i)
		tr := experiment.Trial{Name: fmt.Sprintf("train/seed=%d", i), Image: "busybox", Seed: &seed,
			Cmd: experiment.Command{Shell: fmt.Sprintf(`echo "$JIKKEN_TRIAL seed $JIKKEN_SEED"; echo '{"acc": %d}' > "$JIKKEN_OUTPUT_DIR/result.json"`, i)}}
		specs = append(specs, kubernetes.PodSpec{Run: "r1", Trial: tr, Attempt: 1, Params: fmt.Appendf(nil, `{"seed":%d}`, i),
			Env: []string{"JIKKEN_RUN_ID=r1", "JIKKEN_TRIAL=" + tr.Name, "JIKKEN_ATTEMPT=1", "JIKKEN_OUTPUT_DIR=/elsewhere/out",
				"JIKKEN_PARAMS=/elsewhere/params.json", fmt.Sprintf("JIKKEN_SEED=%d", i)}})
	}
	job, err := cfg.ArrayJob(specs)
	if err != nil {
		t.Fatal(err)
	}
	table, err := kubernetes.IndexTable(specs)
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	mounts := map[string]string{} // pod path -> folder here
	for _, m := range pod.Containers[0].VolumeMounts {
		mounts[m.MountPath] = filepath.Join(dir, "volumes", m.Name)
		if err := os.MkdirAll(mounts[m.MountPath], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == job.Name {
			for k, val := range table {
				if err := os.WriteFile(filepath.Join(dir, "volumes", v.Name, k), []byte(val), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The pod's paths, as this machine has them.
	here := func(s string) string {
		for podPath, local := range mounts {
			if s == podPath || strings.HasPrefix(s, podPath+"/") {
				return local + strings.TrimPrefix(s, podPath)
			}
		}
		return s
	}
	c := pod.Containers[0]
	args := make([]string, 0, len(c.Command)-1)
	for _, a := range c.Command[1:] {
		args = append(args, here(a))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=2")
	for _, e := range c.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	// The table's paths are the pod's: run where they resolve (the output folder is made by
	// the executor, and /jikken/out is not writable here), by rewriting the mounted table.
	for k, v := range table {
		for podPath, local := range mounts {
			v = strings.ReplaceAll(v, `=`+podPath+`/`, `=`+local+`/`)
		}
		if err := os.WriteFile(filepath.Join(mounts["/jikken-array"], k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pod's executor: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "train/seed=2 seed 2") {
		t.Errorf("index 2 ran %q, want trial train/seed=2", out)
	}
	got, err := os.ReadFile(filepath.Join(storeDir, "runs", "r1", "trials", "train", "seed=2", "result.json"))
	if err != nil || !strings.Contains(string(got), `"acc": 2`) {
		t.Errorf("trial 2's result in the store: %q, %v", got, err)
	}
	params, _ := os.ReadFile(filepath.Join(storeDir, "runs", "r1", "trials", "train", "seed=2", "params.json"))
	if !strings.Contains(string(params), `"seed":2`) {
		t.Errorf("trial 2's params %q", params)
	}
	if _, err := os.Stat(filepath.Join(storeDir, "runs", "r1", "trials", "train", "seed=1")); err == nil {
		t.Error("index 2's pod stored another trial")
	}
}

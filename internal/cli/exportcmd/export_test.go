package exportcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

const experimentFile = `{
  name: "sweep",
  trials: [
    { name: "prep", image: "alpine", cmd: "true" },
  ],
  matrix: {
    name: "run",
    image: "alpine",
    params: { lr: [0.1, 0.2] },
    seeds: 1,
    after: ["prep"],
    retries: 1,
    cmd: "echo ::metric acc=$JIKKEN_PARAM_LR; echo '{\"loss\": 1}' > $JIKKEN_OUTPUT_DIR/result.json",
  },
}
`

// TestExportThenResults exports a workflow, plays each of its pods locally the way Argo would
// (the container's env and the executor's command line, paths mapped to temp folders), and reads
// the run back with the results table.
func TestExportThenResults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "exp.jsonnet")
	if err := os.WriteFile(file, []byte(experimentFile), 0o644); err != nil {
		t.Fatal(err)
	}
	storeDir := filepath.Join(dir, "store")
	ios, _, _, errOut := iostreams.Test()
	o := &ArgoOptions{f: &cmdutil.Factory{IO: ios, StoreURL: storeDir}, File: file, Out: filepath.Join(dir, "wf.yaml"), Jobs: 2, ExecutorImage: "jikken:test"}
	if err := runArgo(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "argo submit") {
		t.Errorf("stderr %q", errOut)
	}
	y, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	var wf kubernetes.Workflow
	if err := yaml.Unmarshal(y, &wf); err != nil {
		t.Fatal(err)
	}
	if *wf.Spec.Parallelism != 2 || len(wf.Spec.Templates) != 4 {
		t.Fatalf("workflow %+v", wf.Spec)
	}
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	var runID string
	for _, tm := range wf.Spec.Templates[1:] {
		runID = playPod(t, blob, tm)
	}
	rows, err := results.Load(context.Background(), store.Runs{Blob: blob}, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.Status != store.Succeeded {
			t.Errorf("%s: %s", r.Trial, r.Status)
		}
		if strings.HasPrefix(r.Trial, "run-") && (r.Metrics["loss"] != 1 || r.Metrics["acc"] != r.Params["lr"]) {
			t.Errorf("%s: metrics %v params %v", r.Trial, r.Metrics, r.Params)
		}
	}
}

// playPod runs one template's container command through the executor, as its pod would.
func playPod(t *testing.T, blob store.Blob, tm kubernetes.Template) string {
	t.Helper()
	c := tm.Container
	sep := -1
	for i, a := range c.Command {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 0 || c.Command[1] != "trial-exec" {
		t.Fatalf("command %q", c.Command)
	}
	podDir := t.TempDir()
	local := strings.NewReplacer("/jikken/", podDir+"/")
	env := os.Environ()
	vars := map[string]string{}
	for _, e := range c.Env {
		v := local.Replace(e.Value)
		if e.Name == "JIKKEN_ATTEMPT" {
			v = "1" // Argo evaluates {{=asInt(retries) + 1}}
		}
		vars[e.Name] = v
		env = append(env, e.Name+"="+v)
	}
	rec := &store.TrialRecord{}
	if err := json.Unmarshal([]byte(vars["JIKKEN_RECORD_JSON"]), rec); err != nil {
		t.Fatal(err)
	}
	res, err := executor.Run(context.Background(), executor.Options{
		Argv: c.Command[sep+1:], Env: env, Store: blob, RunID: vars["JIKKEN_RUN_ID"], Trial: vars["JIKKEN_TRIAL"], Attempt: 1,
		OutputDir: vars["JIKKEN_OUTPUT_DIR"], Params: []byte(vars["JIKKEN_PARAMS_JSON"]), ParamsPath: vars["JIKKEN_PARAMS"],
		ScanStdoutMetrics: true, Record: rec, FlushEvery: -1,
	})
	if err != nil || res.ExitCode != 0 || res.Upload != nil {
		t.Fatalf("pod %s: %+v %v", tm.Name, res, err)
	}
	return vars["JIKKEN_RUN_ID"]
}

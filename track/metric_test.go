package track_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/track"
)

func TestAppendStdoutMetrics(t *testing.T) {
	dir := t.TempDir()
	stdout, metrics := filepath.Join(dir, "stdout.log"), filepath.Join(dir, "metrics.jsonl")
	if err := track.AppendStdoutMetrics(stdout, metrics); err != nil {
		t.Fatalf("a missing log has no metrics: %v", err)
	}
	if err := os.WriteFile(metrics, []byte(`{"name":"acc","value":0.5,"ts":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stdout, []byte("epoch 1\n::metric loss=0.25 step=3\nnoise ::metric\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := track.AppendStdoutMetrics(stdout, metrics); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := track.ReadMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "acc" || ms[1].Name != "loss" || ms[1].Value != 0.25 || ms[1].Step == nil || *ms[1].Step != 3 || ms[1].TS == 0 {
		t.Errorf("metrics %+v: the file's line, then the log's, stamped", ms)
	}
}

// TestReadMetricsLeavesBadLinesOut: a malformed line, a bare NaN and bytes that are not UTF-8
// in the middle of metrics.jsonl are left out and the lines around them kept (they are noted in
// the attempt's record when the runner collects the file); reading them used to fail the whole
// file, and with it `jikken results` for the run.
func TestReadMetricsLeavesBadLinesOut(t *testing.T) {
	data := "garbage\n" +
		`{"name":"loss","value":NaN}` + "\n" +
		`{"name":"loss","value":1,"step":1}` + "\n" +
		"{\"name\":\"l\xffss\",\"value\":2}\n" +
		`{"name":"loss","value":0.5,"step":2}` + "\n" +
		`{"name":"loss","val`
	ms, err := track.ReadMetrics(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Value != 1 || ms[1].Value != 0.5 {
		t.Errorf("metrics %+v; want the two good lines", ms)
	}
}

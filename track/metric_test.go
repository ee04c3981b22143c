package track_test

import (
	"encoding/json"
	"math"
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

// Float carries the values JSON numbers cannot hold as metrics.jsonl does, both ways.
func TestFloatJSON(t *testing.T) {
	type doc struct {
		V []track.Float `json:"v"`
		P *track.Float  `json:"p"`
	}
	one := track.Float(1.5)
	in := doc{V: []track.Float{track.Float(math.NaN()), track.Float(math.Inf(1)), track.Float(math.Inf(-1)), 0.25}, P: &one}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":["NaN","Infinity","-Infinity",0.25],"p":1.5}`; string(b) != want {
		t.Fatalf("%s, want %s", b, want)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.V) != 4 || !math.IsNaN(float64(out.V[0])) || !math.IsInf(float64(out.V[1]), 1) || !math.IsInf(float64(out.V[2]), -1) ||
		out.V[3] != 0.25 || out.P == nil || *out.P != 1.5 {
		t.Errorf("read back %+v", out)
	}
	out = doc{}
	if err := json.Unmarshal([]byte(`{"v":[null,"nan"],"p":null}`), &out); err != nil || out.P != nil || out.V[0] != 0 || !math.IsNaN(float64(out.V[1])) {
		t.Errorf("null and nan: %+v, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"v":["soon"]}`), &out); err == nil {
		t.Error("a word that is no number was read")
	}
}

package track_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/track"
)

func readMetrics(t *testing.T, dir string) []track.Metric {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, track.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := track.ReadMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestLogMetricLines(t *testing.T) {
	dir := t.TempDir()
	tr, err := track.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1767225600123)
	if err := tr.LogMetric("loss", 0.12, track.Step(3), track.At(ts)); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := tr.LogMetric("odd", v); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Path("epoch3/").LogMetric("acc", 1); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	data, _ := os.ReadFile(filepath.Join(dir, track.MetricsFile))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != `{"name":"loss","value":0.12,"step":3,"ts":1767225600123}` {
		t.Errorf("first line = %s", lines[0])
	}
	for i, want := range []string{`"value":"NaN"`, `"value":"Infinity"`, `"value":"-Infinity"`} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("line %d = %s, want %s", i+2, lines[i+1], want)
		}
	}
	ms := readMetrics(t, dir)
	if len(ms) != 5 || !math.IsNaN(ms[1].Value) || !math.IsInf(ms[2].Value, 1) || !math.IsInf(ms[3].Value, -1) {
		t.Fatalf("read back %+v", ms)
	}
	if ms[4].Name != "epoch3/acc" || ms[4].TS == 0 || ms[4].Step != nil {
		t.Errorf("scoped metric = %+v", ms[4])
	}
}

func TestResultMergesAndEncodes(t *testing.T) {
	dir := t.TempDir()
	tr, err := track.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Result(map[string]any{"acc": 0.9, "nested": map[string]any{"bad": math.Inf(-1)}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Path("epoch3/").Result(map[string]any{"acc": math.NaN(), "f32": float32(0.1)}); err != nil {
		t.Fatal(err)
	}
	// A second tracker in the same folder keeps what the first wrote.
	tr2, err := track.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Result(map[string]any{"acc": 0.95, "list": []float64{1, math.Inf(1)}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, track.ResultFile))
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("result.json is not JSON: %v\n%s", err, data)
	}
	want := map[string]any{
		"acc": 0.95, "epoch3/acc": "NaN", "epoch3/f32": 0.1,
		"nested": map[string]any{"bad": "-Infinity"}, "list": []any{1.0, "Infinity"},
	}
	if b1, b2 := mustJSON(got), mustJSON(want); b1 != b2 {
		t.Errorf("result.json = %s\nwant %s", b1, b2)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTrackRecordsReturnValue(t *testing.T) {
	dir := t.TempDir()
	tr, _ := track.New(dir)
	v, err := track.Track(tr.Path("eval/"), "score", func() (float64, error) { return 42, nil })
	if err != nil || v != 42 {
		t.Fatalf("Track = %v, %v", v, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, track.ResultFile))
	if !strings.Contains(string(data), `"eval/score": 42`) {
		t.Errorf("result.json = %s", data)
	}
}

func TestLogParams(t *testing.T) {
	dir := t.TempDir()
	tr, _ := track.New(dir)
	if err := tr.LogParams(map[string]any{"lr": 0.01, "model": "resnet"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, track.LoggedParamsFile))
	if !strings.Contains(string(data), `"lr": 0.01`) || !strings.Contains(string(data), `"model": "resnet"`) {
		t.Errorf("logged_params.json = %s", data)
	}
}

func TestSaveArtifact(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	tr, _ := track.New(dir)
	os.WriteFile(filepath.Join(src, "model.bin"), []byte("weights"), 0o644)
	os.MkdirAll(filepath.Join(src, "plots", "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "plots", "sub", "a.svg"), []byte("<svg/>"), 0o644)
	name, err := tr.Path("epoch3/").SaveArtifact(filepath.Join(src, "model.bin"))
	if err != nil || name != "epoch3/model.bin" {
		t.Fatalf("SaveArtifact = %q, %v", name, err)
	}
	if _, err := tr.SaveArtifact(filepath.Join(src, "plots")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"epoch3/model.bin": "weights", "plots/sub/a.svg": "<svg/>"} {
		got, err := os.ReadFile(filepath.Join(dir, track.ArtifactsDir, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("artifact %s = %q, %v", p, got, err)
		}
	}
	for _, bad := range []string{"../escape", "/abs", "a/../../b", ""} {
		if _, err := tr.SaveArtifactAs(filepath.Join(src, "model.bin"), bad); err == nil {
			t.Errorf("SaveArtifactAs %q succeeded", bad)
		}
	}
}

func TestConcurrentMetricLinesStayWhole(t *testing.T) {
	dir := t.TempDir()
	tr, _ := track.New(dir)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if err := tr.LogMetric("m", float64(g*1000+i), track.Step(int64(i))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(readMetrics(t, dir)); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}

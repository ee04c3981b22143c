package track_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/track"
)

// TestDefaultByHand runs a child process without $JIKKEN_OUTPUT_DIR: it must write under
// ./jikken-out and say where on stderr.
func TestDefaultByHand(t *testing.T) {
	if os.Getenv("JIKKEN_TRACK_CHILD") == "1" {
		if err := track.LogMetric("loss", 1.5, track.Step(1)); err != nil {
			t.Fatal(err)
		}
		if err := track.Result(map[string]any{"done": 1}); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultByHand$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JIKKEN_TRACK_CHILD=1", "JIKKEN_OUTPUT_DIR=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	msg := stderr.String()
	if !strings.Contains(msg, "JIKKEN_OUTPUT_DIR is not set") {
		t.Fatalf("stderr does not say where: %q", msg)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "jikken-out", "*", track.MetricsFile))
	if len(matches) != 1 {
		t.Fatalf("metrics files under jikken-out: %v", matches)
	}
	if !strings.Contains(msg, filepath.Base(filepath.Dir(matches[0]))) {
		t.Errorf("stderr names another folder: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(matches[0]), track.ResultFile)); err != nil {
		t.Error(err)
	}
}

// TestDefaultUnderJikken runs a child process as jikken starts a trial ($JIKKEN_OUTPUT_DIR set):
// the package-level functions write params and artifacts where the runner collects them.
func TestDefaultUnderJikken(t *testing.T) {
	if os.Getenv("JIKKEN_TRACK_CHILD") == "2" {
		if err := track.LogParams(map[string]any{"lr": 0.1}); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(os.Getenv("JIKKEN_TRACK_SRC"), "model.txt")
		if _, err := track.SaveArtifact(src); err != nil {
			t.Fatal(err)
		}
		d, err := track.Default()
		if err != nil {
			t.Fatal(err)
		}
		if d.Dir() != os.Getenv("JIKKEN_OUTPUT_DIR") {
			t.Fatalf("Default writes into %q, not $JIKKEN_OUTPUT_DIR", d.Dir())
		}
		return
	}
	out, src := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "model.txt"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultUnderJikken$")
	cmd.Env = append(os.Environ(), "JIKKEN_TRACK_CHILD=2", "JIKKEN_OUTPUT_DIR="+out, "JIKKEN_TRACK_SRC="+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	params, err := os.ReadFile(filepath.Join(out, track.LoggedParamsFile))
	if err != nil || !strings.Contains(string(params), `"lr"`) {
		t.Errorf("logged params: %q, %v", params, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, track.ArtifactsDir, "model.txt")); err != nil || string(b) != "weights" {
		t.Errorf("artifact: %q, %v", b, err)
	}
}

package track_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// python is Debian's interpreter: the Python client must work with the standard library alone.
const python = "/usr/bin/python3"

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI: %v", python, err)
		}
		t.Skipf("no %s: %v", python, err)
	}
}

func clientDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPythonClient runs the Python client's own unittest suite.
func TestPythonClient(t *testing.T) {
	needPython(t)
	cmd := exec.Command(python, "-m", "unittest", "-v", "test_jikken_track")
	cmd.Dir = clientDir(t)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestPythonMetricsReadByGo checks that what the Python client writes is what the Go reader
// (and so 'jikken results') reads, NaN and infinities included.
func TestPythonMetricsReadByGo(t *testing.T) {
	needPython(t)
	out := t.TempDir()
	cmd := exec.Command(python, "-c", `
import jikken_track as jt
jt.log_metric("loss", 0.25, step=2)
jt.log_metric("loss", float("nan"), step=3)
jt.log_metric("gain", float("-inf"))
`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+clientDir(t), "JIKKEN_OUTPUT_DIR="+out, "PYTHONDONTWRITEBYTECODE=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, b)
	}
	ms := readMetrics(t, out)
	if len(ms) != 3 || ms[0].Value != 0.25 || *ms[0].Step != 2 || !math.IsNaN(ms[1].Value) || !math.IsInf(ms[2].Value, -1) || ms[2].Step != nil {
		t.Fatalf("metrics = %+v", ms)
	}
	if ms[0].TS == 0 {
		t.Errorf("no timestamp")
	}
}

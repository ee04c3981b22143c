package simcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/sim/metrics"
)

func TestRunWritesResults(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	dir := t.TempDir()
	o := &runOptions{f: &cmdutil.Factory{IO: ios}, scenario: "../../../examples/sim/small.yaml", dir: dir, format: "json", timeline: "csv"}
	if err := runRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var s metrics.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Makespan != 200 || s.Wait.Mean != 33.3333 || s.Succeeded != 3 {
		t.Fatalf("summary %+v", s)
	}
	for _, f := range []string{"summary.json", "pods.csv", "timeline.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestCompareProfiles(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	o := &compareOptions{f: &cmdutil.Factory{IO: ios}, files: []string{"../../../examples/sim/small.yaml"}, profiles: []string{"fifo", "kube-default"}, format: "text"}
	if err := runCompare(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[0], "fifo") || !strings.Contains(lines[0], "kube-default") {
		t.Fatalf("header %q", lines[0])
	}
	if !strings.Contains(out.String(), "wait_mean_s") {
		t.Fatalf("table:\n%s", out.String())
	}
}

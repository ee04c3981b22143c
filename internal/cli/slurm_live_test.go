package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlurmS3LiveMetrics: on Slurm with an S3 store, the points a trial logs reach the store from
// its node (jikken trial-exec) while it runs, and 'jikken metrics' prints them from there; once
// the run has ended, each point is there once.
func TestSlurmS3LiveMetrics(t *testing.T) {
	dir, bin := slurmS3(t)
	release := filepath.Join(dir, "release")
	file := filepath.Join(dir, "exp.jsonnet")
	if err := os.WriteFile(file, []byte(`[{
  name: "t",
  cmd: |||
    m=$JIKKEN_OUTPUT_DIR/metrics.jsonl
    for i in 1 2 3; do echo "{\"name\":\"loss\",\"value\":$i,\"step\":$i}" >> $m; done
    until [ -e `+release+` ]; do sleep 0.1; done
    echo "::metric loss=4 step=4"
  |||,
}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	jikken := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	runner := exec.Command(bin, "run", file, "--backend", "slurm")
	runner.Dir = dir
	var runOut strings.Builder
	runner.Stdout, runner.Stderr = &runOut, &runOut
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- runner.Wait() }()
	defer func() { _ = os.WriteFile(release, nil, 0o644) }()
	var seen string
	for end := time.Now().Add(3 * time.Minute); strings.Count(seen, "\n") < 3; time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-ended:
			t.Fatalf("the run ended (%v) before its points were seen:\n%s", err, runOut.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("no live points while the trial runs: %q\n%s", seen, runOut.String())
		}
		seen, _ = jikken("metrics", "latest", "t")
	}
	if !strings.Contains(seen, "seq=3\tstep=3\tloss=3\n") || strings.Contains(seen, "loss=4") {
		t.Errorf("while running: %q", seen)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err != nil {
		t.Fatalf("jikken run: %v\n%s", err, runOut.String())
	}
	out, err := jikken("metrics", "latest", "t", "-f")
	if err != nil {
		t.Fatalf("jikken metrics: %v\n%s", err, out)
	}
	if strings.Count(out, "\n") != 4 || !strings.Contains(out, "seq=4\tstep=4\tloss=4\n") {
		t.Errorf("after the run: %q, want its 4 points once", out)
	}
}

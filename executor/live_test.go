package executor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestLiveMetricsFake and TestLiveMetricsMinIO are the executor's upload path as a pod or a Slurm
// job uses it, without the pod: the points the command logs are in the S3 store while it still
// runs, and once it has ended every one is there once, equal to the final metrics.jsonl; a bad
// line is noted in stderr.log.
func TestLiveMetricsFake(t *testing.T) {
	srv := s3test.Fake(t)
	testLive(t, srv.NewBucket(), srv.Config())
}

func TestLiveMetricsMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	testLive(t, srv.NewBucket(), srv.Config())
}

func testLive(t *testing.T, bucket string, cfg s3.Config) {
	ctx := context.Background()
	b, err := s3.New(ctx, "s3://"+bucket+"/live", cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, release := filepath.Join(dir, "out"), filepath.Join(dir, "release")
	script := `m=$JIKKEN_OUTPUT_DIR/metrics.jsonl
for i in 1 2 3; do echo "{\"name\":\"loss\",\"value\":$i,\"step\":$i}" >> $m; done
echo '{"name":"loss","value":NaN}' >> $m
while ! test -e "$RELEASE"; do sleep 0.05; done
echo "::metric acc=0.5 step=4"
echo '{"name":"loss","value":5,"step":5}' >> $m`
	type result struct {
		res executor.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := executor.Run(ctx, executor.Options{
			Argv: []string{"/bin/sh", "-c", script}, Env: append(os.Environ(), "JIKKEN_OUTPUT_DIR="+out, "RELEASE="+release),
			Store: b, RunID: "r1", Trial: "t1", Attempt: 2, OutputDir: out,
			ScanStdoutMetrics: true, FlushEvery: -1, LiveEvery: 20 * time.Millisecond,
		})
		done <- result{res, err}
	}()
	runs := store.Runs{Blob: b}
	points := func() []string {
		var got []string
		if _, err := runs.LiveAfter(ctx, "r1", "t1", 2, 0, func(p store.LivePoint) error {
			got = append(got, fmt.Sprintf("%s=%g@%d", p.Name, p.Value, *p.Step))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for end := time.Now().Add(2 * time.Minute); len(points()) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no live points while the command runs: %q", points())
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the command ended before its release: %+v", r)
	default:
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.ExitCode != 0 || r.res.Upload != nil {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	// Each source's lines in their order; the two sources interleave as they were read.
	var loss, acc []string
	for _, p := range points() {
		if strings.HasPrefix(p, "loss") {
			loss = append(loss, p)
		} else {
			acc = append(acc, p)
		}
	}
	if fmt.Sprint(loss) != "[loss=1@1 loss=2@2 loss=3@3 loss=5@5]" || fmt.Sprint(acc) != "[acc=0.5@4]" {
		t.Errorf("live points %q then %q, want loss 1, 2, 3, 5 and acc 0.5", loss, acc)
	}
	stderr, err := store.ReadAll(ctx, b, store.TrialKey("r1", "t1", "stderr.log"))
	if err != nil || strings.Count(string(stderr), "metrics.jsonl line 4:") != 1 {
		t.Errorf("stderr.log = %q, %v; want the bad line 4 noted once", stderr, err)
	}
}

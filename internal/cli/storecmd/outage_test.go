package storecmd_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestMinIOOutageDuringRun stops MinIO for 10 s while trials run and upload, then starts it
// again: the run completes and every trial's record, metrics and logs are in the bucket.
func TestMinIOOutageDuringRun(t *testing.T) {
	srv := s3test.MinIO(t)
	bucket := srv.NewBucket()
	url := "s3://" + bucket + "/outage"
	dir := isolate(t, srv)
	const trials = 8
	writeFile(t, filepath.Join(dir, "exp.jsonnet"), `{
  name: "outage",
  matrix: { name: "t", params: { i: std.range(0, 7) }, cmd: "sleep 2; echo '::metric done={{i}}'" },
}`)
	done := make(chan result, 1)
	go func() { done <- jikken(t, "run", "exp.jsonnet", "--store", url, "-j", "2") }()

	// Wait for the first finished trial, so that the outage falls in the middle of the run.
	succeeded := func() int {
		n := 0
		c := srv.Client()
		for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: "outage/runs/", Recursive: true}) {
			if o.Err != nil || !strings.HasSuffix(o.Key, "/trial.json") {
				continue
			}
			obj, err := c.GetObject(context.Background(), bucket, o.Key, minio.GetObjectOptions{})
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(obj)
			obj.Close()
			if strings.Contains(string(b), `"status": "succeeded"`) {
				n++
			}
		}
		return n
	}
	for succeeded() == 0 {
		select {
		case r := <-done:
			t.Fatalf("the run ended before any trial was seen in the bucket: exit %d\n%s", r.code, r.stderr)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if n := succeeded(); n >= trials {
		t.Fatalf("all %d trials finished before the outage; the test needs longer trials", n)
	}
	srv.Stop()
	time.Sleep(10 * time.Second)
	srv.Start()

	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, "8 trials, 8 succeeded") {
		t.Fatalf("run after the outage: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	csv := must(t, "results", "latest", "-o", "csv", "--store", url).stdout
	for i := range trials {
		if want := fmt.Sprintf("t-%d,succeeded,%d,%d", i, i, i); !strings.Contains(csv, want) {
			t.Errorf("results lack trial %d:\n%s", i, csv)
		}
	}
	keys := strings.Join(srv.Keys(bucket), "\n")
	for i := range trials {
		for _, f := range []string{"trial.json", "params.json", "stdout.log", "metrics.jsonl"} {
			if k := fmt.Sprintf("/trials/t-%d/%s", i, f); !strings.Contains(keys, k) {
				t.Errorf("bucket lacks %s", k)
			}
		}
	}
}

package s3_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// listOnly hides the store's DirLister, so Runs takes its full List scan.
type listOnly struct{ store.Blob }

// requests counts the S3 requests a gofakes3 server answers, by kind.
type requests struct{ lists, heads, gets atomic.Int64 }

func (q *requests) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			q.heads.Add(1)
		case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
			q.lists.Add(1)
		case r.Method == http.MethodGet:
			q.gets.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

func (q *requests) reset() {
	if q != nil {
		q.lists.Store(0)
		q.heads.Store(0)
		q.gets.Store(0)
	}
}

// BenchmarkListing is store.BenchmarkListing on gofakes3 (in process, so the time is mostly the
// fake's work, not network round trips): 50 runs x 20 trials x 50 artifacts, RunIDs and Trials
// through the full List scan and through ListDirs, with the S3 requests each makes.
//
//	go test ./store/s3 -run '^$' -bench 'Listing$' -benchtime 3x
func BenchmarkListing(b *testing.B) {
	var q requests
	benchListing(b, s3test.FakeWith(b, q.wrap), &q)
}

// BenchmarkListingMinIO is BenchmarkListing on a MinIO on 127.0.0.1 (skipped without one), for
// times with real requests; it makes the same requests.
//
//	JIKKEN_MINIO=$(scripts/ci/minio.sh) go test ./store/s3 -run '^$' -bench ListingMinIO -benchtime 3x
func BenchmarkListingMinIO(b *testing.B) {
	benchListing(b, s3test.MinIO(b), nil)
}

func benchListing(b *testing.B, srv *s3test.Server, q *requests) {
	const nRuns, nTrials, nArtifacts = 50, 20, 50
	st, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/lab", srv.Config())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	runs := store.Runs{Blob: st}
	id := func(r int) string { return fmt.Sprintf("20261122-%06d-bench-%04x", r, r) }

	// Fill the bucket, 16 uploads at a time.
	keys := make(chan string, 64)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				if err := st.Put(ctx, k, strings.NewReader("x"), 1); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	for r := range nRuns {
		if err := runs.WriteManifest(ctx, &store.Manifest{RunID: id(r)}); err != nil {
			b.Fatal(err)
		}
		keys <- store.RunKey(id(r), "state.json")
		for t := range nTrials {
			name := fmt.Sprintf("t%03d", t)
			if err := runs.WriteTrial(ctx, &store.TrialRecord{Run: id(r), Name: name, Status: store.Succeeded}); err != nil {
				b.Fatal(err)
			}
			for _, f := range []string{"params.json", "metrics.jsonl", "result.json", "stdout.log", "stderr.log"} {
				keys <- store.TrialKey(id(r), name, f)
			}
			for a := range nArtifacts {
				keys <- store.TrialKey(id(r), name, fmt.Sprintf("artifacts/ckpt/%03d.bin", a))
			}
		}
	}
	close(keys)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}

	for _, way := range []string{"scan", "dirs"} {
		runs := store.Runs{Blob: st}
		if way == "scan" {
			runs.Blob = listOnly{st}
		}
		report := func(b *testing.B) {
			if q == nil {
				return
			}
			n := float64(b.N)
			b.ReportMetric(float64(q.lists.Load())/n, "lists/op")
			b.ReportMetric(float64(q.heads.Load())/n, "heads/op")
			b.ReportMetric(float64(q.gets.Load())/n, "gets/op")
		}
		b.Run("RunIDs/"+way, func(b *testing.B) {
			q.reset()
			for b.Loop() {
				ids, err := runs.RunIDs(ctx)
				if err != nil || len(ids) != nRuns {
					b.Fatalf("RunIDs = %d ids, %v", len(ids), err)
				}
			}
			report(b)
		})
		b.Run("Trials/"+way, func(b *testing.B) {
			q.reset()
			for b.Loop() {
				recs, err := runs.Trials(ctx, id(nRuns-1))
				if err != nil || len(recs) != nTrials {
					b.Fatalf("Trials = %d records, %v", len(recs), err)
				}
			}
			report(b)
		})
	}
}

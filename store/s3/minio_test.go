package s3_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
	"github.com/jikken-dev/jikken/store/storetest"
)

func TestConformanceMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	bucket := srv.NewBucket()
	for _, url := range []string{"s3://" + bucket, "s3://" + bucket + "/some/prefix"} {
		t.Run(url, func(t *testing.T) {
			b, err := s3.New(context.Background(), url, srv.Config())
			if err != nil {
				t.Fatal(err)
			}
			storetest.Run(t, b)
		})
	}
}

func TestLiveMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/live", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunLive(t, b)
}

// TestCreateOneWinnerMinIO races many Creates of the same key, many times: the conditional PUT
// must let exactly one through each time, the object must hold the winner's body, and the run
// lock built on it must refuse a second holder.
func TestCreateOneWinnerMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/race", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const rounds, racers = 50, 16
	for round := range rounds {
		key := fmt.Sprintf("lock/%d", round)
		var wg sync.WaitGroup
		results := make([]error, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf("racer %d", i)
				results[i] = b.Create(ctx, key, strings.NewReader(body), int64(len(body)))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range results {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: racers %d and %d both created %s", round, winner, i, key)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrExists):
				t.Fatalf("round %d: racer %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		got, err := store.ReadAll(ctx, b, key)
		if err != nil || string(got) != fmt.Sprintf("racer %d", winner) {
			t.Fatalf("round %d: object = %q, %v; want racer %d's body", round, got, err, winner)
		}
	}

	runs := store.Runs{Blob: b}
	release, err := runs.Lock(ctx, "r1", store.LockInfo{Host: "host-a", PID: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Lock(ctx, "r1", store.LockInfo{Host: "host-b", PID: 2}, false); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	release()
	if _, err := runs.Lock(ctx, "r1", store.LockInfo{Host: "host-b", PID: 2}, false); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
}

func TestListingMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/p", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunListing(t, b)
	storetest.RunSummary(t, b)
}

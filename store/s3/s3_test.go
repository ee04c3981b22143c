package s3_test

import (
	"context"
	"testing"

	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
	"github.com/jikken-dev/jikken/store/storetest"
)

func TestConformanceFake(t *testing.T) {
	srv := s3test.Fake(t)
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

func TestLiveFake(t *testing.T) {
	srv := s3test.Fake(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/p", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunLive(t, b)
}

func TestListingFake(t *testing.T) {
	srv := s3test.Fake(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/p", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunListing(t, b)
	storetest.RunSummary(t, b)
}

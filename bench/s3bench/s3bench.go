// Package s3bench gives the store benchmarks their yardstick: a plain minio-go client of the
// server a store configuration names, with the benchmark's bucket made if it is missing.
package s3bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/jikken-dev/jikken/store/s3"
)

// Plain connects to the server cfg names with path-style buckets, as jikken's S3 store does,
// and makes bucket unless it exists.
func Plain(ctx context.Context, cfg s3.Config, bucket string) (*minio.Client, error) {
	host := strings.TrimPrefix(strings.TrimPrefix(cfg.Endpoint, "http://"), "https://")
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKeyID, string(cfg.SecretAccessKey), ""),
		Secure: strings.HasPrefix(cfg.Endpoint, "https://"), Region: cfg.Region, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Endpoint, err)
	}
	ok, err := c.BucketExists(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if !ok {
		if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			return nil, fmt.Errorf("make bucket %s: %w", bucket, err)
		}
	}
	return c, nil
}

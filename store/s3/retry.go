package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/minio/minio-go/v7"

	"github.com/jikken-dev/jikken/store"
)

// Backoff between attempts: doubling from retryBase up to retryCap, with jitter (±50%) so that
// many runners that lost the server together do not come back together.
const (
	retryBase = 250 * time.Millisecond
	retryCap  = 5 * time.Second
)

// retry runs op until it succeeds, fails for good, or the retry budget is spent. op gets the
// attempt number (1, 2, ...) so it can rewind its body.
func (s *Store) retry(ctx context.Context, budget time.Duration, op func(attempt int) error) error {
	start, attempt := time.Now(), 0
	bo := &backoff.ExponentialBackOff{InitialInterval: retryBase, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: retryCap}
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		attempt++
		err := op(attempt)
		if err != nil && !transient(err) {
			err = backoff.Permanent(err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(bo), backoff.WithMaxElapsedTime(budget))
	if err != nil && transient(err) && ctx.Err() == nil {
		return fmt.Errorf("gave up after %d attempts in %s: %w", attempt, time.Since(start).Round(time.Millisecond), err)
	}
	return err
}

// transient reports whether err may go away on its own: the server was unreachable, dropped
// the connection, was busy or failed internally.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "RequestTimeTooSkewed",
		"XMinioServerNotInitialized", "XMinioReadQuorum", "XMinioWriteQuorum", "ConditionalRequestConflict":
		return true
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return true
	}
	if resp.StatusCode != 0 {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// describe turns a final S3 error into one that says what to do, wrapping store.ErrNotFound for
// a missing key. Errors from minio-go never hold the secret key; the access key id is not
// repeated either.
func (s *Store) describe(err error) error {
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "NoSuchKey":
		return store.ErrNotFound
	case "NoSuchBucket":
		return fmt.Errorf("bucket %q does not exist at %s; create it first (for example 'mc mb ALIAS/%s')", s.loc.Bucket, s.endpoint, s.loc.Bucket)
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken":
		return fmt.Errorf("%s refused the credentials (%s: %s); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the s3 config file)", s.endpoint, resp.Code, resp.Message)
	}
	if resp.Code == "" && resp.StatusCode == http.StatusNotFound {
		return store.ErrNotFound
	}
	if resp.Code != "" {
		return fmt.Errorf("%s: %s (%s)", s.endpoint, resp.Message, resp.Code)
	}
	return err
}

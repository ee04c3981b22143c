package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// probeClient makes one request per probe: no redirect is followed (a 3xx passes, as in
// Kubernetes' httpGet probe), and no connection is kept between probes.
var probeClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// ProbeHTTP runs one HTTP health probe: a GET of url that answers 2xx or 3xx passes. ctx
// bounds it. The error says why a probe failed.
func ProbeHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health check %s: %w", url, err)
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("health check: GET %s answered %s", url, resp.Status)
	}
	return nil
}

// PollHealthy runs check at once and then every interval until it reports ok (nil), fails
// for good (its error), ctx is done (ctx.Err()) or done is closed: the attempt of trial
// ended (an error wrapping ErrAttemptEnded). It is the loop of a backend's
// Healthier.WaitHealthy.
func PollHealthy(ctx context.Context, trial string, done <-chan struct{}, interval time.Duration,
	check func(context.Context) (ok bool, err error)) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			return err
		}
		if err := nextTick(ctx, trial, done, tick); err != nil {
			return err
		}
	}
}

// PollLiveness runs check every interval, the first time one interval from now, until
// FailureThreshold checks in a row report not ok: then it returns nil, and the caller says
// which check failed. It returns early as PollHealthy does. It is the loop of a backend's
// LivenessWatcher.WatchLiveness.
func PollLiveness(ctx context.Context, trial string, done <-chan struct{}, interval time.Duration,
	check func(context.Context) (ok bool, err error)) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for failed := 0; failed < FailureThreshold; {
		if err := nextTick(ctx, trial, done, tick); err != nil {
			return err
		}
		ok, err := check(ctx)
		switch {
		case err != nil:
			return err
		case ok:
			failed = 0
		default:
			failed++
		}
	}
	return nil
}

// nextTick waits for tick, unless ctx is done or the attempt of trial ends first.
func nextTick(ctx context.Context, trial string, done <-chan struct{}, tick *time.Ticker) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-done:
		return fmt.Errorf("%s: %w", trial, ErrAttemptEnded)
	case <-tick.C:
		return nil
	}
}

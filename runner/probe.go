package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

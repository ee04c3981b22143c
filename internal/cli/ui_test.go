package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
)

// serveUI starts runUI on opts until the test ends and returns the URL it printed.
func serveUI(t *testing.T, opts *uiOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	opts.ready = func(url string) { ready <- url }
	done := make(chan error, 1)
	go func() { done <- runUI(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ui after Ctrl-C: %v", err)
		}
	})
	select {
	case url := <-ready:
		return url
	case err := <-done:
		t.Fatalf("ui: %v", err)
	}
	return ""
}

func TestUIServesTheStoreOnLoopback(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, StoreURL: t.TempDir()}
	url := serveUI(t, &uiOptions{Factory: f, Addr: "127.0.0.1:0", Format: "json"})
	var printed struct{ URL, Store string }
	if err := json.Unmarshal(out.Bytes(), &printed); err != nil || printed.URL != url || strings.Contains(url, "token") {
		t.Fatalf("printed %q (%v); served %s", out, err, url)
	}
	res, err := http.Get(url + "api/runs")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("GET /api/runs: %s", res.Status)
	}
}

func TestUIBeyondLoopbackNeedsAToken(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, StoreURL: t.TempDir()}
	url := serveUI(t, &uiOptions{Factory: f, Addr: "0.0.0.0:0", Format: "text"})
	base, token, ok := strings.Cut(url, "?token=")
	if !ok || len(token) < 32 {
		t.Fatalf("url %q: want a made-up token", url)
	}
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	res, err := http.Get(base + "api/runs")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %s", res.Status)
	}
	req, _ := http.NewRequest("GET", base+"api/runs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("with the token: %s", res.Status)
	}
}

func TestUIUsageErrors(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, StoreURL: t.TempDir()}
	for _, o := range []*uiOptions{{Factory: f, Addr: "8080", Format: "text"}, {Factory: f, Addr: "127.0.0.1:0", Format: "yaml"}} {
		if err := runUI(context.Background(), o); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
			t.Errorf("%+v: %v; want a usage error", o, err)
		}
	}
}

func TestUIRefusesAMissingStoreFolder(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios, StoreURL: t.TempDir() + "/typo"}
	err := runUI(context.Background(), &uiOptions{Factory: f, Addr: "127.0.0.1:0", Format: "text"})
	if err == nil || !strings.Contains(err.Error(), "no store at") || !strings.Contains(err.Error(), "--store") {
		t.Errorf("a missing store folder: %v", err)
	}
}

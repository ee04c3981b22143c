package ui

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/store/s3/s3test"
)

// TestPagesFromMinIO serves the pages from a real MinIO through the store interface: the same
// pages, logs of every attempt, downloads and refusals as from a folder.
func TestPagesFromMinIO(t *testing.T) {
	srv := s3test.MinIO(t)
	b, err := s3.New(context.Background(), "s3://"+srv.NewBucket()+"/lab", srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	runs, id := fixtureIn(t, b)
	s, err := New(runs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]string{
		"/":                             id,
		"/runs/" + id:                   "t-bad",
		"/runs/" + id + "/trials/t-bad": "first try failed",
		"/runs/" + id + "/trials/t-ok":  "&lt;script&gt;alert(1)&lt;/script&gt;",
		"/runs/" + id + "/trials/t-ok/files/artifacts/page.html": "<script>", // a download, sandboxed
		"/runs/" + id + "/trials/t-bad/log/stderr?attempt=1":     "first try failed",
		"/api/runs/" + id: `"t-run"`,
	} {
		w := get(t, s, "GET", url)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d, want %q in:\n%s", url, w.Code, want, w.Body)
		}
	}
	for _, url := range []string{
		"/runs/" + id + "/trials/t-ok/files/..%2f..%2fstate.json",
		"/runs/" + id + "/trials/..%2f" + id + "/files/state.json",
	} {
		if w := get(t, s, "GET", url); w.Code == http.StatusOK {
			t.Errorf("%s: served from S3: %s", url, w.Body)
		}
	}
}

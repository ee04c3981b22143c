package ui

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// The exploration data is the run's results table kept to the rows that meet conditions of
// 'jikken results --where', parsed as the command parses them; a bad condition is a 400 that
// says what to write.
func TestExploreFiltersAsResultsWhere(t *testing.T) {
	s, id := server(t, Options{})
	explore := func(conds ...string) (int, Explore, string) {
		q := url.Values{"where": conds}
		w := get(t, s, "GET", "/api/runs/"+id+"/explore?"+q.Encode())
		var v Explore
		if w.Code == 200 {
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
		}
		return w.Code, v, w.Body.String()
	}
	code, all, body := explore()
	if code != 200 || all.Total != 3 || len(all.Rows) != 3 || strings.Join(all.Params, ",") != "algo,lr" || strings.Join(all.Metrics, ",") != "loss" {
		t.Fatalf("unfiltered: %d %+v %s", code, all, body)
	}
	trial := func(v Explore) string {
		var names []string
		for _, r := range v.Rows {
			names = append(names, r[0])
		}
		return strings.Join(names, ",")
	}
	for _, c := range []struct {
		where []string
		want  string
	}{
		{[]string{"loss<0.3"}, "t-ok"},
		{[]string{"lr=0.10", "status!=failed"}, "t-ok,t-run"},
		{[]string{"algo == sgd"}, "t-bad"},
		{[]string{"loss>1"}, ""},
	} {
		code, v, body := explore(c.where...)
		if code != 200 || trial(v) != c.want || v.Total != 3 {
			t.Errorf("where %q: %d rows %q, want %q (%s)", c.where, code, trial(v), c.want, body)
		}
	}
	if code, _, body := explore("lr<low"); code != 400 || !strings.Contains(body, "compares numbers") {
		t.Errorf("a condition comparing text: %d %s", code, body)
	}
	if code, _, body := explore("nope=1"); code != 400 || !strings.Contains(body, `no column \"nope\"`) {
		t.Errorf("a condition on no column: %d %s", code, body)
	}
}

// An SVG or HTML artifact asked for inline (the trial page's preview) is served as what it is,
// in a sandbox without scripts, that only this site may frame; asked for plainly it stays a
// download.
func TestInlineArtifactsAreSandboxed(t *testing.T) {
	s, id := server(t, Options{})
	w := get(t, s, "GET", "/runs/"+id+"/trials/t-ok/files/artifacts/page.html?view=inline")
	h := w.Header()
	csp := h.Get("Content-Security-Policy")
	if w.Code != 200 || h.Get("Content-Type") != "text/html; charset=utf-8" || !strings.HasPrefix(csp, "sandbox;") ||
		strings.Contains(csp, "allow-scripts") || !strings.Contains(csp, "default-src 'none'") || h.Get("X-Frame-Options") != "SAMEORIGIN" ||
		h.Get("Content-Disposition") != "" {
		t.Errorf("an HTML artifact inline: %d %v", w.Code, h)
	}
	w = get(t, s, "GET", "/runs/"+id+"/trials/t-ok")
	if !strings.Contains(w.Body.String(), `<iframe sandbox src="/runs/`+id+`/trials/t-ok/files/artifacts/page.html?view=inline"`) {
		t.Errorf("the trial page does not preview its HTML artifact in a sandboxed frame:\n%s", w.Body)
	}
}

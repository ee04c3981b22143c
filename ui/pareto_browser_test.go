package ui_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// The run page of a search of two objectives draws every completed trial, the front 'jikken
// results' prints as highlighted dots on a staircase and as a table, the hostile metric name
// and param values as text, and a dot opens its trial.
func TestBrowserPareto(t *testing.T) {
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	storeDir, id := paretoRun(t)
	front := resultsFront(t, storeDir, id)
	blob, err := store.OpenFolder(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ui.New(store.Runs{Blob: blob}, ui.Options{LoopbackOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	b, dialogs, closeTab := browserTab(ctx, t, exe, true, chromedp.WindowSize(1200, 1000))
	defer closeTab()
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[string](expr))
		must(t, err)
		return v
	}
	must(t, chromedp.Do(b, chromedp.Navigate(hs.URL+"/runs/"+id), chromedp.WaitVisible(chromedp.CSS("svg.pareto-plot"))))

	// What the browser drew, read in one script: the dots (the front's and the others'), the
	// crosses, the staircase, the table's rows.
	drawn := eval(`(() => {
		const q = s => [...document.querySelectorAll(s)];
		const front = q("svg.pareto-plot circle.pf-front").map(c => c.closest("a").getAttribute("href").split("/").pop());
		return [front.join(" "), q("svg.pareto-plot circle.pf-dot").length + q("svg.pareto-plot .pf-infeasible").length + front.length,
			q("svg.pareto-plot .pf-infeasible").length, q("svg.pareto-plot polyline.pf-step").length,
			q("#pareto-front tbody tr").map(r => r.dataset.trial).join(" ")].join("|");
	})()`)
	parts := strings.Split(drawn, "|")
	if len(parts) != 5 {
		t.Fatalf("drawn %q", drawn)
	}
	want := strings.Join(front, " ")
	dotsFront := strings.Fields(parts[0])
	if strings.Join(sorted(dotsFront), " ") != strings.Join(sorted(front), " ") || parts[4] != want {
		t.Errorf("the front's dots %v and table %q; jikken results prints %q", dotsFront, parts[4], want)
	}
	if parts[1] != "40" || parts[2] == "0" || parts[3] != "1" {
		t.Errorf("%s dots (want 40), %s crosses (want some), %s staircases (want 1)", parts[1], parts[2], parts[3])
	}

	// Hostile names are text: the axis label and the table show them, no element was made.
	if s := eval(`document.getElementById("pareto").textContent`); !strings.Contains(s, "<script>alert(1)</script> (min)") || !strings.Contains(s, "<img src=x onerror=alert(2)>") {
		t.Errorf("the section's text: %q", s)
	}
	if n := eval(`String(document.querySelectorAll("#pareto script, #pareto img, main script:not([src])").length)`); n != "0" {
		t.Errorf("%s elements made of names", n)
	}
	shot(t, b, "#pareto", "pareto")

	// A front dot opens its trial.
	must(t, chromedp.Do(b, chromedp.Click(chromedp.CSS("svg.pareto-plot a:last-of-type circle.pf-front")), chromedp.WaitVisible(chromedp.CSS("#trial-status"))))
	if loc := eval(`location.pathname`); !strings.HasPrefix(loc, "/runs/"+id+"/trials/s-") {
		t.Errorf("clicking a front dot went to %s", loc)
	}
	if d := dialogs.Load(); d != 0 {
		t.Errorf("%d dialogs opened", d)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}

package report

import (
	"bytes"
	"github.com/jikken-dev/jikken/report/chart"
	"strings"
	"testing"
)

func testPage(t *testing.T) *Page {
	t.Helper()
	tb := readTable(t, "three-algos.csv")
	c, err := Compare(tb, Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	box, err := c.BoxPlot(chart.Style{})
	if err != nil {
		t.Fatal(err)
	}
	fig, err := NewFigure("loss by algo", box)
	if err != nil {
		t.Fatal(err)
	}
	return &Page{
		Title: "optimizers <run>",
		Summary: Summary{
			RunID: "20260101-120000-demo", Experiment: "optimizers",
			Fields: []Field{{"created", "2026-01-01 12:00:00 UTC"}},
			Code:   []Field{{"commit", "0123456"}, {"dirty", "yes"}},
			Images: []Field{{"alpine:3.20", "sha256:beef"}},
			Params: []Field{{"algo", "sgd, adam, rmsprop"}},
		},
		Sections: []Section{{Comparison: c, Figures: []Figure{fig}}},
		Notes:    []string{"accuracy: group x has 1 usable observation"},
		Results:  tb,
	}
}

// The page is a golden file: review the diff when the template changes (go test ./report -update).
func TestWriteHTMLGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, testPage(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", buf.Bytes())
	html := buf.String()
	for _, want := range []string{
		"<title>optimizers &lt;run&gt;</title>",
		`<img src="data:image/png;base64,`,
		"adam is better than sgd on loss",
		"Nemenyi critical difference: 1.048 mean ranks",
		"How to read this: groups are listed by mean rank (1 = best)",
		"sha256:beef",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched from elsewhere.
	for _, bad := range []string{"http://", "https://", "<script", "<link"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q; it must not depend on anything outside the file", bad)
		}
	}
}

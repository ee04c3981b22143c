package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"

	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
)

// Page is everything a run's HTML report shows. The CLI fills it from the store, so this package
// needs to know nothing of how a run was produced.
type Page struct {
	Title   string
	Summary Summary
	// Sections hold one comparison (and its figures) per metric.
	Sections []Section
	// Notes explain what could not be shown (a metric with too few observations, ...).
	Notes   []string
	Results *results.Table
}

// Summary describes the run: where it came from and what it ran.
type Summary struct {
	RunID      string
	Experiment string
	Fields     []Field // created, host, user, tool, backend, status counts, ...
	Code       []Field // repository, commit, dirty, snapshot, changed files
	Images     []Field // image and the digest it resolved to
	Params     []Field // each param and the values it took
}

// Field is a labelled value.
type Field struct {
	Name, Value string
}

// Section is the comparison of one metric with its figures.
type Section struct {
	Comparison *Comparison
	Figures    []Figure
}

// Figure is a rendered plot.
type Figure struct {
	Caption string
	PNG     []byte
}

// NewFigure renders f as a PNG figure with a caption. PNG rather than SVG: the page then looks
// the same whatever fonts the reader's machine has.
func NewFigure(caption string, f *chart.Figure) (Figure, error) {
	var buf bytes.Buffer
	if err := f.Write(&buf, "png"); err != nil {
		return Figure{}, fmt.Errorf("figure %q: %w", caption, err)
	}
	return Figure{Caption: caption, PNG: buf.Bytes()}, nil
}

// maxRows bounds the results table in the page; the CSV from `jikken results` has them all.
const maxRows = 2000

//go:embed report.html.tmpl
var pageSource string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"p":           fmtP,
	"num":         fmtNum,
	"test":        testLabel,
	"effectCell":  effectCell,
	"headline":    func(c *Comparison) string { return c.headline() },
	"nemenyi":     func(c *Comparison) string { return c.nemenyiLine() },
	"groupHeader": func(c *Comparison) []string { return c.groupHeader() },
	"groupCells":  func(c *Comparison, i int, g Group) []string { return c.groupCells(i, g) },
	"dataURI": func(png []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
	},
	"rows": func(t *results.Table) [][]string {
		if len(t.Rows) > maxRows {
			return t.Rows[:maxRows]
		}
		return t.Rows
	},
	"more": func(t *results.Table) int { return max(0, len(t.Rows)-maxRows) },
}).Parse(pageSource))

// WriteHTML writes p as a single self-contained HTML file: styles inline, plots as data URIs, no
// script and nothing fetched from elsewhere, so the file can be mailed or archived as is.
func WriteHTML(w io.Writer, p *Page) error {
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteSectionHTML writes one section as the report shows it (headline, tables, verdicts,
// figures), for pages that embed it in their own layout; its classes are the report's.
func WriteSectionHTML(w io.Writer, s *Section) error {
	if err := pageTemplate.ExecuteTemplate(w, "section", s); err != nil {
		return fmt.Errorf("write section: %w", err)
	}
	return nil
}

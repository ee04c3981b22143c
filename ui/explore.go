package ui

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/jikken-dev/jikken/report"
)

// Explore is the data of a run page's exploration views (the scatter, the parallel
// coordinates, the groups): the run's results table as 'jikken results' prints it, kept to the
// rows that meet the conditions of 'jikken results --where', read by the same parser.
type Explore struct {
	Columns []string   `json:"columns"`
	Params  []string   `json:"params"`
	Metrics []string   `json:"metrics"`
	Rows    [][]string `json:"rows"`
	Total   int        `json:"total"` // rows before the conditions
	Where   []string   `json:"where,omitempty"`
}

// explore answers GET /api/runs/{run}/explore?where=COND&where=COND: a bad condition, or one
// naming no column, is a 400 whose message the page shows as is.
func (s *Server) explore(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("run")
	if err := segment("run", id); err != nil {
		s.fail(w, req, err)
		return
	}
	var where []string
	for _, c := range req.URL.Query()["where"] {
		if c = strings.TrimSpace(c); c != "" {
			where = append(where, c)
		}
	}
	conds := make([]report.Cond, len(where))
	for i, c := range where {
		var err error
		if conds[i], err = report.ParseCond(c); err != nil {
			s.fail(w, req, fmt.Errorf("%w: %w", err, errBadRequest))
			return
		}
	}
	t, v, err := s.r.runTable(req.Context(), id)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	cols := make([]int, len(conds))
	for i, c := range conds {
		if cols[i] = t.Col(c.Column); cols[i] < 0 {
			s.fail(w, req, fmt.Errorf("--where %q: no column %q; the columns are %s: %w", where[i], c.Column, strings.Join(t.Columns, ", "), errBadRequest))
			return
		}
	}
	out := &Explore{Columns: t.Columns, Params: v.Params, Metrics: make([]string, 0, len(v.Metrics)), Rows: [][]string{}, Total: len(t.Rows), Where: where}
	for _, m := range v.Metrics {
		// A metric named like a param or another head column has its own column name.
		if t.Col("metric."+m) >= 0 {
			m = "metric." + m
		}
		out.Metrics = append(out.Metrics, m)
	}
rows:
	for _, r := range t.Rows {
		for i, c := range conds {
			if cols[i] >= len(r) || !c.Holds(r[cols[i]]) {
				continue rows
			}
		}
		out.Rows = append(out.Rows, r)
	}
	s.writeJSON(w, req, out)
}

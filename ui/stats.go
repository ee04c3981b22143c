package ui

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

// StatsView is a comparison page: the choices offered, the ones made, and the outcome.
type StatsView struct {
	Runs    []string // the runs compared (one for a run's statistics page)
	Params  []string // columns that can group or pair trials
	Metrics []string
	By      string
	Metric  string
	PairBy  []string
	Dir     string // min, max or "" (unknown)
	// Failed and Incomplete are compare's --failed (worst, drop or "": its default) and
	// --incomplete (error or "": drop); the curves follow them too.
	Failed, Incomplete string
	Alpha              float64
	Where              []string

	Comparison *report.Comparison
	Section    template.HTML
	Error      string
	Notes      []string
	// Command is the 'jikken compare' line that gives the same numbers.
	Command string
	// Paired says the pairing was chosen here, not asked for.
	Paired string

	fresh bool // nothing chosen yet: pair trials as the design suggests
}

// statsInput reads a comparison's choices from a URL query.
func statsInput(q url.Values) *StatsView {
	v := &StatsView{By: q.Get("by"), Metric: q.Get("metric"), Dir: q.Get("dir"), Alpha: 0.05, Where: q["where"],
		fresh: !q.Has("metric") && !q.Has("by") && !q.Has("pair_by")}
	if f := q.Get("failed"); f == report.FailedWorst || f == report.FailedDrop {
		v.Failed = f
	}
	if q.Get("incomplete") == report.IncompleteError {
		v.Incomplete = report.IncompleteError
	}
	for _, p := range q["pair_by"] {
		for _, c := range strings.Split(p, ",") {
			if c = strings.TrimSpace(c); c != "" && !slices.Contains(v.PairBy, c) {
				v.PairBy = append(v.PairBy, c)
			}
		}
	}
	if a, err := strconv.ParseFloat(q.Get("alpha"), 64); err == nil && a > 0 && a < 1 {
		v.Alpha = a
	}
	return v
}

// table reads the results of the runs: one run's table as is, several runs' tables stacked
// with a leading column "run" (their columns united, a missing value left empty).
func (r *reader) table(ctx context.Context, ids []string) (*results.Table, []string, error) {
	params := map[string]bool{}
	var tables []*results.Table
	for _, id := range ids {
		if err := segment("run", id); err != nil {
			return nil, nil, err
		}
		f, err := r.facts(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range f.params {
			params[p] = true
		}
		t, err := r.loadTable(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		tables = append(tables, t)
	}
	if len(tables) == 1 {
		return tables[0], slices.Sorted(maps.Keys(params)), nil
	}
	params["run"] = true
	cols := []string{"run"}
	for _, t := range tables {
		for _, c := range t.Columns {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	out := &results.Table{Columns: cols}
	for i, t := range tables {
		for _, row := range t.Rows {
			line := make([]string, len(cols))
			line[0] = ids[i]
			for j, c := range t.Columns {
				line[slices.Index(cols, c)] = row[j]
			}
			out.Rows = append(out.Rows, line)
		}
	}
	return out, slices.Sorted(maps.Keys(params)), nil
}

// compare fills v with the comparison of the runs' trials, choosing what was not given: the
// only param that varies as the groups ("run" across runs), the first metric.
func (r *reader) compare(ctx context.Context, ids []string, v *StatsView) error {
	v.Runs = ids
	t, params, err := r.table(ctx, ids)
	if err != nil {
		return err
	}
	if t, err = report.Where(t, v.Where); err != nil {
		v.Error = err.Error()
		return nil
	}
	v.Params = append(params, "seed")
	for _, c := range t.Columns {
		if c != "trial" && c != "status" && c != "seed" && c != "run" && !slices.Contains(params, c) {
			v.Metrics = append(v.Metrics, c)
		}
	}
	if v.By == "" {
		v.By = chooseBy(t, params, v.PairBy, len(ids) > 1)
	}
	if v.Metric == "" && len(v.Metrics) > 0 {
		v.Metric = v.Metrics[0]
	}
	if v.fresh && v.By != "" {
		// A first look pairs trials by everything else that varies and the seed: the demo's
		// algorithms x functions x seeds compares algorithms within each function and seed, as
		// a researcher would, not pooled over functions. Without complete blocks it is unpaired.
		v.PairBy = pairing(t, params, v.By)
		if len(v.PairBy) > 0 {
			o := report.Options{By: v.By, Metric: v.Metric, PairBy: strings.Join(v.PairBy, ",")}
			if _, err := report.Compare(t, o); err != nil {
				v.PairBy = nil
			} else {
				v.Paired = strings.Join(v.PairBy, ", ")
			}
		}
	}
	if v.By == "" || v.Metric == "" {
		v.Error = "choose the column whose values are the groups and a metric"
		if len(v.Metrics) == 0 {
			v.Error = "no metric yet: trials report metrics in metrics.jsonl or result.json"
		}
		return nil
	}
	o := report.Options{By: v.By, Metric: v.Metric, PairBy: strings.Join(v.PairBy, ","), Alpha: v.Alpha, Alternative: stats.TwoSided,
		Failed: v.Failed, Incomplete: v.Incomplete}
	switch v.Dir {
	case "min":
		o.Direction = report.LowerIsBetter
	case "max":
		o.Direction = report.HigherIsBetter
	default:
		v.Dir = ""
	}
	if o.Failed == report.FailedWorst && o.Direction == report.DirectionUnknown {
		v.Error = "failed trials can rank worst only when the metric's direction is known: choose lower or higher is better, or leave them out"
		return nil
	}
	v.Command = command(ids, v)
	c, err := report.Compare(t, o)
	if err != nil {
		v.Error = err.Error()
		return nil
	}
	v.Comparison = c
	sec := &report.Section{Comparison: c}
	var style chart.Style
	if p, err := c.BoxPlot(style); err == nil {
		if fig, err := report.NewFigure(fmt.Sprintf("%s per %s: boxes with every trial as a point", c.Metric, c.By), p); err == nil {
			sec.Figures = append(sec.Figures, fig)
		}
	} else {
		v.Notes = append(v.Notes, "box plot not drawn: "+err.Error())
	}
	if fig, notes, err := r.curvesFigure(ctx, ids, t, o); err != nil {
		v.Notes = append(v.Notes, "convergence curves not drawn: "+err.Error())
	} else if fig != nil {
		sec.Figures = append(sec.Figures, *fig)
		v.Notes = append(v.Notes, notes...)
	}
	if c.CriticalDifference != nil {
		if why := c.NemenyiSkipped(); why != "" {
			v.Notes = append(v.Notes, "no critical-difference diagram: "+why+", so Nemenyi's post-hoc test does not apply")
		} else if p, err := c.CDPlot(style); err == nil {
			if fig, err := report.NewFigure(fmt.Sprintf("%s: mean ranks; groups joined by a bar do not differ significantly (Nemenyi)", c.Metric), p); err == nil {
				sec.Figures = append(sec.Figures, fig)
			}
		}
	} else if len(c.Groups) >= 3 && len(v.PairBy) == 0 {
		v.Notes = append(v.Notes, "a critical-difference diagram needs paired trials: choose what pairs them (seed, and the other params that are not the groups)")
	}
	var buf bytes.Buffer
	if err := report.WriteSectionHTML(&buf, sec); err != nil {
		return err
	}
	v.Section = template.HTML(buf.String()) // html/template output: escaped already
	return nil
}

// chooseBy picks the grouping column: across runs the run, else the only param that varies,
// seed and the pairing columns aside (as 'jikken report' does), else the first that varies.
func chooseBy(t *results.Table, params, pairBy []string, several bool) string {
	if several {
		return "run"
	}
	var varying []string
	for _, p := range params {
		if p == "seed" || slices.Contains(pairBy, p) {
			continue
		}
		if varies(t, p) {
			varying = append(varying, p)
		}
	}
	if len(varying) > 0 {
		return varying[0]
	}
	return ""
}

// command is the CLI line that computes the same comparison.
func command(ids []string, v *StatsView) string {
	if len(ids) != 1 {
		return ""
	}
	parts := []string{"jikken", "compare", ids[0], "--by", v.By, "--metric", v.Metric}
	if len(v.PairBy) > 0 {
		parts = append(parts, "--pair-by", strings.Join(v.PairBy, ","))
	}
	switch v.Dir {
	case "min":
		parts = append(parts, "--lower-is-better")
	case "max":
		parts = append(parts, "--higher-is-better")
	}
	if v.Failed != "" {
		parts = append(parts, "--failed", v.Failed)
	}
	if v.Incomplete != "" {
		parts = append(parts, "--incomplete", v.Incomplete)
	}
	if v.Alpha != 0.05 {
		parts = append(parts, "--alpha", strconv.FormatFloat(v.Alpha, 'g', -1, 64))
	}
	for _, w := range v.Where {
		parts = append(parts, "--where", w)
	}
	for i, p := range parts {
		if strings.ContainsAny(p, " \t'\"$`\\;&|<>()*?[]{}!#~") || p == "" {
			parts[i] = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}

// stats compares the runs' trials as the request asks. The comparison of runs that have all
// ended is kept, keyed by the question and each run's end (the state's status and Finished
// time, which whatever changes an ended run's trials rewrites): a statistics page reads every
// trial's metrics and curves, and an ended run's answer does not change.
func (s *Server) stats(req *http.Request, ids []string) (*StatsView, error) {
	q := req.URL.Query()
	key, keep := s.r.statsKey(req.Context(), ids, q)
	if keep {
		s.r.mu.Lock()
		v := s.r.stats[key]
		s.r.mu.Unlock()
		if v != nil {
			return v, nil
		}
	}
	v := statsInput(q)
	if err := s.r.compare(req.Context(), ids, v); err != nil {
		return nil, err
	}
	if keep {
		s.r.mu.Lock()
		if len(s.r.stats) >= maxCachedStats {
			clear(s.r.stats)
		}
		s.r.stats[key] = v
		s.r.mu.Unlock()
	}
	return v, nil
}

// maxCachedStats bounds the comparisons kept: each holds its figures, tens of KiB.
const maxCachedStats = 256

// statsKey names a comparison of runs that have all ended, and reports false when one has not
// (or cannot be read: the comparison then says why).
func (r *reader) statsKey(ctx context.Context, ids []string, q url.Values) (string, bool) {
	var b strings.Builder
	for _, id := range ids {
		if segment("run", id) != nil {
			return "", false
		}
		stamp := r.endStamp(ctx, id)
		if stamp == "" {
			return "", false
		}
		fmt.Fprintf(&b, "%s %s\n", id, stamp)
	}
	q = maps.Clone(q)
	delete(q, "run")
	delete(q, "q")
	b.WriteString(q.Encode())
	return b.String(), true
}

func (s *Server) statsPage(w http.ResponseWriter, req *http.Request) {
	run := req.PathValue("run")
	v, err := s.stats(req, []string{run})
	if err != nil {
		s.fail(w, req, err)
		return
	}
	s.render(w, req, "stats", &pageData{Title: "Statistics · " + run, Stats: v})
}

func (s *Server) statsJSON(w http.ResponseWriter, req *http.Request) {
	v, err := s.stats(req, []string{req.PathValue("run")})
	s.answerComparison(w, req, v, err)
}

// compareRuns reads ?run= (repeated or comma-separated); with none it lists the runs to pick.
func compareRuns(req *http.Request) []string {
	var ids []string
	for _, r := range req.URL.Query()["run"] {
		for _, id := range strings.Split(r, ",") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func (s *Server) comparePage(w http.ResponseWriter, req *http.Request) {
	ids := compareRuns(req)
	d := &pageData{Title: "Compare runs"}
	all, err := s.r.runsPage(req.Context(), req.URL.Query().Get("q"), "", nil, 1)
	if err != nil {
		s.fail(w, req, err)
		return
	}
	d.Runs = all
	d.Selected = ids
	if len(ids) > 0 {
		if d.Stats, err = s.stats(req, ids); err != nil {
			s.fail(w, req, err)
			return
		}
	}
	s.render(w, req, "compare", d)
}

func (s *Server) compareJSON(w http.ResponseWriter, req *http.Request) {
	ids := compareRuns(req)
	if len(ids) == 0 {
		s.fail(w, req, fmt.Errorf("name the runs to compare with ?run=ID&run=ID: %w", errBadRequest))
		return
	}
	v, err := s.stats(req, ids)
	s.answerComparison(w, req, v, err)
}

func (s *Server) answerComparison(w http.ResponseWriter, req *http.Request, v *StatsView, err error) {
	if err != nil {
		s.fail(w, req, err)
		return
	}
	if v.Comparison == nil {
		s.fail(w, req, fmt.Errorf("%s: %w", v.Error, errBadRequest))
		return
	}
	s.writeJSON(w, req, v.Comparison)
}

// curvesFigure draws the metric's convergence per group, as 'jikken report' does, from the
// trials the comparison describes under the same failure policy (report.CurvesFor): each
// group's last point is the comparison's median, and the trials left out are listed in the
// notes. A metric that only comes from result.json has no curve, and no figure.
func (r *reader) curvesFigure(ctx context.Context, ids []string, t *results.Table, o report.Options) (*report.Figure, []string, error) {
	trialCol, runCol := t.Col("trial"), t.Col("run")
	if trialCol < 0 || t.Col(o.By) < 0 {
		return nil, nil, nil
	}
	cs, err := report.CurvesFor(t, o, "step", 0, func(rows []int) ([][]results.Point, error) {
		out := make([][]results.Point, len(rows))
		err := inParallel(len(rows), func(i int) error {
			row := t.Rows[rows[i]]
			run := ids[0]
			if runCol >= 0 && len(ids) > 1 {
				run = row[runCol]
			}
			var err error
			out[i], err = results.TrialPoints(ctx, r.runs.Blob, run, row[trialCol])
			return err
		})
		return out, err
	})
	if err != nil || len(cs.Groups) == 0 {
		return nil, nil, err
	}
	p, err := cs.Plot(chart.Style{})
	if err != nil {
		return nil, nil, err
	}
	fig, err := report.NewFigure(fmt.Sprintf("%s over steps: median and inter-quartile band per %s, each trial's last value carried forward", o.Metric, o.By), p)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	for _, w := range cs.Warnings() {
		notes = append(notes, o.Metric+" curves: "+w)
	}
	return &fig, notes, nil
}

// varies reports whether column col of t holds more than one non-empty value.
func varies(t *results.Table, col string) bool {
	i := t.Col(col)
	if i < 0 {
		return false
	}
	first := ""
	for _, row := range t.Rows {
		switch v := row[i]; {
		case v == "":
		case first == "":
			first = v
		case v != first:
			return true
		}
	}
	return false
}

// pairing lists the columns that pair trials on a first look: every param other than by that
// varies, and the seed when trials have one.
func pairing(t *results.Table, params []string, by string) []string {
	var out []string
	for _, p := range append(slices.Clone(params), "seed") {
		if p == by || p == "run" || slices.Contains(out, p) {
			continue
		}
		if varies(t, p) {
			out = append(out, p)
		}
	}
	return out
}

// loadTable is the run's results table as 'jikken results' lays it out, read as the run page
// reads it: records and metrics 16 at a time, the metrics of ended trials from the cache.
func (r *reader) loadTable(ctx context.Context, id string) (*results.Table, error) {
	t, _, err := r.runTable(ctx, id)
	return t, err
}

// runTable is loadTable with the run page's view it was made from (its params and metrics).
func (r *reader) runTable(ctx context.Context, id string) (*results.Table, *RunView, error) {
	v, err := r.run(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	c := r.ended[id]
	r.mu.Unlock()
	if c != nil && c.view == v {
		r.mu.Lock()
		t := c.table
		r.mu.Unlock()
		if t != nil {
			return t, v, nil
		}
	}
	rows := make([]results.Row, len(v.Trials))
	for i, t := range v.Trials {
		params := make(map[string]any, len(t.Params))
		for k, p := range t.Params {
			params[k] = p
		}
		rows[i] = results.Row{Trial: t.Name, Group: t.Group, Status: t.Status, Params: params, Seed: t.Seed, Metrics: t.Metrics}
	}
	t := results.ToTable(rows)
	if c != nil && c.view == v {
		r.mu.Lock()
		c.table = t
		r.mu.Unlock()
	}
	return t, v, nil
}

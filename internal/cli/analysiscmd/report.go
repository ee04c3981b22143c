package analysiscmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// ReportOptions are the inputs of `jikken report`.
type ReportOptions struct {
	Factory *cmdutil.Factory
	Source  string
	Out     string
	By      string
	// Metrics are metric names, each optionally suffixed ":min" or ":max" for its direction.
	Metrics []string
	PairBy  string
	Alpha   float64
	// ForceCD draws critical-difference diagrams even when Friedman is not significant.
	ForceCD bool
	Curve   curveOptions
	// Where are COLUMN=VALUE conditions a trial must meet to be in the report's tables.
	Where []string
	// Tests holds the direction (for metrics without :min or :max) and the test options.
	Tests report.Options
	Style chart.Style
	// Order and Rename arrange the groups of every section (report.Arrange), as plot's do.
	Order  []string
	Rename map[string]string
	flags  testFlags
	figure figureFlags
	looks  plotFlags
}

// NewReportCmd builds `jikken report`.
func NewReportCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &ReportOptions{Factory: f}
	var out *cmdutil.PathOutput
	cmd := &cobra.Command{
		Use:   "report RUN --out report.html",
		Short: "Write a self-contained HTML report of a run: manifest, results, comparisons, plots",
		Long: `Report writes one HTML file that needs nothing else to be read: the run's manifest summary
(code snapshot, images and their digests, parameters), a comparison of the groups on each metric
(as 'jikken compare' prints it) with box plots, convergence curves and, for paired designs of
three or more groups, a critical-difference diagram, and the results table.

--by defaults to the only parameter whose value varies across trials (seed and the --pair-by
columns aside); --metric
defaults to every metric. Give a metric's direction with a suffix: --metric loss:min
--metric accuracy:max (without one, --lower-is-better or --higher-is-better decides). The
test options (--alternative, --failed, --incomplete) work as in 'jikken compare'. A
critical-difference diagram is drawn only when Friedman is significant, unless --force-cd.

The figures take plot's controls: --width, --height, --font-size and --font size them;
--title, --xlabel and --ylabel replace what each says ("-" leaves it out); --log-x and --log-y
put an axis on a log scale (a figure that cannot, such as a box plot of values that are not all
positive, becomes a note); --legend places the curves' legend; --order and --rename arrange and
name the groups in the comparisons and figures (the results table keeps the run's values).`,
		Example: `  jikken report latest --out report.html
  jikken report latest --by algo --metric loss:min --metric accuracy:max --pair-by seed --out report.html
  jikken report latest --width 8.5cm --title - --order sgd,adam --rename de="differential evolution" --out paper.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Source = args[0]
			if err := out.Resolve(f.IO); err != nil {
				return err
			}
			opts.Out = out.Path
			if err := opts.flags.apply(&opts.Tests); err != nil {
				return err
			}
			if err := opts.figure.apply(&opts.Style); err != nil {
				return err
			}
			rename, err := opts.looks.apply(&opts.Style)
			if err != nil {
				return err
			}
			opts.Order, opts.Rename = opts.looks.order, rename
			return runReport(cmd.Context(), opts)
		},
	}
	out = cmdutil.AddPathOutput(cmd, "out", "report.html", "HTML file to write", "html")
	fl := cmd.Flags()
	fl.StringVar(&opts.By, "by", "", "column whose values are the groups (default: the only param that varies)")
	fl.StringArrayVar(&opts.Metrics, "metric", nil, "metric to compare, optionally NAME:min or NAME:max (repeatable; default: all)")
	fl.StringVar(&opts.PairBy, "pair-by", "", "column(s) that pair rows across groups, e.g. seed or fn,seed (paired tests)")
	opts.flags.register(fl)
	fl.BoolVar(&opts.ForceCD, "force-cd", false, "draw critical-difference diagrams even when Friedman is not significant")
	opts.figure.register(fl)
	opts.looks.register(fl)
	fl.StringVar(&opts.Curve.x, "x", "step", "curves: the x axis, step or time (seconds since each trial's first timestamped line)")
	fl.IntVar(&opts.Curve.grid, "grid", 0, "curves: evaluate on N evenly spaced points instead of every step logged")
	fl.Float64Var(&opts.Alpha, "alpha", 0.05, "significance level")
	fl.StringArrayVar(&opts.Where, "where", nil, "report only trials where COLUMN=VALUE (repeatable; all must hold)")
	return cmd
}

func runReport(ctx context.Context, opts *ReportOptions) error {
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		return cmdutil.UsageError("--alpha %v is outside (0, 1); use e.g. 0.05", opts.Alpha)
	}
	if err := opts.Curve.check(); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if !strings.HasSuffix(strings.ToLower(opts.Out), ".html") {
		return cmdutil.UsageError("--out %q: name a file ending in .html", opts.Out)
	}
	runs, id, err := openRun(ctx, opts.Factory, opts.Source)
	if err != nil {
		return err
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return err
	}
	recs, err := runs.Trials(ctx, id)
	if err != nil {
		return fmt.Errorf("report %s: %w", id, err)
	}
	t, err := results.LoadTable(ctx, runs, id)
	if err != nil {
		return err
	}
	if t, err = report.Where(t, opts.Where); err != nil {
		return fmt.Errorf("report %s: %w", id, err)
	}
	params := paramNames(m)
	page := &report.Page{
		Title:   fmt.Sprintf("%s — run %s", orDefault(m.Experiment, "experiment"), id),
		Summary: summarize(ctx, runs, m, recs, t),
		Results: t,
	}
	if len(opts.Where) > 0 {
		page.Summary.Fields = append(page.Summary.Fields, report.Field{Name: "trials shown", Value: strings.Join(opts.Where, " and ")})
	}
	by, note := chooseBy(opts.By, opts.PairBy, t, params)
	if note != "" {
		page.Notes = append(page.Notes, note)
	}
	if by != "" {
		metrics, err := chooseMetrics(opts.Metrics, opts.Tests.Direction, t, params)
		if err != nil {
			return err
		}
		groups := t
		if len(opts.Order) > 0 || len(opts.Rename) > 0 {
			if groups, err = report.Arrange(t, by, opts.Order, opts.Rename); err != nil {
				return cmdutil.UsageError("report %s: %v", id, err)
			}
		}
		for _, mt := range metrics {
			sec, note := section(ctx, runs, id, groups, opts, by, mt)
			if note != "" {
				page.Notes = append(page.Notes, note)
			}
			if sec != nil {
				page.Sections = append(page.Sections, *sec)
			}
		}
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, page); err != nil {
		return err
	}
	if err := os.WriteFile(opts.Out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if opts.Factory.IO.ErrTTY {
		fmt.Fprintf(opts.Factory.IO.ErrOut, "wrote %s\n", opts.Out)
	}
	return nil
}

// metricChoice is a metric and its direction.
type metricChoice struct {
	name string
	dir  report.Direction
}

// section compares the groups on one metric and draws its figures. A metric that cannot be
// compared becomes a note rather than failing the whole report.
func section(ctx context.Context, runs store.Runs, id string, t *results.Table, opts *ReportOptions, by string, mt metricChoice) (*report.Section, string) {
	o := opts.Tests
	o.By, o.Metric, o.PairBy, o.Direction, o.Alpha = by, mt.name, opts.PairBy, mt.dir, opts.Alpha
	c, err := report.Compare(t, o)
	if err != nil {
		return nil, fmt.Sprintf("%s: not compared: %v", mt.name, err)
	}
	sec := &report.Section{Comparison: c}
	var notes []string
	add := func(caption string, build func() (*report.Figure, error)) {
		fig, err := build()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %s not drawn: %v", mt.name, caption, err))
			return
		}
		if fig != nil {
			sec.Figures = append(sec.Figures, *fig)
		}
	}
	add("box plot", func() (*report.Figure, error) {
		p, err := c.BoxPlot(opts.Style)
		if err != nil {
			return nil, err
		}
		fig, err := report.NewFigure(fmt.Sprintf("%s per %s: boxes with every trial as a point", mt.name, by), p)
		return &fig, err
	})
	add("convergence curves", func() (*report.Figure, error) {
		cs, err := buildCurves(ctx, runs, id, t, o, opts.Curve)
		if errors.Is(err, errNoCurve) {
			// Metrics that only come from result.json have no curve; that is not worth a note.
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		for _, w := range cs.Warnings() {
			notes = append(notes, fmt.Sprintf("%s curves: %s", mt.name, w))
		}
		p, err := cs.Plot(opts.Style)
		if err != nil {
			return nil, err
		}
		over := "steps"
		if cs.Time {
			over = "time"
		}
		fig, err := report.NewFigure(fmt.Sprintf("%s over %s: median and inter-quartile band per %s, each trial's last value carried forward", mt.name, over, by), p)
		return &fig, err
	})
	if why := c.NemenyiSkipped(); why != "" && !opts.ForceCD {
		notes = append(notes, fmt.Sprintf("%s: no critical-difference diagram: %s, so Nemenyi's post-hoc test does not apply (--force-cd draws it anyway)", mt.name, why))
	}
	if c.CriticalDifference != nil && (c.NemenyiApplies() || opts.ForceCD) {
		add("critical-difference diagram", func() (*report.Figure, error) {
			p, err := c.CDPlot(opts.Style)
			if err != nil {
				return nil, err
			}
			fig, err := report.NewFigure(fmt.Sprintf("%s: mean ranks; groups joined by a bar do not differ significantly (Nemenyi)", mt.name), p)
			return &fig, err
		})
	}
	return sec, strings.Join(notes, "; ")
}

// paramNames lists the parameters of the run's (non-service) trials.
func paramNames(m *store.Manifest) map[string]bool {
	out := map[string]bool{}
	for _, t := range m.Trials {
		if t.DeclaredService() {
			continue
		}
		for k := range t.Params {
			out[k] = true
		}
	}
	return out
}

// chooseBy returns the grouping column: the one asked for, else the only param whose value varies
// across trials, leaving out seed and the pairing columns. When it cannot choose, it says why in
// a note.
func chooseBy(asked, pairBy string, t *results.Table, params map[string]bool) (string, string) {
	if asked != "" {
		return asked, ""
	}
	pairing := map[string]bool{"seed": true}
	for _, c := range strings.Split(pairBy, ",") {
		pairing[strings.TrimSpace(c)] = true
	}
	var varying []string
	for _, c := range t.Columns {
		if params[c] && !pairing[c] && len(distinct(t, c)) > 1 {
			varying = append(varying, c)
		}
	}
	switch len(varying) {
	case 1:
		return varying[0], ""
	case 0:
		return "", "no comparison: no parameter varies across trials; pass --by COLUMN to group trials"
	}
	return "", fmt.Sprintf("no comparison: several parameters vary (%s); pass --by with the one that names the groups", strings.Join(varying, ", "))
}

// chooseMetrics parses NAME[:min|:max] choices, or takes every metric column of t; dflt is the
// direction of metrics without a suffix.
func chooseMetrics(asked []string, dflt report.Direction, t *results.Table, params map[string]bool) ([]metricChoice, error) {
	var out []metricChoice
	if len(asked) == 0 {
		for _, c := range t.Columns {
			if c != "trial" && c != "status" && c != "seed" && !params[c] {
				out = append(out, metricChoice{name: c, dir: dflt})
			}
		}
		return out, nil
	}
	for _, a := range asked {
		name, dir, _ := strings.Cut(a, ":")
		mc := metricChoice{name: name, dir: dflt}
		switch dir {
		case "":
		case "min":
			mc.dir = report.LowerIsBetter
		case "max":
			mc.dir = report.HigherIsBetter
		default:
			return nil, cmdutil.UsageError("--metric %q: the direction after ':' must be min or max", a)
		}
		out = append(out, mc)
	}
	return out, nil
}

func distinct(t *results.Table, col string) []string {
	i := t.Col(col)
	var out []string
	for _, r := range t.Rows {
		if i >= 0 && !slices.Contains(out, r[i]) {
			out = append(out, r[i])
		}
	}
	return out
}

// summarize collects the manifest facts the report opens with.
func summarize(ctx context.Context, runs store.Runs, m *store.Manifest, recs map[string]*store.TrialRecord, t *results.Table) report.Summary {
	s := report.Summary{RunID: m.RunID, Experiment: m.Experiment}
	add := func(fs *[]report.Field, name, value string) {
		if value != "" {
			*fs = append(*fs, report.Field{Name: name, Value: value})
		}
	}
	if !m.Created.IsZero() {
		add(&s.Fields, "created", m.Created.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add(&s.Fields, "experiment file", m.File)
	if st, err := runs.State(ctx, m.RunID); err == nil {
		add(&s.Fields, "status", string(st.Status))
	}
	add(&s.Fields, "trials", trialCounts(m, recs))
	add(&s.Fields, "backend", m.Backend)
	add(&s.Fields, "host", m.Host)
	add(&s.Fields, "user", m.User)
	add(&s.Fields, "tool", m.Tool)
	if c := m.Code; c != nil {
		add(&s.Code, "repository", c.Repo)
		add(&s.Code, "remote", c.Origin)
		add(&s.Code, "branch", c.Branch)
		add(&s.Code, "commit", c.Head)
		dirty := "no"
		if c.Dirty {
			dirty = "yes: the run used uncommitted changes, kept in the snapshot"
		}
		add(&s.Code, "uncommitted changes", dirty)
		if c.Dirty {
			add(&s.Code, "snapshot", c.Commit)
			add(&s.Code, "snapshot ref", c.Ref)
		}
		add(&s.Code, "ghost repository", c.GhostRepo)
		add(&s.Code, "changed files", strings.Join(c.Files, ", "))
	}
	images := map[string]string{}
	for _, r := range recs {
		if r.Image == "" {
			continue
		}
		if d := r.ImageDigest; d != "" || images[r.Image] == "" {
			images[r.Image] = orDefault(d, "(digest not recorded)")
		}
	}
	for _, img := range slices.Sorted(maps.Keys(images)) {
		add(&s.Images, img, images[img])
	}
	params := paramNames(m)
	for _, p := range t.Columns {
		if params[p] {
			// Trials without the param (a build step) leave it empty; that is not a value.
			vals := slices.DeleteFunc(distinct(t, p), func(v string) bool { return v == "" })
			v := strings.Join(vals, ", ")
			if len(vals) > 20 {
				v = strings.Join(vals[:20], ", ") + fmt.Sprintf(", ... (%d values)", len(vals))
			}
			add(&s.Params, p, v)
		}
	}
	return s
}

func trialCounts(m *store.Manifest, recs map[string]*store.TrialRecord) string {
	counts := map[string]int{}
	total := 0
	for _, t := range m.Trials {
		if t.DeclaredService() {
			continue
		}
		total++
		st := string(store.Pending)
		if r := recs[t.Name]; r != nil {
			st = string(r.Status)
		}
		counts[st]++
	}
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, strconv.Itoa(counts[st])+" "+st)
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

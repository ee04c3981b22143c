package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
	"github.com/jikken-dev/jikken/store"
)

// RunSummary is a run's line in the runs list, and its JSON in /api/runs.
type RunSummary struct {
	ID         string               `json:"run_id"`
	Experiment string               `json:"experiment"`
	Status     store.Status         `json:"status"`
	Counts     map[store.Status]int `json:"counts"`
	Total      int                  `json:"trials"`
	Created    time.Time            `json:"created"`
	Started    *time.Time           `json:"started,omitempty"`
	Finished   *time.Time           `json:"finished,omitempty"`
	User       string               `json:"user,omitempty"`
	Host       string               `json:"host,omitempty"`
	Backend    string               `json:"backend,omitempty"`
	Commit     string               `json:"commit,omitempty"`
	Dirty      bool                 `json:"dirty,omitempty"`
	// Note says who runs it, or that its runner is gone.
	Note string `json:"note,omitempty"`
	// Error says why the run could not be read (a damaged manifest); the list still shows it.
	Error string `json:"error,omitempty"`
	// Medians are each metric's median over the run's succeeded trials with a finite value,
	// for a run that has ended with a summary (store.Summary); none otherwise.
	Medians map[string]float64 `json:"medians,omitempty"`
}

// manifestFacts are the parts of a manifest the runs list shows. A manifest never changes once
// written, so they are cached: a runs page then costs one state read per run shown.
type manifestFacts struct {
	experiment, user, host, backend, commit string
	dirty                                   bool
	created                                 time.Time
	total                                   int
	params                                  []string
}

// reader reads the store for the pages, caching what cannot change.
type reader struct {
	runs store.Runs
	host string // this machine: a runner here that died is told from one elsewhere

	mu        sync.Mutex
	manifests map[string]*manifestFacts
	metrics   map[string]cachedMetrics
	recent    []*store.Manifest
	// stats are the comparisons of ended runs (Server.stats), by statsKey.
	stats map[string]*StatsView
	// ended are the views of ended runs, by run id, with the endStamp they were made for.
	ended map[string]*endedRun
	// medians are the runs list's metric columns of ended runs, by run id.
	medians map[string]cachedMedians
}

type cachedMedians struct {
	stamp  string
	values map[string]float64
}

// endedRun is what the pages of a run that has ended show; it holds while the run's endStamp
// stays the same.
type endedRun struct {
	stamp string
	view  *RunView
	table *results.Table // made from view on first use (runTable)
}

// maxEndedRuns bounds the ended runs kept: the view of a run of 10,000 trials is a few MiB.
const maxEndedRuns = 16

// endStamp names how a run ended (its state's status and finished time), or is "" while it
// has not: what the pages of an ended run show changes only with it, since a resume, a kill,
// anything that changes a trial of an ended run writes a new state (as the run's summary.json
// relies on too).
func (r *reader) endStamp(ctx context.Context, id string) string {
	st, err := r.runs.State(ctx, id)
	if err != nil {
		return ""
	}
	return stampOf(st)
}

func stampOf(st *store.RunState) string {
	if !st.Status.Final() || st.Finished == nil {
		return ""
	}
	return fmt.Sprintf("%s %d", st.Status, st.Finished.UnixNano())
}

// runMedians are the metric columns of an ended run's line in the runs list, from its summary:
// one object a run, read once per end.
func (r *reader) runMedians(ctx context.Context, id, stamp string) map[string]float64 {
	r.mu.Lock()
	c, ok := r.medians[id]
	r.mu.Unlock()
	if ok && c.stamp == stamp {
		return c.values
	}
	sum, err := r.runs.Summary(ctx, id)
	if err != nil {
		return nil
	}
	if sum == nil {
		sum = &store.Summary{} // ended by an older jikken: no columns, and no second look
	}
	vals := map[string][]float64{}
	for _, t := range sum.Trials {
		if t.Status != store.Succeeded {
			continue
		}
		for k, v := range t.Metrics {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	out := make(map[string]float64, len(vals))
	for k, v := range vals {
		out[k] = stats.Median(v)
	}
	r.mu.Lock()
	if len(r.medians) > 100000 {
		clear(r.medians)
	}
	r.medians[id] = cachedMedians{stamp: stamp, values: out}
	r.mu.Unlock()
	return out
}

func newReader(runs store.Runs, host string) *reader {
	return &reader{runs: runs, host: host, manifests: map[string]*manifestFacts{}, metrics: map[string]cachedMetrics{}, stats: map[string]*StatsView{}, ended: map[string]*endedRun{}, medians: map[string]cachedMedians{}}
}

func (r *reader) facts(ctx context.Context, id string) (*manifestFacts, error) {
	r.mu.Lock()
	f := r.manifests[id]
	r.mu.Unlock()
	if f != nil {
		return f, nil
	}
	m, err := r.runs.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	f = &manifestFacts{experiment: m.Experiment, user: m.User, host: m.Host, backend: m.Backend, created: m.Created}
	if c := m.Code; c != nil {
		f.commit, f.dirty = c.Head, c.Dirty
	}
	params := map[string]bool{}
	for _, t := range m.Trials {
		if !t.DeclaredService() {
			f.total++
		}
		for k := range t.Params {
			params[k] = true
		}
	}
	f.params = slices.Sorted(maps.Keys(params))
	r.mu.Lock()
	if len(r.manifests) > 100000 {
		clear(r.manifests)
	}
	r.manifests[id] = f
	r.mu.Unlock()
	return f, nil
}

// summary reads one run's line of the runs list.
func (r *reader) summary(ctx context.Context, id string) RunSummary {
	s := RunSummary{ID: id, Counts: map[store.Status]int{}}
	f, err := r.facts(ctx, id)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Experiment, s.User, s.Host, s.Backend, s.Commit, s.Dirty, s.Created, s.Total =
		f.experiment, f.user, f.host, f.backend, f.commit, f.dirty, f.created, f.total
	st, err := r.runs.State(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.Status = store.Pending
	case err != nil:
		s.Error = err.Error()
	default:
		s.Status, s.Finished = st.Status, st.Finished
		if !st.Started.IsZero() {
			started := st.Started
			s.Started = &started
		}
		for k, v := range st.Counts {
			s.Counts[k] = v
		}
		if stamp := stampOf(st); stamp != "" {
			s.Medians = r.runMedians(ctx, id, stamp)
		}
	}
	if s.Status == store.Running {
		// As 'jikken status' says: a run whose runner is gone will not move until resumed.
		holder, err := r.runs.LockHolder(ctx, id)
		switch {
		case err != nil:
		case holder == nil:
			s.Status, s.Note = store.Killed, "the runner is gone; resume with 'jikken resume "+id+"'"
		case holder.Host == r.host && !store.HolderAlive(holder, r.host):
			s.Status, s.Note = store.Killed, fmt.Sprintf("runner pid %d died; resume with 'jikken resume %s'", holder.PID, id)
		default:
			s.Note = fmt.Sprintf("runner pid %d on %s", holder.PID, holder.Host)
		}
	}
	if (!s.Status.Final() || s.Note != "") && s.Error == "" {
		// A run in progress: count its trials' records, which its runner keeps current.
		if recs, err := r.runs.Trials(ctx, id); err == nil {
			clear(s.Counts)
			n := 0
			for _, rec := range recs {
				if !rec.Service {
					s.Counts[rec.Status]++
					n++
				}
			}
			s.Counts[store.Pending] += max(0, s.Total-n)
		}
	}
	return s
}

// RunsPage is one page of the runs list, newest first.
type RunsPage struct {
	Runs []RunSummary `json:"runs"`
	// Metrics are the metric columns: the first few names, in order, of the runs' Medians.
	Metrics []string     `json:"metrics,omitempty"`
	Query   string       `json:"query,omitempty"`
	Status  store.Status `json:"status,omitempty"`
	// Where are the conditions on the metric columns the runs shown meet (report.ParseCond).
	Where []string `json:"where,omitempty"`
	Page  int      `json:"page"`
	Pages int      `json:"pages"`
	Total int      `json:"total"`
	Store string   `json:"store"`
}

const runsPerPage = 50

// runsPage lists the runs whose id holds q (ids hold the experiment's name), newest first, and
// reads only the page shown: a store of thousands of runs costs one listing and a page of reads.
// A status filter, or conditions on the metric columns (report.ParseCond, as in 'jikken results
// --where', each run's cell its median), read every matching run's summary first. A run without
// the metric (running, or no succeeded trial with a value) meets no comparison; a condition on a
// metric no matching run has is a bad request naming the metrics there are.
func (r *reader) runsPage(ctx context.Context, q string, status store.Status, conds []string, page int) (*RunsPage, error) {
	where := make([]report.Cond, len(conds))
	for i, c := range conds {
		var err error
		if where[i], err = report.ParseCond(c); err != nil {
			return nil, fmt.Errorf("%w: %w", err, errBadRequest)
		}
	}
	ids, err := r.runs.RunIDs(ctx)
	if err != nil {
		return nil, err
	}
	q = strings.TrimSpace(q)
	var match []string
	for i := len(ids) - 1; i >= 0; i-- {
		if q == "" || strings.Contains(strings.ToLower(ids[i]), strings.ToLower(q)) {
			match = append(match, ids[i])
		}
	}
	p := &RunsPage{Query: q, Status: status, Where: conds, Store: r.runs.Blob.Location(), Runs: []RunSummary{}}
	filtered := status != "" || len(where) > 0
	var read []RunSummary
	if filtered {
		all := make([]RunSummary, len(match))
		_ = inParallel(len(match), func(i int) error {
			all[i] = r.summary(ctx, match[i])
			return nil
		})
		if err := knownMetrics(all, conds, where); err != nil {
			return nil, err
		}
		for _, s := range all {
			if (status == "" || s.Status == status) && meetsAll(s, where) {
				read = append(read, s)
			}
		}
		p.Total = len(read)
	} else {
		p.Total = len(match)
	}
	p.Pages = max(1, (p.Total+runsPerPage-1)/runsPerPage)
	p.Page = min(max(page, 1), p.Pages)
	lo := (p.Page - 1) * runsPerPage
	hi := min(lo+runsPerPage, p.Total)
	if filtered {
		p.Runs = read[lo:hi]
		p.Metrics = metricColumns(p.Runs)
		return p, nil
	}
	p.Runs = make([]RunSummary, hi-lo)
	_ = inParallel(hi-lo, func(i int) error {
		p.Runs[i] = r.summary(ctx, match[lo+i])
		return nil
	})
	p.Metrics = metricColumns(p.Runs)
	return p, nil
}

// knownMetrics refuses a condition on a metric none of runs has: a misspelt name would
// otherwise empty the list without a word.
func knownMetrics(runs []RunSummary, conds []string, where []report.Cond) error {
	have := map[string]bool{}
	for _, r := range runs {
		for k := range r.Medians {
			have[k] = true
		}
	}
	for i, c := range where {
		if !have[c.Column] {
			names := slices.Sorted(maps.Keys(have))
			if len(names) == 0 {
				return fmt.Errorf("%q: no run listed has metrics yet (a run shows its medians once it has ended): %w", conds[i], errBadRequest)
			}
			return fmt.Errorf("%q: no run listed has a metric %q; the metrics are %s: %w", conds[i], c.Column, strings.Join(names, ", "), errBadRequest)
		}
	}
	return nil
}

// meetsAll reports whether run s meets every condition, its cells the medians as the list
// prints them.
func meetsAll(s RunSummary, where []report.Cond) bool {
	for _, c := range where {
		cell := ""
		if v, ok := s.Medians[c.Column]; ok {
			cell = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if !c.Holds(cell) {
			return false
		}
	}
	return true
}

// maxMetricColumns bounds the runs list's metric columns: a store of many experiments has many
// metrics, and the list must stay readable.
const maxMetricColumns = 6

// metricColumns names the runs list's metric columns: the metrics the most runs shown have,
// then by name.
func metricColumns(runs []RunSummary) []string {
	n := map[string]int{}
	for _, r := range runs {
		for k := range r.Medians {
			n[k]++
		}
	}
	names := slices.Collect(maps.Keys(n))
	slices.SortFunc(names, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	return names[:min(len(names), maxMetricColumns)]
}

// TrialView is a trial's row in a run page and the JSON the page polls.
type TrialView struct {
	Name     string            `json:"name"`
	Group    string            `json:"group,omitempty"`
	Status   store.Status      `json:"status"`
	Params   map[string]string `json:"params"`
	Seed     *int64            `json:"seed,omitempty"`
	Attempts int               `json:"attempts"`
	ExitCode *int              `json:"exit_code,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	Started  *time.Time        `json:"started,omitempty"`
	Finished *time.Time        `json:"finished,omitempty"`
	Duration string            `json:"duration,omitempty"`
	// Metrics are the final values; NaN and infinities are the strings "NaN", "Infinity" and
	// "-Infinity", as in metrics.jsonl (store.Metrics): JSON numbers cannot hold them.
	Metrics store.Metrics `json:"metrics"`
}

// RunView is a run's page: its summary, its params and metrics, and a row per trial in plan
// order (services left out, as in the results table).
type RunView struct {
	RunSummary
	File    string      `json:"file,omitempty"`
	Tool    string      `json:"tool,omitempty"`
	Params  []string    `json:"params"`
	Metrics []string    `json:"metrics"`
	Trials  []TrialView `json:"trial_rows"`
	// Live is true while the run is not over: the page keeps polling.
	Live bool `json:"live"`
	// Search is the history of the run's search, when it has one.
	Search *SearchPlot `json:"search,omitempty"`
	// Pareto is the trials of a search of several objectives on its first two, and its front.
	Pareto *ParetoPlot `json:"pareto,omitempty"`
}

// run reads a run's page: from memory for a run that ended as it had when last read, since
// its page of 10,000 trials reads 10,000 records and their metrics.
func (r *reader) run(ctx context.Context, id string) (*RunView, error) {
	stamp := r.endStamp(ctx, id)
	if stamp != "" {
		r.mu.Lock()
		c := r.ended[id]
		r.mu.Unlock()
		if c != nil && c.stamp == stamp {
			return c.view, nil
		}
	}
	v, err := r.readRun(ctx, id)
	if err != nil || stamp == "" || v.Live {
		return v, err
	}
	r.mu.Lock()
	if len(r.ended) >= maxEndedRuns {
		clear(r.ended)
	}
	r.ended[id] = &endedRun{stamp: stamp, view: v}
	r.mu.Unlock()
	return v, nil
}

func (r *reader) readRun(ctx context.Context, id string) (*RunView, error) {
	m, err := r.manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	recs, err := r.runs.Trials(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	v := &RunView{RunSummary: r.summary(ctx, id), File: m.File, Tool: m.Tool, Trials: []TrialView{}}
	if s, err := experiment.SearchOf(m.File, m.Evaluated); err == nil && s != nil {
		v.Search, v.Pareto = searchPlot(s, recs), paretoPlot(s, recs)
	}
	for _, t := range store.Planned(m, recs) {
		if t.DeclaredService() {
			continue
		}
		tv := TrialView{Name: t.Name, Group: t.Group, Status: store.Pending, Seed: t.Seed, Params: map[string]string{}}
		for k, p := range t.Params {
			tv.Params[k] = cell(p)
		}
		if rec := recs[t.Name]; rec != nil {
			fillRecord(&tv, rec)
		}
		v.Trials = append(v.Trials, tv)
	}
	err = inParallel(len(v.Trials), func(i int) error {
		var err error
		v.Trials[i].Metrics, err = r.finalMetrics(ctx, id, recs[v.Trials[i].Name], v.Trials[i].Name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", id, err)
	}
	params, metrics := map[string]bool{}, map[string]bool{}
	for _, tv := range v.Trials {
		for k := range tv.Params {
			params[k] = true
		}
		for k := range tv.Metrics {
			metrics[k] = true
		}
	}
	v.Params, v.Metrics = slices.Sorted(maps.Keys(params)), slices.Sorted(maps.Keys(metrics))
	// The trials' records are newer than the run's state, which the runner rewrites less often.
	v.Counts = map[store.Status]int{}
	for _, t := range v.Trials {
		v.Counts[t.Status]++
	}
	v.Live = !v.Status.Final() || v.Status == ""
	return v, nil
}

// finalMetrics reads a trial's final metrics, from the cache when its record says it ended as
// it had when they were read: a live run page polls a run of thousands of trials every few
// seconds, and only the trials still running change.
func (r *reader) finalMetrics(ctx context.Context, run string, rec *store.TrialRecord, trial string) (map[string]float64, error) {
	if rec == nil || !rec.Status.Final() || rec.Finished == nil {
		return results.FinalMetrics(ctx, r.runs.Blob, run, trial)
	}
	key := run + "/" + trial
	stamp := fmt.Sprintf("%s %d %s", rec.Status, len(rec.Attempts), rec.Finished.UTC().Format(time.RFC3339Nano))
	r.mu.Lock()
	c, ok := r.metrics[key]
	r.mu.Unlock()
	if ok && c.stamp == stamp {
		return c.values, nil
	}
	values, err := results.FinalMetrics(ctx, r.runs.Blob, run, trial)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.metrics) > 1000000 {
		clear(r.metrics)
	}
	r.metrics[key] = cachedMetrics{stamp: stamp, values: values}
	r.mu.Unlock()
	return values, nil
}

type cachedMetrics struct {
	stamp  string
	values map[string]float64
}

// manifest reads a run's manifest, keeping the last few: a large plan stored compact is
// expanded again on every read, and a live page asks for it every few seconds.
func (r *reader) manifest(ctx context.Context, id string) (*store.Manifest, error) {
	r.mu.Lock()
	for _, c := range r.recent {
		if c.RunID == id {
			r.mu.Unlock()
			return c, nil
		}
	}
	r.mu.Unlock()
	m, err := r.runs.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.recent = append(r.recent, m)
	if len(r.recent) > 8 {
		r.recent = r.recent[1:]
	}
	r.mu.Unlock()
	return m, nil
}

// inParallel calls fn(0) .. fn(n-1), 16 at a time (enough to hide S3 round trips), and returns
// the first error.
func inParallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

func fillRecord(tv *TrialView, rec *store.TrialRecord) {
	tv.Status, tv.Attempts, tv.ExitCode, tv.Reason = rec.Status, len(rec.Attempts), rec.ExitCode, rec.Reason
	tv.Started, tv.Finished = rec.Started, rec.Finished
	if rec.Started != nil {
		end := time.Now()
		if rec.Finished != nil {
			end = *rec.Finished
		}
		tv.Duration = fmtDuration(end.Sub(*rec.Started))
	}
}

// fmtDuration writes a duration as people read it in a table: 850ms, 12.3s, 4m05s, 2h10m.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return ""
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// TrialPage is a trial's page: its record, every attempt with its logs, and its stored files.
type TrialPage struct {
	Run    string             `json:"run"`
	Record *store.TrialRecord `json:"record,omitempty"`
	View   TrialView          `json:"trial"`
	// Params are the trial's params as the plan gives them, sorted by name.
	Params   [][2]string   `json:"-"`
	Metrics  [][2]string   `json:"-"` // final metrics, sorted by name
	Attempts []AttemptView `json:"attempts"`
	Files    []FileView    `json:"files"`
	Curves   []Curve       `json:"-"`
	// RunLive is whether the run may still start or change the trial.
	RunLive bool `json:"run_live"`
}

// AttemptView is one attempt with its logs (the end of them when long).
type AttemptView struct {
	store.Attempt
	Latest   bool      `json:"latest"`
	Running  bool      `json:"running"`
	Duration string    `json:"duration,omitempty"`
	Logs     []LogView `json:"logs"`
}

// LogView is the tail of one log of an attempt.
type LogView struct {
	Stream string `json:"stream"` // stdout or stderr
	Text   string `json:"text"`
	// Size is the log's length in bytes; Text holds its last logTail bytes.
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
	Missing   bool   `json:"missing"`
	URL       string `json:"url"`
}

// FileView is a stored file of a trial.
type FileView struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	URL  string `json:"-"`
	// Preview says how the trial page shows an artifact: "image" (PNG, JPEG, GIF, WebP, SVG,
	// in an <img>), "html" (in a sandboxed <iframe>), "text" (Text, in a <pre>), or "" (a link).
	Preview string `json:"-"`
	Text    string `json:"-"`
}

// Previews are for the files a trial stores under artifacts/, the first maxPreviews of them;
// a text file is shown when it is at most previewText bytes.
const (
	maxPreviews = 12
	previewText = 64 << 10
)

// preview fills f's Preview (and Text) by its extension.
func (r *reader) preview(ctx context.Context, key string, f *FileView) {
	switch strings.ToLower(path.Ext(f.Name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg":
		f.Preview = "image"
	case ".html", ".htm":
		f.Preview = "html"
	case ".txt", ".log", ".json", ".jsonl", ".csv", ".tsv", ".md", ".yaml", ".yml":
		if f.Size > previewText {
			return
		}
		b, err := store.ReadAll(ctx, r.runs.Blob, key)
		if err != nil || !utf8.Valid(b) {
			return
		}
		f.Preview, f.Text = "text", string(b)
	}
}

// logTail is how much of each log a trial page shows; the rest is a download away.
const logTail = 256 << 10

// plannedTrial reports whether run plans a trial of that name, with its params and seed: a page
// is only served for trials the manifest names, so no name from a URL reaches the store
// unchecked.
func (r *reader) plannedTrial(ctx context.Context, run, trial string) (bool, map[string]any, *int64, error) {
	m, err := r.manifest(ctx, run)
	if err != nil {
		return false, nil, nil, err
	}
	for _, t := range m.Trials {
		if t.Name == trial {
			return true, t.Params, t.Seed, nil
		}
	}
	// A trial a search added is planned by its record, whose name the store gave back.
	recs, err := r.runs.Trials(ctx, run)
	if err != nil {
		return false, nil, nil, err
	}
	if rec := recs[trial]; rec != nil {
		return true, rec.Params, rec.Seed, nil
	}
	return false, nil, nil, nil
}

func (r *reader) trial(ctx context.Context, run, trial string, live liveLogs) (*TrialPage, error) {
	ok, params, seed, err := r.plannedTrial(ctx, run, trial)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("run %s has no trial %q: %w", run, trial, store.ErrNotFound)
	}
	p := &TrialPage{Run: run, View: TrialView{Name: trial, Status: store.Pending, Params: map[string]string{}, Seed: seed}}
	if st := r.summary(ctx, run).Status; st == "" || !st.Final() {
		p.RunLive = true
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		p.Params = append(p.Params, [2]string{k, cell(params[k])})
		p.View.Params[k] = cell(params[k])
	}
	rec, err := r.runs.Trial(ctx, run, trial)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		p.Record = rec
		fillRecord(&p.View, rec)
	}
	base := "/runs/" + urlSeg(run) + "/trials/" + urlSeg(trial)
	if rec != nil {
		for i, a := range rec.Attempts {
			av := AttemptView{Attempt: a, Latest: i == len(rec.Attempts)-1}
			av.Running = av.Latest && rec.Live != nil && rec.Live.Attempt == a.N
			if !a.Finished.IsZero() {
				av.Duration = fmtDuration(a.Finished.Sub(a.Started))
			} else if av.Running {
				av.Duration = fmtDuration(time.Since(a.Started))
			}
			for _, stream := range []string{"stdout", "stderr"} {
				lv := r.log(ctx, run, trial, a.N, av.Latest, stream, rec, live)
				lv.URL = base + "/log/" + stream + "?attempt=" + strconv.Itoa(a.N)
				av.Logs = append(av.Logs, lv)
			}
			p.Attempts = append(p.Attempts, av)
		}
	}
	prefix := store.TrialKey(run, trial, "")
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	err = r.runs.Blob.List(ctx, prefix, func(in store.Info) error {
		name := strings.TrimPrefix(in.Key, prefix)
		p.Files = append(p.Files, FileView{Name: name, Size: in.Size, URL: base + "/files/" + urlPath(name)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the files of %s/%s: %w", run, trial, err)
	}
	shown := 0
	for i := range p.Files {
		if f := &p.Files[i]; strings.HasPrefix(f.Name, "artifacts/") && shown < maxPreviews {
			r.preview(ctx, prefix+f.Name, f)
			if f.Preview != "" {
				shown++
			}
		}
	}
	pts, err := results.TrialPoints(ctx, r.runs.Blob, run, trial)
	if err == nil {
		p.Curves = curves(pts)
	}
	if p.View.Metrics, err = r.finalMetrics(ctx, run, rec, trial); err != nil {
		return nil, fmt.Errorf("trial %s of %s: %w", trial, run, err)
	}
	for _, k := range slices.Sorted(maps.Keys(p.View.Metrics)) {
		p.Metrics = append(p.Metrics, [2]string{k, fmtMetric(p.View.Metrics[k])})
	}
	return p, nil
}

// liveLogs opens the growing log of a running attempt, when it can be read from here.
type liveLogs func(rec *store.TrialRecord, stream string) (io.ReadSeekCloser, error)

// logKey is where an attempt's log is stored: the latest attempt's at the trial's top, the
// earlier ones' under attempts/N/.
func logKey(run, trial string, n int, latest bool, stream string) string {
	if latest {
		return store.TrialKey(run, trial, stream+".log")
	}
	return store.TrialKey(run, trial, path.Join("attempts", strconv.Itoa(n), stream+".log"))
}

func (r *reader) log(ctx context.Context, run, trial string, n int, latest bool, stream string, rec *store.TrialRecord, live liveLogs) LogView {
	lv := LogView{Stream: stream}
	if latest && live != nil && rec.Live != nil && rec.Live.Attempt == n {
		if f, err := live(rec, stream); err == nil {
			defer f.Close()
			size, _ := f.Seek(0, io.SeekEnd)
			lv.Size = size
			start := max(0, size-logTail)
			lv.Truncated = start > 0
			if _, err := f.Seek(start, io.SeekStart); err == nil {
				b, _ := io.ReadAll(io.LimitReader(f, logTail))
				lv.Text = tailText(b, lv.Truncated)
			}
			return lv
		}
	}
	key := logKey(run, trial, n, latest, stream)
	in, err := r.runs.Blob.Stat(ctx, key)
	if err != nil {
		lv.Missing = true
		return lv
	}
	lv.Size = in.Size
	b, err := store.ReadAll(ctx, r.runs.Blob, key)
	if err != nil {
		lv.Missing = true
		return lv
	}
	if len(b) > logTail {
		b, lv.Truncated = b[len(b)-logTail:], true
	}
	lv.Text = tailText(b, lv.Truncated)
	return lv
}

// cell writes a param value as the results table does.
func cell(v any) string {
	t := results.ToTable([]results.Row{{Params: map[string]any{"v": v}}})
	if i := t.Col("v"); i >= 0 && len(t.Rows) == 1 {
		return t.Rows[0][i]
	}
	return fmt.Sprint(v)
}

// tailText is the end of a log as text: a cut made inside a UTF-8 character drops its remains.
func tailText(b []byte, cut bool) string {
	for i := 0; cut && i < 3 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return string(b)
}

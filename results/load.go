package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// Row is one trial's line of the results table.
type Row struct {
	Trial  string
	Group  string
	Status store.Status
	// Reason is why a trial that did not succeed ended as it did (an eliminated one: the test).
	Reason string
	Params map[string]any
	Seed   *int64
	// Metrics are final values: from result.json, else the last value in metrics.jsonl.
	Metrics map[string]float64
}

// Load reads the results of a run: one row per trial (declared services left out: a trial
// others depend on is a trial with results of its own), in plan order. A run that has ended is
// read from its summary (store.Summary: one object for every trial's status and final
// metrics); otherwise, or where the summary has no line for a trial, from the trials' files.
func Load(ctx context.Context, runs store.Runs, run string) ([]Row, error) {
	m, err := runs.Manifest(ctx, run)
	if err != nil {
		return nil, err
	}
	sum, err := runs.Summary(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", run, err)
	}
	if sum != nil {
		return fromSummary(ctx, runs, m, sum)
	}
	recs, err := runs.Trials(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", run, err)
	}
	var rows []Row
	for _, t := range store.Planned(m, recs) {
		if t.DeclaredService() {
			continue
		}
		row := Row{Trial: t.Name, Group: t.Group, Status: store.Pending, Params: t.Params, Seed: t.Seed}
		if rec := recs[t.Name]; rec != nil {
			row.Status, row.Reason = rec.Status, reasonOf(rec)
		}
		row.Metrics, err = finalMetrics(ctx, runs.Blob, run, t.Name)
		if err != nil {
			return nil, fmt.Errorf("results of %s: trial %s: %w", run, t.Name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// fromSummary is Load for a run whose fresh summary gives each started trial's status and
// final metrics; a trial it has no line for never started, and is read as Load reads it.
func fromSummary(ctx context.Context, runs store.Runs, m *store.Manifest, sum *store.Summary) ([]Row, error) {
	byName := make(map[string]*store.SummaryTrial, len(sum.Trials))
	for i := range sum.Trials {
		byName[sum.Trials[i].Name] = &sum.Trials[i]
	}
	// The trials a plan added (a search, sequential seeds, a race) are in the summary, not in
	// the manifest.
	recs := make(map[string]*store.TrialRecord, len(sum.Trials))
	for _, e := range sum.Trials {
		recs[e.Name] = &store.TrialRecord{Name: e.Name, Index: e.Index, Group: e.Group, Params: e.Params, Seed: e.Seed}
	}
	var rows []Row
	for _, t := range store.Planned(m, recs) {
		if t.DeclaredService() {
			continue
		}
		row := Row{Trial: t.Name, Group: t.Group, Status: store.Pending, Params: t.Params, Seed: t.Seed}
		if e := byName[t.Name]; e != nil {
			row.Status, row.Reason, row.Metrics = e.Status, e.Reason, e.Metrics
			if row.Metrics == nil {
				row.Metrics = map[string]float64{}
			}
		} else {
			var err error
			if row.Metrics, err = finalMetrics(ctx, runs.Blob, m.RunID, t.Name); err != nil {
				return nil, fmt.Errorf("results of %s: trial %s: %w", m.RunID, t.Name, err)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func finalMetrics(ctx context.Context, b store.Blob, run, trial string) (map[string]float64, error) {
	out := map[string]float64{}
	data, err := store.ReadAll(ctx, b, store.TrialKey(run, trial, "metrics.jsonl"))
	switch {
	case err == nil:
		ms, err := track.ReadMetrics(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out[m.Name] = m.Value
		}
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	data, err = store.ReadAll(ctx, b, store.TrialKey(run, trial, "result.json"))
	switch {
	case err == nil:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("result.json: want an object of name: number: %w", err)
		}
		flatten("", obj, out)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return out, nil
}

// flatten keeps numbers (and encoded NaN/Infinity) of a result object, nested keys joined by dots.
func flatten(prefix string, obj map[string]json.RawMessage, out map[string]float64) {
	for k, raw := range obj {
		name := prefix + k
		var nested map[string]json.RawMessage
		if json.Unmarshal(raw, &nested) == nil {
			flatten(name+".", nested, out)
			continue
		}
		if f, err := record.DecodeFloat(raw); err == nil {
			out[name] = f
		}
	}
}

// layout is the column plan shared by the table and the JSON records: trial, status, each param,
// seed, each metric (prefixed "metric." when its name is taken by one of the others).
type layout struct {
	params  []string
	hasSeed bool
	metrics []string          // metric names, sorted
	metCol  map[string]string // metric name -> column name
}

func planColumns(rows []Row) layout {
	paramSet, metricSet := map[string]bool{}, map[string]bool{}
	var l layout
	for _, r := range rows {
		for k := range r.Params {
			paramSet[k] = true
		}
		for k := range r.Metrics {
			metricSet[k] = true
		}
		l.hasSeed = l.hasSeed || r.Seed != nil
	}
	l.params, l.metrics = sortedSet(paramSet), sortedSet(metricSet)
	// A param named seed is the seed column.
	l.hasSeed = l.hasSeed && !paramSet["seed"]
	l.metCol = map[string]string{}
	for _, m := range l.metrics {
		l.metCol[m] = m
		if m == "trial" || m == "status" || paramSet[m] || (l.hasSeed && m == "seed") {
			l.metCol[m] = "metric." + m
		}
	}
	return l
}

// head returns the columns before the metrics.
func (l layout) head() []string {
	cols := append([]string{"trial", "status"}, l.params...)
	if l.hasSeed {
		cols = append(cols, "seed")
	}
	return cols
}

// headCells returns a row's cells before the metrics.
func (l layout) headCells(r Row) []string {
	line := []string{r.Trial, string(r.Status)}
	for _, p := range l.params {
		line = append(line, cell(r.Params[p]))
	}
	if l.hasSeed {
		s := ""
		if r.Seed != nil {
			s = strconv.FormatInt(*r.Seed, 10)
		}
		line = append(line, s)
	}
	return line
}

// headRecord returns a row's fields before the metrics as JSON values: params keep their types
// (numbers stay numbers), a missing value is left out.
func (l layout) headRecord(r Row) map[string]any {
	rec := map[string]any{"trial": r.Trial, "status": string(r.Status)}
	for _, p := range l.params {
		if v, ok := r.Params[p]; ok && v != nil {
			rec[p] = v
		}
	}
	if l.hasSeed && r.Seed != nil {
		rec["seed"] = *r.Seed
	}
	return rec
}

// ToTable lays rows out as columns trial, status, each param, seed, each metric.
func ToTable(rows []Row) *Table {
	l := planColumns(rows)
	cols := l.head()
	for _, m := range l.metrics {
		cols = append(cols, l.metCol[m])
	}
	t := &Table{Columns: cols}
	for _, r := range rows {
		line := l.headCells(r)
		for _, m := range l.metrics {
			v, ok := r.Metrics[m]
			s := ""
			if ok {
				s = strconv.FormatFloat(v, 'g', -1, 64)
			}
			line = append(line, s)
		}
		t.Rows = append(t.Rows, line)
	}
	return t
}

// Records lays rows out as JSON objects with the columns of ToTable as keys and typed values:
// params as the experiment gave them, seed an integer, metrics numbers (NaN and infinities as the
// strings "NaN", "Infinity", "-Infinity", as in metrics.jsonl). Missing values are left out.
func Records(rows []Row) []map[string]any {
	l := planColumns(rows)
	out := make([]map[string]any, 0, len(rows))
	for _, r := range rows {
		rec := l.headRecord(r)
		for m, v := range r.Metrics {
			rec[l.metCol[m]] = record.EncodeFloat(v)
		}
		out = append(out, rec)
	}
	return out
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// LoadTable is Load followed by ToTable.
func LoadTable(ctx context.Context, runs store.Runs, run string) (*Table, error) {
	rows, err := Load(ctx, runs, run)
	if err != nil {
		return nil, err
	}
	return ToTable(rows), nil
}

// Columns is the column plan of ToTable, for writers of other formats: param names (sorted),
// whether there is a seed column, metric names (sorted) and each metric's column name.
type Columns struct {
	Params    []string
	Seed      bool
	Metrics   []string
	MetricCol map[string]string
}

// PlanColumns returns the columns ToTable gives rows.
func PlanColumns(rows []Row) Columns {
	l := planColumns(rows)
	return Columns{Params: l.params, Seed: l.hasSeed, Metrics: l.metrics, MetricCol: l.metCol}
}

// Cell is the text a param value has in the table.
func Cell(v any) string { return cell(v) }

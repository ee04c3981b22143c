package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// Row is one trial's line of the results table.
type Row struct {
	Trial  string
	Group  string
	Status store.Status
	Params map[string]any
	Seed   *int64
	// Metrics are final values: from result.json, else the last value in metrics.jsonl.
	Metrics map[string]float64
}

// Load reads the results of a run: one row per trial (services left out), in plan order.
func Load(ctx context.Context, runs store.Runs, run string) ([]Row, error) {
	m, err := runs.Manifest(ctx, run)
	if err != nil {
		return nil, err
	}
	recs, err := runs.Trials(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", run, err)
	}
	var rows []Row
	for _, t := range m.Trials {
		if t.Service {
			continue
		}
		row := Row{Trial: t.Name, Group: t.Group, Status: store.Pending, Params: t.Params, Seed: t.Seed}
		if rec := recs[t.Name]; rec != nil {
			row.Status = rec.Status
		}
		row.Metrics, err = finalMetrics(ctx, runs.Blob, run, t.Name)
		if err != nil {
			return nil, fmt.Errorf("results of %s: trial %s: %w", run, t.Name, err)
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
		if f, err := track.DecodeFloat(raw); err == nil {
			out[name] = f
		}
	}
}

// ToTable lays rows out as columns trial, status, each param, seed, each metric.
func ToTable(rows []Row) *Table {
	paramSet, metricSet := map[string]bool{}, map[string]bool{}
	hasSeed := false
	for _, r := range rows {
		for k := range r.Params {
			paramSet[k] = true
		}
		for k := range r.Metrics {
			metricSet[k] = true
		}
		hasSeed = hasSeed || r.Seed != nil
	}
	params, metrics := sortedSet(paramSet), sortedSet(metricSet)
	cols := append([]string{"trial", "status"}, params...)
	if hasSeed && !paramSet["seed"] {
		cols = append(cols, "seed")
	}
	for _, m := range metrics {
		if m == "trial" || m == "status" || paramSet[m] || (hasSeed && m == "seed") {
			cols = append(cols, "metric."+m)
		} else {
			cols = append(cols, m)
		}
	}
	t := &Table{Columns: cols}
	for _, r := range rows {
		line := []string{r.Trial, string(r.Status)}
		for _, p := range params {
			line = append(line, cell(r.Params[p]))
		}
		if hasSeed && !paramSet["seed"] {
			s := ""
			if r.Seed != nil {
				s = strconv.FormatInt(*r.Seed, 10)
			}
			line = append(line, s)
		}
		for _, m := range metrics {
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

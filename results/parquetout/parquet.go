package parquetout

import (
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"

	"github.com/jikken-dev/jikken/results"
)

// Write writes rows of run as a Parquet file, one row per trial, with typed columns in a
// fixed order: run, trial, group, status, each param (sorted by name), seed, each final metric
// (sorted by name). A param whose values all have one type keeps it (float64, int64, string or
// bool; a param whose every value is a whole number is int64; whole numbers mixed with fractions
// are float64 when every one is exact as a float64); any other
// mix, and lists or objects, are written as the cell text of the CSV table. A value a trial lacks
// is null: a group for an ungrouped trial, a param, the seed, a metric it did not report (a metric
// it reported as NaN stays NaN). Column
// names follow the results table; a param named like a fixed column is written as param.NAME.
func Write(w io.Writer, run string, rows []results.Row) error {
	cols, err := parquetColumns(rows)
	if err != nil {
		return err
	}
	names := make([]string, len(cols))
	group := parquet.Group{}
	for i, c := range cols {
		names[i] = c.name
		node := parquet.Leaf(c.typ)
		if c.typ == parquet.ByteArrayType {
			node = parquet.String()
		}
		if c.optional {
			node = parquet.Optional(node)
		}
		group[c.name] = node
	}
	schema := parquet.NewSchema("results", orderedGroup{Group: group, order: names})
	pw := parquet.NewWriter(w, schema, parquet.Compression(&parquet.Snappy))
	out := make([]parquet.Row, len(rows))
	for i, r := range rows {
		row := make(parquet.Row, len(cols))
		for j, c := range cols {
			v, ok := c.value(run, r)
			switch {
			case !ok:
				row[j] = parquet.NullValue().Level(0, 0, j)
			case c.optional:
				row[j] = v.Level(0, 1, j)
			default:
				row[j] = v.Level(0, 0, j)
			}
		}
		out[i] = row
	}
	if _, err := pw.WriteRows(out); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	return nil
}

// pqColumn is one column of the Parquet file: its name, type and how to read its value off a row.
type pqColumn struct {
	name     string
	typ      parquet.Type
	optional bool
	value    func(run string, r results.Row) (parquet.Value, bool)
}

// parquetColumns lays out the columns of Write for rows.
func parquetColumns(rows []results.Row) ([]pqColumn, error) {
	l := results.PlanColumns(rows)
	str := func(s string) parquet.Value { return parquet.ByteArrayValue([]byte(s)) }
	cols := []pqColumn{
		{name: "run", typ: parquet.ByteArrayType, value: func(run string, _ results.Row) (parquet.Value, bool) { return str(run), true }},
		{name: "trial", typ: parquet.ByteArrayType, value: func(_ string, r results.Row) (parquet.Value, bool) { return str(r.Trial), true }},
		{name: "group", typ: parquet.ByteArrayType, optional: true, value: func(_ string, r results.Row) (parquet.Value, bool) { return str(r.Group), r.Group != "" }},
		{name: "status", typ: parquet.ByteArrayType, value: func(_ string, r results.Row) (parquet.Value, bool) { return str(string(r.Status)), true }},
	}
	fixed := map[string]bool{"run": true, "trial": true, "group": true, "status": true}
	for _, p := range l.Params {
		name := p
		if fixed[p] {
			name = "param." + p
		}
		cols = append(cols, paramColumn(name, p, rows))
	}
	if l.Seed {
		cols = append(cols, pqColumn{name: "seed", typ: parquet.Int64Type, optional: true, value: func(_ string, r results.Row) (parquet.Value, bool) {
			if r.Seed == nil {
				return parquet.Value{}, false
			}
			return parquet.Int64Value(*r.Seed), true
		}})
	}
	for _, m := range l.Metrics {
		name := l.MetricCol[m]
		if fixed[name] {
			name = "metric." + m
		}
		cols = append(cols, pqColumn{name: name, typ: parquet.DoubleType, optional: true, value: func(_ string, r results.Row) (parquet.Value, bool) {
			v, ok := r.Metrics[m]
			return parquet.DoubleValue(v), ok
		}})
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.name] {
			return nil, fmt.Errorf("write parquet: two columns named %q (a param or metric named like another column); rename one in the experiment", c.name)
		}
		seen[c.name] = true
	}
	return cols, nil
}

// maxExactInt is the largest magnitude below which every integer is exact as a float64.
const maxExactInt = 1 << 53

// paramColumn types the column of param p from the values rows give it.
func paramColumn(name, p string, rows []results.Row) pqColumn {
	var floats, ints, strs, bools, other, inexact bool
	for _, r := range rows {
		switch x := r.Params[p].(type) {
		case nil:
		case float64:
			// JSON, which the store keeps params in, does not tell 3 from 3.0: a whole number
			// is taken as an integer, so a param of counts reads back as integers.
			if x == math.Trunc(x) && math.Abs(x) <= maxExactInt {
				ints = true
			} else {
				floats = true
			}
		case int64:
			ints = true
			inexact = inexact || x > maxExactInt || x < -maxExactInt
		case string:
			strs = true
		case bool:
			bools = true
		default:
			other = true
		}
	}
	c := pqColumn{name: name, optional: true}
	switch {
	case other || strs || bools && (floats || ints) || ints && floats && inexact:
		c.typ = parquet.ByteArrayType
		c.value = func(_ string, r results.Row) (parquet.Value, bool) {
			v := r.Params[p]
			return parquet.ByteArrayValue([]byte(results.Cell(v))), v != nil
		}
	case floats:
		c.typ = parquet.DoubleType
		c.value = func(_ string, r results.Row) (parquet.Value, bool) {
			switch x := r.Params[p].(type) {
			case float64:
				return parquet.DoubleValue(x), true
			case int64:
				return parquet.DoubleValue(float64(x)), true
			}
			return parquet.Value{}, false
		}
	case ints:
		c.typ = parquet.Int64Type
		c.value = func(_ string, r results.Row) (parquet.Value, bool) {
			switch x := r.Params[p].(type) {
			case float64:
				return parquet.Int64Value(int64(x)), true
			case int64:
				return parquet.Int64Value(x), true
			}
			return parquet.Value{}, false
		}
	case bools:
		c.typ = parquet.BooleanType
		c.value = func(_ string, r results.Row) (parquet.Value, bool) {
			x, ok := r.Params[p].(bool)
			return parquet.BooleanValue(x), ok
		}
	default: // a param no trial gave a value: strings, all null
		c.typ = parquet.ByteArrayType
		c.value = func(string, results.Row) (parquet.Value, bool) { return parquet.Value{}, false }
	}
	return c
}

// orderedGroup is a Parquet group whose fields come in the order given (parquet.Group sorts them
// by name), so the file's columns read in the order of the results table.
type orderedGroup struct {
	parquet.Group
	order []string
}

func (g orderedGroup) Fields() []parquet.Field {
	byName := map[string]parquet.Field{}
	for _, f := range g.Group.Fields() {
		byName[f.Name()] = f
	}
	out := make([]parquet.Field, len(g.order))
	for i, n := range g.order {
		out[i] = byName[n]
	}
	return out
}

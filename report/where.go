package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/results"
)

// Cond is one condition of a --where filter: COLUMN OP VALUE, OP one of = (or ==), !=, <, <=,
// >, >=. = and != compare the cell's text, or its number when the cell and the value are both
// numbers (lr=0.10 holds for a cell 0.1); <, <=, > and >= compare numbers only, so an empty,
// NaN or text cell never meets them. The same conditions filter 'jikken results', compare,
// plot, report and the browser's lists.
type Cond struct {
	Column, Op, Value string
	num               float64 // Value as a number, NaN when it is not one
}

// ParseCond reads a condition such as "fn=sphere", "lr<0.01" or "loss >= 0.5".
func ParseCond(s string) (Cond, error) {
	i := strings.IndexAny(s, "=!<>")
	if i <= 0 || strings.TrimSpace(s[:i]) == "" {
		return Cond{}, fmt.Errorf("--where %q: write COLUMN=VALUE or COLUMN<VALUE (also !=, <=, >, >=), e.g. fn=sphere or lr<0.01", s)
	}
	op := s[i : i+1]
	if rest := s[i:]; len(rest) > 1 && rest[1] == '=' {
		op = rest[:2]
	}
	switch op {
	case "!":
		return Cond{}, fmt.Errorf("--where %q: write != for 'is not'", s)
	case "==":
		op = "="
	}
	c := Cond{Column: strings.TrimSpace(s[:i]), Op: op, Value: strings.TrimSpace(s[i+len(op):]), num: math.NaN()}
	if op == "=" && strings.HasPrefix(s[i:], "==") {
		c.Value = strings.TrimSpace(s[i+2:])
	}
	if v, err := strconv.ParseFloat(c.Value, 64); err == nil || isRange(err) {
		c.num = v
	}
	if strings.ContainsAny(op, "<>") && math.IsNaN(c.num) {
		return Cond{}, fmt.Errorf("--where %q: %s compares numbers; %q is not one", s, op, c.Value)
	}
	return c, nil
}

// Holds reports whether a cell meets the condition.
func (c Cond) Holds(cell string) bool {
	v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	isNum := (err == nil || isRange(err)) && !math.IsNaN(v) && !math.IsNaN(c.num)
	switch c.Op {
	case "=":
		return cell == c.Value || isNum && v == c.num
	case "!=":
		return !(cell == c.Value || isNum && v == c.num)
	case "<":
		return isNum && v < c.num
	case "<=":
		return isNum && v <= c.num
	case ">":
		return isNum && v > c.num
	case ">=":
		return isNum && v >= c.num
	}
	return false
}

// Where returns the rows of t that satisfy every condition (ParseCond). The table itself is
// left as is.
func Where(t *results.Table, conds []string) (*results.Table, error) {
	type colCond struct {
		col int
		c   Cond
	}
	var cs []colCond
	for _, s := range conds {
		c, err := ParseCond(s)
		if err != nil {
			return nil, err
		}
		i, err := column(t, "--where", c.Column)
		if err != nil {
			return nil, err
		}
		cs = append(cs, colCond{i, c})
	}
	out := &results.Table{Columns: t.Columns}
rows:
	for _, r := range t.Rows {
		for _, c := range cs {
			if c.col >= len(r) || !c.c.Holds(r[c.col]) {
				continue rows
			}
		}
		out.Rows = append(out.Rows, r)
	}
	if len(cs) > 0 && len(out.Rows) == 0 {
		return nil, fmt.Errorf("no row has %s; check the values with 'jikken results'", strings.Join(conds, " and "))
	}
	return out, nil
}

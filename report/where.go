package report

import (
	"fmt"
	"strings"

	"github.com/jikken-dev/jikken/results"
)

// Where returns the rows of t that satisfy every condition, each written COLUMN=VALUE (the cell
// equals VALUE exactly). The table itself is left as is.
func Where(t *results.Table, conds []string) (*results.Table, error) {
	type cond struct {
		col int
		val string
	}
	var cs []cond
	for _, c := range conds {
		name, val, ok := strings.Cut(c, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--where %q: write COLUMN=VALUE, e.g. fn=sphere", c)
		}
		i, err := column(t, "--where", name)
		if err != nil {
			return nil, err
		}
		cs = append(cs, cond{i, val})
	}
	out := &results.Table{Columns: t.Columns}
rows:
	for _, r := range t.Rows {
		for _, c := range cs {
			if c.col >= len(r) || r[c.col] != c.val {
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

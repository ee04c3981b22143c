package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/results"
)

// Arrange returns t with the groups of column by in the order given (the groups not named follow
// in their order of first appearance, which is the order Compare and the figures keep) and
// renamed (old name to new). It refuses a name that is not a group and a new name that another
// group has: figures must not merge or lose groups silently.
func Arrange(t *results.Table, by string, order []string, rename map[string]string) (*results.Table, error) {
	if len(order) == 0 && len(rename) == 0 {
		return t, nil
	}
	col, err := column(t, "--by", by)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, r := range t.Rows {
		if r[col] != "" && !slices.Contains(groups, r[col]) {
			groups = append(groups, r[col])
		}
	}
	for _, g := range order {
		if !slices.Contains(groups, g) {
			return nil, fmt.Errorf("--order names %s=%q, which is not a group; the groups are %s", by, g, strings.Join(groups, ", "))
		}
	}
	for old, to := range rename {
		if !slices.Contains(groups, old) {
			return nil, fmt.Errorf("--rename names %s=%q, which is not a group; the groups are %s", by, old, strings.Join(groups, ", "))
		}
		if _, renamed := rename[to]; slices.Contains(groups, to) && !renamed {
			return nil, fmt.Errorf("--rename %s=%s: %s is another group already; give a new name", old, to, to)
		}
	}
	rank := func(g string) int {
		if i := slices.Index(order, g); i >= 0 {
			return i
		}
		return len(order)
	}
	out := &results.Table{Columns: t.Columns, Rows: slices.Clone(t.Rows)}
	slices.SortStableFunc(out.Rows, func(a, b []string) int { return rank(a[col]) - rank(b[col]) })
	for i, r := range out.Rows {
		if to, ok := rename[r[col]]; ok {
			r = slices.Clone(r)
			r[col] = to
			out.Rows[i] = r
		}
	}
	return out, nil
}

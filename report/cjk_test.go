package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/internal/texttable"
)

// The text tables of compare align by display width: a Japanese or Korean group name takes two
// terminal columns a character, and every column still starts at the same place in every row.
func TestCompareTextAlignsCJKNames(t *testing.T) {
	c, err := Compare(table(t, `trial,status,algo,loss
t1,succeeded,実験的最適化法,0.1
t2,succeeded,実験的最適化法,0.2
t3,succeeded,sgd,0.5
t4,succeeded,sgd,0.6
t5,succeeded,한국어,0.3
t6,succeeded,한국어,0.4
`), Options{By: "algo", Metric: "loss", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	cell := regexp.MustCompile(`\S+( \S+)*`) // cells are apart by two spaces or more
	starts := func(l string) []int {
		var out []int
		for _, m := range cell.FindAllStringIndex(l, -1) {
			out = append(out, texttable.Width(l[:m[0]]))
		}
		return out
	}
	for _, head := range []string{"rank", "a "} {
		i := 0
		for i < len(lines) && !strings.HasPrefix(lines[i], head) {
			i++
		}
		want := starts(lines[i])
		rows := 0
		for _, l := range lines[i+1:] {
			if l == "" || strings.HasPrefix(l, "(") {
				break
			}
			rows++
			if got := starts(l); len(got) != len(want) || got[1] != want[1] || got[2] != want[2] {
				t.Errorf("row %q: columns start at %v; the header's at %v\n%s", l, got, want, b.String())
			}
		}
		if rows != 3 {
			t.Errorf("table %q has %d rows; want 3\n%s", head, rows, b.String())
		}
	}
}

package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

// FuzzCompare feeds arbitrary tables to Compare: it must return a comparison or an error, never
// panic, and every comparison must carry p-values in [0, 1].
func FuzzCompare(f *testing.F) {
	f.Add("g,s,v\na,1,1\nb,1,2\na,2,3\nb,2,1\n", true, uint8(1))
	f.Add("g,s,v\na,1,NaN\nb,1,2\na,2,3\nb,2,\nc,1,1\nc,2,1\n", false, uint8(0))
	f.Add("trial,status,g,s,v\nx,failed,a,1,1\n", true, uint8(1))
	f.Add("g,s,v\na,1,Inf\na,2,1\nb,1,-Inf\nb,2,2\n", false, uint8(0))
	f.Add("trial,status,g,s,v\nx,failed,a,1,\ny,succeeded,b,1,2\nz,pending,a,2,\nw,succeeded,b,2,NaN\n", true, uint8(1))
	f.Fuzz(func(t *testing.T, csv string, paired bool, policy uint8) {
		tb, err := results.ReadCSV(strings.NewReader(csv), "fuzz")
		if err != nil || len(tb.Columns) < 3 {
			return
		}
		opts := Options{By: tb.Columns[0], PairBy: tb.Columns[1], Metric: tb.Columns[2],
			Direction: Direction(policy % 3), Alternative: stats.Alternative(policy / 3 % 3)}
		if !paired {
			opts.PairBy = ""
		}
		if policy&0x40 != 0 {
			opts.Failed = FailedDrop
		}
		if policy&0x80 != 0 {
			opts.Incomplete = IncompleteError
		}
		c, err := Compare(tb, opts)
		if err != nil {
			return
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("comparison does not encode as JSON: %v", err)
		}
		for _, g := range c.Groups {
			if g.N < 1 || g.Failed > g.N || math.IsNaN(g.MeanRank) {
				t.Fatalf("group %+v: no observation, more failures than observations, or no mean rank", g)
			}
		}
		for _, p := range c.Pairwise {
			if !(p.PValue >= 0 && p.PValue <= 1 && p.PAdjusted >= p.PValue && p.PAdjusted <= 1) {
				t.Fatalf("pair %+v has p-values outside [0, 1] or an adjustment below the raw value", p)
			}
		}
	})
}

package chart_test

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/report/chart/charttest"
)

// The figure suite: every kind of figure at a paper's column (8.5 cm) and its page width (17 cm),
// with long and CJK group names. Read back from the SVG: no label leaves the canvas, no two
// labels overlap, and no legend label covers a point of a curve.
func TestFigureSuite(t *testing.T) {
	charttest.HaveCJKFont(t)
	names := []string{"実験的最適化法", "population-based-training-with-restarts", "adam", "한국어 최적화"}
	var groups []chart.Group
	var bands []chart.Band
	for i, n := range names {
		groups = append(groups, chart.Group{Name: n, Values: []float64{float64(i), float64(i) + 0.5, float64(i) + 0.2}})
		// Curves that fall from the top left to the bottom right and rise again, through every
		// corner a legend could take.
		var b chart.Band
		for s := range 40 {
			x := float64(s)
			v := 10 + float64(i) + 8*math.Cos(x/40*2*math.Pi)
			b.Steps, b.Median, b.Q1, b.Q3 = append(b.Steps, x), append(b.Median, v), append(b.Q1, v-1), append(b.Q3, v+1)
		}
		bands = append(bands, b)
		bands[i].Name = n
	}
	for _, width := range []vg.Length{8.5 * vg.Centimeter, 17 * vg.Centimeter} {
		s := chart.Style{Width: width}
		box, err := chart.Box(s, "loss by algorithm", "loss", groups)
		if err != nil {
			t.Fatal(err)
		}
		cd, err := chart.CD(chart.Style{Width: width}, "critical difference", "mean rank (1 = best)", names, []float64{1.2, 2.5, 2.9, 4.1}, 1.4)
		if err != nil {
			t.Fatal(err)
		}
		curves, err := chart.Curves(s, "loss over steps", "step", "loss", bands)
		if err != nil {
			t.Fatal(err)
		}
		for kind, f := range map[string]*chart.Figure{"box": box, "cd": cd, "curve": curves} {
			name := fmt.Sprintf("%s at %.1f cm", kind, float64(width/vg.Centimeter))
			var svg bytes.Buffer
			if err := f.Write(&svg, "svg"); err != nil {
				t.Fatal(err)
			}
			w, h, texts, err := charttest.TextBoxes(bytes.NewReader(svg.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range append(charttest.Outside(w, h, texts), charttest.Overlapping(texts)...) {
				t.Errorf("%s: %s", name, o)
			}
			if kind != "curve" {
				continue
			}
			lines, err := charttest.Lines(bytes.NewReader(svg.Bytes()), 1.5)
			if err != nil {
				t.Fatal(err)
			}
			covered := 0
			for _, l := range lines {
				if len(l) == 2 && l[0][1] == l[1][1] {
					continue // a legend's sample of a line
				}
				for _, tx := range texts {
					if !isLegend(tx.Content, names) {
						continue
					}
					for i := range l {
						for k := range 10 {
							if i == 0 && k > 0 {
								break
							}
							x, y := l[i][0], l[i][1]
							if i > 0 {
								f := float64(k) / 10
								x, y = l[i-1][0]+(l[i][0]-l[i-1][0])*f, l[i-1][1]+(l[i][1]-l[i-1][1])*f
							}
							if x >= tx.MinX && x <= tx.MaxX && y >= tx.MinY && y <= tx.MaxY {
								covered++
							}
						}
					}
				}
			}
			if covered > 0 {
				t.Errorf("%s: the legend covers %d point(s) of the curves", name, covered)
			}
		}
	}
}

// isLegend reports whether a text is (a wrapped line of) a group name.
func isLegend(s string, names []string) bool {
	for _, n := range names {
		if s != "" && strings.Contains(n, strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

package simplot

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Table is a CSV file as named numeric columns; empty or non-numeric cells are NaN-free
// skipped by the charts.
type Table struct {
	Columns []string
	Values  map[string][]float64
	Valid   map[string][]bool
}

// ReadTable reads a CSV file with a header row.
func ReadTable(r io.Reader) (*Table, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	t := &Table{Columns: head, Values: map[string][]float64{}, Valid: map[string][]bool{}}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, c := range head {
			v, err := strconv.ParseFloat(rec[i], 64)
			t.Values[c] = append(t.Values[c], v)
			t.Valid[c] = append(t.Valid[c], err == nil)
		}
	}
	return t, nil
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

func lines(p *plot.Plot, t *Table, x string, ys []string, scale float64) error {
	for i, y := range ys {
		var pts plotter.XYs
		for j, v := range t.Values[y] {
			if t.Valid[y][j] && t.Valid[x][j] {
				pts = append(pts, plotter.XY{X: t.Values[x][j] / scale, Y: v})
			}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = palette[i%len(palette)]
		p.Add(l)
		p.Legend.Add(y, l)
	}
	return nil
}

func write(p *plot.Plot, w io.Writer) error {
	wt, err := p.WriterTo(8*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// Utilisation draws util_<resource> columns of a timeline over time in hours.
func Utilisation(w io.Writer, timeline *Table, title string) error {
	var ys []string
	for _, c := range timeline.Columns {
		if strings.HasPrefix(c, "util_") && c != "util_pods" {
			ys = append(ys, c)
		}
	}
	p := newPlot(title, "time (h)", "fraction of capacity requested")
	p.Y.Min, p.Y.Max = 0, 1.05
	if err := lines(p, timeline, "time_s", ys, 3600); err != nil {
		return err
	}
	return write(p, w)
}

// Queue draws pending and running pods over time in hours.
func Queue(w io.Writer, timeline *Table, title string) error {
	p := newPlot(title, "time (h)", "pods")
	if err := lines(p, timeline, "time_s", []string{"pending", "running"}, 3600); err != nil {
		return err
	}
	return write(p, w)
}

// JCTCDF draws the empirical distribution of jct_s from a pods table on a log x axis.
func JCTCDF(w io.Writer, pods *Table, title string) error {
	var v []float64
	for i, x := range pods.Values["jct_s"] {
		if pods.Valid["jct_s"][i] && x > 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return fmt.Errorf("no completed pods to plot")
	}
	slices.Sort(v)
	pts := make(plotter.XYs, len(v))
	for i, x := range v {
		pts[i] = plotter.XY{X: x, Y: float64(i+1) / float64(len(v))}
	}
	p := newPlot(title, "job completion time (s, log scale)", "fraction of pods")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = palette[0]
	l.StepStyle = plotter.PostStep
	p.Add(l)
	p.Legend.Add("JCT", l)
	p.Legend.Left = false
	return write(p, w)
}

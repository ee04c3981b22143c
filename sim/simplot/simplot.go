package simplot

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/jikken-dev/jikken/internal/safecsv"
)

// Table is a CSV file as named columns: numbers in Values (Valid says which cells held one;
// charts skip the others) and the raw cells in Text.
type Table struct {
	Columns []string
	Values  map[string][]float64
	Valid   map[string][]bool
	Text    map[string][]string
}

// ReadTable reads a CSV file with a header row, as jikken wrote it (safecsv).
func ReadTable(r io.Reader) (*Table, error) {
	cr := csv.NewReader(r)
	head, err := safecsv.Read(cr)
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	t := &Table{Columns: head, Values: map[string][]float64{}, Valid: map[string][]bool{}, Text: map[string][]string{}}
	for {
		rec, err := safecsv.Read(cr)
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
			t.Text[c] = append(t.Text[c], rec[i])
		}
	}
	return t, nil
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// dashes tell lines apart once the palette's colours repeat.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// style gives line i its colour and dash pattern.
func style(l *plotter.Line, i int) {
	l.Color = palette[i%len(palette)]
	l.Dashes = dashes[(i/len(palette))%len(dashes)]
}

func lines(p *plot.Plot, t *Table, x string, ys []string, scale float64) error {
	var series []Series
	for _, y := range ys {
		s := Series{Name: y}
		for j, v := range t.Values[y] {
			if t.Valid[y][j] && t.Valid[x][j] {
				s.X = append(s.X, t.Values[x][j]/scale)
				s.Y = append(s.Y, v)
			}
		}
		series = append(series, s)
	}
	return addLines(p, series)
}

func addLines(p *plot.Plot, series []Series) error {
	for i, s := range series {
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		style(l, i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	return nil
}

// Series is one named line: points (X[i], Y[i]).
type Series struct {
	Name string
	X, Y []float64
}

// Sample is one named set of values whose distribution is drawn.
type Sample struct {
	Name   string
	Values []float64
}

// Lines draws series over the x axis, one line each (sim compare: one per profile).
func Lines(w io.Writer, title, xLabel, yLabel string, series []Series) error {
	p := newPlot(title, xLabel, yLabel)
	if err := addLines(p, series); err != nil {
		return err
	}
	return write(p, w)
}

// CDFs draws the empirical distribution of each sample as a step line on a log x axis. Values
// at or below zero are left out (a log axis has no room for them); add an offset first to
// keep them, as WaitCDFs does.
func CDFs(w io.Writer, title, xLabel string, samples []Sample) error {
	p := newPlot(title, xLabel, "fraction")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	drawn := 0
	for i, s := range samples {
		var v []float64
		for _, x := range s.Values {
			if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		pts := make(plotter.XYs, len(v))
		for j, x := range v {
			pts[j] = plotter.XY{X: x, Y: float64(j+1) / float64(len(v))}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		style(l, i)
		l.StepStyle = plotter.PostStep
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 {
		return fmt.Errorf("no positive values to plot")
	}
	p.Legend.Left = false
	p.Legend.Top = false
	return write(p, w)
}

// ByUser splits a column of a jobs or pods table by its user column, users in name order;
// offset is added to every value.
func ByUser(t *Table, column string, offset float64) []Sample {
	idx := map[string]int{}
	var out []Sample
	users := t.Text["user"]
	for i, v := range t.Values[column] {
		if !t.Valid[column][i] || i >= len(users) {
			continue
		}
		u := users[i]
		k, ok := idx[u]
		if !ok {
			k = len(out)
			idx[u] = k
			out = append(out, Sample{Name: u})
		}
		out[k].Values = append(out[k].Values, v+offset)
	}
	slices.SortFunc(out, func(a, b Sample) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// UserShare draws each user's share of the GPUs over time from a user_share table (time_s and
// one gpu_<user> column per user).
func UserShare(w io.Writer, shares *Table, title string) error {
	var ys []string
	for _, c := range shares.Columns {
		if strings.HasPrefix(c, "gpu_") {
			ys = append(ys, c)
		}
	}
	if len(ys) == 0 {
		return fmt.Errorf("no gpu_<user> columns")
	}
	var series []Series
	for _, y := range ys {
		s := Series{Name: strings.TrimPrefix(y, "gpu_")}
		for j, v := range shares.Values[y] {
			if shares.Valid[y][j] && shares.Valid["time_s"][j] {
				s.X = append(s.X, shares.Values["time_s"][j]/3600)
				s.Y = append(s.Y, v)
			}
		}
		series = append(series, s)
	}
	p := newPlot(title, "time (h)", "share of the GPUs")
	p.Y.Min, p.Y.Max = 0, 1.05
	if err := addLines(p, series); err != nil {
		return err
	}
	return write(p, w)
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

// JCTCDF draws the empirical distribution of jct_s from a jobs (or pods) table on a log x
// axis.
func JCTCDF(w io.Writer, jobs *Table, title string) error {
	var v []float64
	for i, x := range jobs.Values["jct_s"] {
		if jobs.Valid["jct_s"][i] && x > 0 {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return fmt.Errorf("no completed jobs to plot")
	}
	return CDFs(w, title, "job completion time (s, log scale)", []Sample{{Name: "JCT", Values: v}})
}

package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats lists the file formats Write accepts.
var Formats = []string{"png", "svg"}

// Size of every plot; a fixed size keeps renders byte-identical.
const (
	Width  = 16 * vg.Centimeter
	Height = 10 * vg.Centimeter
)

// Write renders p as format ("png" or "svg") at the given size to w. SVGs embed their fonts, so
// text is measured and drawn with the same font wherever the file is opened (a browser without
// Liberation fonts would otherwise substitute a wider one and clip labels). PNGs are drawn at
// 192 dpi, sharp on high-density screens.
func Write(w io.Writer, p *plot.Plot, format string, width, height vg.Length) error {
	return render(w, p, format, width, height, true)
}

// render is Write with the choice of embedding fonts in SVGs; golden tests leave them out to
// keep the files small and about the plot.
func render(w io.Writer, p *plot.Plot, format string, width, height vg.Length, embedFonts bool) error {
	var wt io.WriterTo
	switch format {
	case "svg":
		c := vgsvg.NewWith(vgsvg.UseWH(width, height), vgsvg.EmbedFonts(embedFonts))
		p.Draw(draw.New(c))
		wt = c
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(192))
		p.Draw(draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	default:
		return fmt.Errorf("unknown plot format %q; use png or svg", format)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("write %s: %w", format, err)
	}
	return nil
}

// Group is one group's observations.
type Group struct {
	Name   string
	Values []float64
}

// Box draws a box plot per group (median, quartiles, whiskers to 1.5 IQR) with every observation
// drawn over it as a point, so small samples are not hidden behind a box.
func Box(title, metric string, groups []Group) (*plot.Plot, error) {
	if len(groups) == 0 {
		return nil, fmt.Errorf("box plot: no groups to draw")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = metric
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
		if len(g.Values) == 0 {
			return nil, fmt.Errorf("box plot: group %s has no values", g.Name)
		}
		box, err := plotter.NewBoxPlot(vg.Points(30), float64(i), plotter.Values(g.Values))
		if err != nil {
			return nil, fmt.Errorf("box plot of %s: %w", g.Name, err)
		}
		box.FillColor = withAlpha(plotutil.Color(i), 60)
		// Every observation is drawn as a point below, outliers included.
		box.GlyphStyle.Radius = 0
		pts := make(plotter.XYs, len(g.Values))
		for j, v := range g.Values {
			pts[j] = plotter.XY{X: float64(i) + jitter(j), Y: v}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("strip plot of %s: %w", g.Name, err)
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Radius = vg.Points(2)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(box, sc)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	p.Add(plotter.NewGrid())
	var all []float64
	for _, g := range groups {
		all = append(all, g.Values...)
	}
	logScaleIfWide(p, metric, all)
	return p, nil
}

// logScaleIfWide switches the Y axis to a log scale, and says so in its label, when all values
// are positive and span more than three decades: on a linear axis the small ones would be a flat
// line at zero.
func logScaleIfWide(p *plot.Plot, label string, values []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if !(lo > 0) || hi/lo <= 1000 {
		return
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	p.Y.Label.Text = label + " (log scale)"
}

// decadeTicks labels powers of ten on a log axis: every decade when there are few, otherwise every
// 2nd, 5th, 10th, 20th... so that about eight labels remain, written 0.01, 1, 1000 or 1e-20.
type decadeTicks struct{}

func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	step := 1.0
	for i := 0; (hi-lo)/step > 8; i++ {
		step *= []float64{2, 2.5, 2}[i%3] // 1, 2, 5, 10, 20, 50, ...
	}
	var ticks []plot.Tick
	for e := math.Ceil(lo/step) * step; e <= hi; e += step {
		label := strconv.FormatFloat(math.Pow(10, e), 'f', -1, 64)
		if e < -3 || e > 4 {
			label = fmt.Sprintf("1e%d", int(e))
		}
		ticks = append(ticks, plot.Tick{Value: math.Pow(10, e), Label: label})
		if step == 1 && e < hi {
			for m := 2.0; m < 10; m++ {
				ticks = append(ticks, plot.Tick{Value: m * math.Pow(10, e)})
			}
		}
	}
	return ticks
}

// jitter spreads the points of a strip plot sideways by a fixed low-discrepancy sequence rather
// than random numbers, so the same data always draws the same picture.
func jitter(j int) float64 {
	f := math.Mod(float64(j)*0.6180339887498949, 1)
	return (f - 0.5) * 0.3
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// Band is one group's convergence curve: at each step, the median over the group's trials and
// the inter-quartile range around it.
type Band struct {
	Name                  string
	Steps, Median, Q1, Q3 []float64
}

// Curves draws each band as its median line over a shaded inter-quartile band.
func Curves(title, xLabel, metric string, bands []Band) (*plot.Plot, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("curve plot: no curves to draw")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = metric
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	var all []float64
	rising := 0.0
	for i, b := range bands {
		if len(b.Steps) == 0 {
			return nil, fmt.Errorf("curve plot: group %s has no points", b.Name)
		}
		if len(b.Median) != len(b.Steps) || len(b.Q1) != len(b.Steps) || len(b.Q3) != len(b.Steps) {
			return nil, fmt.Errorf("curve plot: group %s has steps and values of different lengths", b.Name)
		}
		ring := make(plotter.XYs, 0, 2*len(b.Steps))
		line := make(plotter.XYs, len(b.Steps))
		for j, s := range b.Steps {
			ring = append(ring, plotter.XY{X: s, Y: b.Q3[j]})
			line[j] = plotter.XY{X: s, Y: b.Median[j]}
		}
		for j := len(b.Steps) - 1; j >= 0; j-- {
			ring = append(ring, plotter.XY{X: b.Steps[j], Y: b.Q1[j]})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, fmt.Errorf("curve band of %s: %w", b.Name, err)
		}
		poly.Color = withAlpha(plotutil.Color(i), 50)
		poly.LineStyle.Width = 0
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, fmt.Errorf("curve of %s: %w", b.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(poly, l)
		p.Legend.Add(b.Name, l)
		all = append(append(append(all, b.Median...), b.Q1...), b.Q3...)
		rising += b.Median[len(b.Median)-1] - b.Median[0]
	}
	// Put the legend in the top corner the curves leave free: top left when they rise.
	p.Legend.Left = rising > 0
	logScaleIfWide(p, metric, all)
	return p, nil
}

// CD draws Demšar's critical-difference diagram: groups placed on an axis of mean ranks (1 is
// best, on the left), thick bars joining groups whose mean ranks differ by less than cd (not
// significantly different), and a bar of length cd for scale.
func CD(title string, names []string, ranks []float64, cd float64) (*plot.Plot, error) {
	k := len(names)
	if k < 2 || len(ranks) != k {
		return nil, fmt.Errorf("critical-difference diagram: need at least 2 groups with one mean rank each")
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ranks[order[a]] < ranks[order[b]] })

	p := plot.New()
	p.Title.Text = title
	p.HideY()
	p.X.Label.Text = "mean rank (1 = best)"
	lo, hi := 1.0, float64(k)
	p.X.Min, p.X.Max = lo-0.5, hi+0.5
	ticks := make([]plot.Tick, k)
	for i := range ticks {
		ticks[i] = plot.Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)

	// gonum draws the rank axis at the bottom, so groups rise from it on labelled elbows (Demšar's
	// figure upside down): the better half to the left edge, the rest to the right edge, one row
	// per group so labels never overlap.
	half := (k + 1) / 2
	var labels plotter.XYLabels
	for n, g := range order {
		row := float64(n)
		edge := lo - 0.45
		if n >= half {
			row = float64(k - 1 - n)
			edge = hi + 0.45
		}
		y := 1 + row
		if err := addSegments(p, color.Black, 1, plotter.XYs{{X: ranks[g], Y: 0}, {X: ranks[g], Y: y}, {X: edge, Y: y}}); err != nil {
			return nil, err
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: edge, Y: y})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%s (%.2f)", names[g], ranks[g]))
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, fmt.Errorf("critical-difference labels: %w", err)
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].YAlign = draw.YBottom
		if labels.XYs[i].X > hi {
			lab.TextStyle[i].XAlign = draw.XRight
		}
	}
	p.Add(lab)

	// Cliques: maximal runs of consecutive groups whose spread is below cd.
	bar := 0
	last := -1
	for s := 0; s < k; s++ {
		e := s
		for e+1 < k && ranks[order[e+1]]-ranks[order[s]] < cd {
			e++
		}
		if e > s && e > last {
			y := 0.25 + 0.15*float64(bar)
			if err := addSegments(p, color.NRGBA{R: 200, G: 30, B: 30, A: 255}, 3,
				plotter.XYs{{X: ranks[order[s]] - 0.03, Y: y}, {X: ranks[order[e]] + 0.03, Y: y}}); err != nil {
				return nil, err
			}
			bar++
			last = e
		}
	}

	// The scale bar of length cd above the elbows.
	top := float64(half) + 0.8
	if cd > 0 {
		if err := addSegments(p, color.Black, 1.5, plotter.XYs{{X: lo, Y: top}, {X: lo + cd, Y: top}}); err != nil {
			return nil, err
		}
		cdl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: lo + cd/2, Y: top + 0.05}}, Labels: []string{fmt.Sprintf("CD = %.3f", cd)}})
		if err != nil {
			return nil, err
		}
		cdl.TextStyle[0].XAlign = draw.XCenter
		cdl.TextStyle[0].YAlign = draw.YBottom
		p.Add(cdl)
	}
	p.Y.Min, p.Y.Max = 0, top+0.5
	p.X.Padding = 0
	return p, nil
}

func addSegments(p *plot.Plot, c color.Color, width float64, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("critical-difference diagram: %w", err)
	}
	l.Color = c
	l.Width = vg.Points(width)
	p.Add(l)
	return nil
}

package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// Formats lists the file formats Write accepts.
var Formats = []string{"png", "svg", "pdf"}

// Default size of a figure: a page-wide figure in a paper. Style can change it.
const (
	Width    = 16 * vg.Centimeter
	Height   = 10 * vg.Centimeter
	FontSize = vg.Length(10)
)

// Style is the size and lettering of a figure.
type Style struct {
	// Width and Height of the figure; zero means Width and Height (the critical-difference
	// diagram's height follows its content unless given).
	Width, Height vg.Length
	// FontSize is the size of labels and tick labels; titles are 1.2 times larger. Zero means
	// FontSize.
	FontSize vg.Length
	// Font names a font file for the characters Liberation Sans lacks (CJK group names); empty
	// means $JIKKEN_FONT, then the usual places (FallbackFontFiles).
	Font string
	// Title, XLabel and YLabel replace what the figure would say; "-" leaves one out.
	Title, XLabel, YLabel string
	// LogX and LogY draw an axis on a log scale; every value on it must be positive.
	LogX, LogY bool
	// Legend places the curves' legend: LegendAuto (""), LegendInside, LegendOutside or
	// LegendNone.
	Legend string
}

// Legend placements (Style.Legend).
const (
	// LegendAuto puts it in a corner of the data area where it covers no curve, else outside.
	LegendAuto = "auto"
	// LegendInside keeps it in a corner of the data area, the freest, even over a curve.
	LegendInside = "inside"
	// LegendOutside puts it right of the data area.
	LegendOutside = "outside"
	// LegendNone leaves it out.
	LegendNone = "none"
)

// label is what a figure shows for a text it would write as def, given the style's choice.
func label(choice, def string) string {
	switch choice {
	case "":
		return def
	case "-":
		return ""
	}
	return choice
}

func (s Style) size() (w, h, fs vg.Length) {
	w, h, fs = s.Width, s.Height, s.FontSize
	if w == 0 {
		w = Width
	}
	if h == 0 {
		h = Height
	}
	if fs == 0 {
		fs = FontSize
	}
	return w, h, fs
}

// Figure is a plot with its size and fonts, ready to be written.
type Figure struct {
	Plot          *plot.Plot
	Width, Height vg.Length
	fonts         *fonts
	fontSize      vg.Length
	// legendOutside draws the legend right of the data area: inside it would cover data.
	legendOutside bool
}

// Write renders the figure as format: "png" (192 dpi, sharp on high-density screens), "svg" (text
// as <text> referencing its fonts, not embedding them) or "pdf" (text as outlines). The same
// figure gives the same bytes.
func (f *Figure) Write(w io.Writer, format string) error {
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = newSVG(f.Width, f.Height, f.fonts)
	case "pdf":
		c = newPDF(f.Width, f.Height)
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(192))
		f.draw(draw.New(img))
		c = vgimg.PngCanvas{Canvas: img}
	default:
		return fmt.Errorf("unknown figure format %q; use png, svg or pdf", format)
	}
	if format != "png" {
		f.draw(draw.New(c))
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write %s: %w", format, err)
	}
	return nil
}

func (f *Figure) draw(c draw.Canvas) {
	if f.legendOutside {
		f.drawOutside(f.inset(c))
		return
	}
	f.Plot.Draw(f.inset(c))
}

// margin is the blank border around a figure, in font sizes: nothing touches the edge.
const margin = 0.4

func (f *Figure) inset(c draw.Canvas) draw.Canvas {
	m := margin * f.fontSize
	return draw.Crop(c, m, -m, m, -m)
}

// newFigure starts a figure whose every text is drawn by the style's fonts; texts are all the
// strings it will show, so that a fallback font is loaded when one needs it.
func newFigure(s Style, title string, texts ...string) (*Figure, handler, error) {
	w, h, fs := s.size()
	title = label(s.Title, title)
	texts = append(texts, s.XLabel, s.YLabel)
	f, err := newFonts(s.Font, append(texts, title)...)
	if err != nil {
		return nil, handler{}, err
	}
	hd := handler{f}
	p := plot.New()
	p.TextHandler = hd
	base := text.Style{Color: color.Black, Handler: hd, Font: hd.font(fs)}
	p.Title.TextStyle = base
	p.Title.TextStyle.Font = hd.font(fs * 1.2)
	p.Title.TextStyle.XAlign, p.Title.TextStyle.YAlign = draw.XCenter, draw.YTop
	p.Title.Text = hd.wrap(title, fs*1.2, w-2*(margin+1)*fs)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = base
		a.Label.TextStyle.XAlign, a.Label.TextStyle.YAlign = draw.XCenter, draw.YBottom
		a.Tick.Label = base
		a.Tick.Label.XAlign, a.Tick.Label.YAlign = draw.XCenter, draw.YTop
	}
	p.Y.Tick.Label.XAlign, p.Y.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.Legend.TextStyle = base
	return &Figure{Plot: p, Width: w, Height: h, fonts: f, fontSize: fs}, hd, nil
}

// Group is one group's observations.
type Group struct {
	Name   string
	Values []float64
	// Failed counts failures that have no value to draw; the label says how many.
	Failed int
}

// Box draws a box plot per group (median, quartiles, whiskers to 1.5 IQR) with every observation
// drawn over it as a point, so small samples are not hidden behind a box. Long names are wrapped
// to fit their slot, or turned upright when there are too many groups for that.
func Box(s Style, title, metric string, groups []Group) (*Figure, error) {
	if len(groups) == 0 {
		return nil, fmt.Errorf("box plot: no groups to draw")
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
		if g.Failed > 0 {
			names[i] = fmt.Sprintf("%s (%d failed)", g.Name, g.Failed)
		}
	}
	fig, hd, err := newFigure(s, title, append([]string{metric}, names...)...)
	if err != nil {
		return nil, fmt.Errorf("box plot: %w", err)
	}
	p := fig.Plot
	p.Y.Label.Text = metric
	var all []float64
	for i, g := range groups {
		if len(g.Values) == 0 {
			continue // a group of failures only: its label says so
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
		all = append(all, g.Values...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("box plot: no group has a value to draw")
	}
	p.Add(plotter.NewGrid())
	logScaleIfWide(p, metric, all)
	if s.LogX {
		return nil, fmt.Errorf("box plot: its x axis holds the groups, which have no log scale")
	}
	if err := fig.axes(s, nil, all); err != nil {
		return nil, fmt.Errorf("box plot: %w", err)
	}
	fitLabels(fig, hd, names)
	return fig, nil
}

// axes applies the style's axis labels and log scales, xs and ys being every value drawn.
func (f *Figure) axes(s Style, xs, ys []float64) error {
	p := f.Plot
	for _, a := range []struct {
		on     bool
		name   string
		axis   *plot.Axis
		values []float64
	}{{s.LogX, "x", &p.X, xs}, {s.LogY, "y", &p.Y, ys}} {
		if !a.on {
			continue
		}
		for _, v := range a.values {
			if !(v > 0) {
				return fmt.Errorf("a log %s axis needs positive values, and %g is drawn on it", a.name, v)
			}
		}
		a.axis.Scale, a.axis.Tick.Marker = plot.LogScale{}, decadeTicks{}
	}
	p.X.Label.Text = label(s.XLabel, p.X.Label.Text)
	p.Y.Label.Text = label(s.YLabel, p.Y.Label.Text)
	return nil
}

// fitLabels sets the group names as X tick labels that fit their slots: wrapped on up to three
// lines when that is enough, else turned upright and wrapped to a third of the height (up to
// half of it when the slot cannot hold the lines side by side). Call it once the Y axis is set:
// the slots are measured on the data area the Y axis leaves.
func fitLabels(fig *Figure, hd handler, names []string) {
	p := fig.Plot
	size := p.X.Tick.Label.Font.Size
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Padding = vg.Points(5)
	area := p.DataCanvas(fig.inset(draw.NewCanvas(new(recorder.Canvas), fig.Width, fig.Height)))
	slot := (area.Max.X - area.Min.X) / vg.Length(p.X.Max-p.X.Min) * 0.95
	wrapped := make([]string, len(names))
	fits := true
	for i, n := range names {
		wrapped[i] = hd.wrap(n, size, slot)
		if len(hd.Lines(wrapped[i])) > 3 {
			fits = false
		}
	}
	if !fits {
		perSlot := max(1, int(slot/hd.Extents(p.X.Tick.Label.Font).Height))
		for i, n := range names {
			// As few lines as a third of the height allows, more room only when the lines would
			// not fit side by side in the slot.
			for width := fig.Height / 3; ; width *= 1.2 {
				wrapped[i] = hd.wrap(n, size, width)
				if len(hd.Lines(wrapped[i])) <= perSlot || width > fig.Height/2 {
					break
				}
			}
		}
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	p.NominalX(wrapped...)
	p.Y.Padding = vg.Points(5) // NominalX pads by half the first label, which can be long
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
func Curves(s Style, title, xLabel, metric string, bands []Band) (*Figure, error) {
	if len(bands) == 0 {
		return nil, fmt.Errorf("curve plot: no curves to draw")
	}
	names := make([]string, len(bands))
	for i, b := range bands {
		names[i] = b.Name
	}
	fig, hd, err := newFigure(s, title, append([]string{xLabel, metric}, names...)...)
	if err != nil {
		return nil, fmt.Errorf("curve plot: %w", err)
	}
	p := fig.Plot
	p.X.Label.Text = xLabel
	p.Y.Label.Text = metric
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	var all []float64
	var lines []plotter.XYs
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
		for j, st := range b.Steps {
			ring = append(ring, plotter.XY{X: st, Y: b.Q3[j]})
			line[j] = plotter.XY{X: st, Y: b.Median[j]}
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
		lines = append(lines, line, ring)
		// Long names are wrapped so the legend keeps to a third of the width.
		p.Legend.Add(hd.wrap(b.Name, p.Legend.TextStyle.Font.Size, fig.Width/3), l)
		all = append(append(append(all, b.Median...), b.Q1...), b.Q3...)
		rising += b.Median[len(b.Median)-1] - b.Median[0]
	}
	if !s.LogY {
		logScaleIfWide(p, metric, all)
	}
	var xs []float64
	for _, b := range bands {
		xs = append(xs, b.Steps...)
	}
	if err := fig.axes(s, xs, all); err != nil {
		return nil, fmt.Errorf("curve plot: %w", err)
	}
	switch s.Legend {
	case "", LegendAuto, LegendInside:
		// Where it covers no curve: first the top corner the curves leave free (top left when
		// they rise), then the others, else outside (or, asked inside, that first corner).
		fig.placeLegend(lines, rising > 0)
		if fig.legendOutside && s.Legend == LegendInside {
			fig.legendOutside = false
			p.Legend.Top, p.Legend.Left = true, rising > 0
		}
	case LegendOutside:
		fig.legendOutside = true
	case LegendNone:
		ts := p.Legend.TextStyle
		p.Legend = plot.NewLegend()
		p.Legend.TextStyle = ts
	default:
		return nil, fmt.Errorf("curve plot: legend %q: use auto, inside, outside or none", s.Legend)
	}
	return fig, nil
}

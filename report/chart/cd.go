package chart

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CD draws Demšar's critical-difference diagram as Demšar (2006) and autorank lay it out: the
// mean-rank axis on top (rank 1 at the left) with a bar of length cd above it, each group hung
// from its mean rank on an elbow to a label at the left (the better half) or the right edge, and
// thick bars joining groups whose mean ranks differ by no more than cd (not significantly
// different). axis names the ranks, e.g. "mean rank (1 = best)". Labels are measured and wrapped
// so that they stay inside the figure; with no height in the style, the figure is as tall as its
// content.
func CD(s Style, title, axis string, names []string, ranks []float64, cd float64) (*Figure, error) {
	k := len(names)
	axis = label(s.XLabel, axis)
	if s.LogX || s.LogY {
		return nil, fmt.Errorf("critical-difference diagram: mean ranks have no log scale")
	}
	if k < 2 || len(ranks) != k {
		return nil, fmt.Errorf("critical-difference diagram: need at least 2 groups with one mean rank each")
	}
	fig, hd, err := newFigure(s, title, append([]string{axis, fmt.Sprintf("CD = %.3f", cd)}, names...)...)
	if err != nil {
		return nil, fmt.Errorf("critical-difference diagram: %w", err)
	}
	_, _, fs := s.size()
	d := &cdDiagram{hd: hd, fs: fs, names: names, ranks: ranks, cd: cd, axis: axis}
	d.order = make([]int, k)
	for i := range d.order {
		d.order[i] = i
	}
	sort.SliceStable(d.order, func(a, b int) bool { return ranks[d.order[a]] < ranks[d.order[b]] })
	p := fig.Plot
	p.HideAxes()
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(d)
	inner := 2 * margin * fs
	g := d.layout(fig.Width - inner)
	top := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	need := top + g.height + inner
	if s.Height == 0 {
		fig.Height = need
	} else if need > fig.Height {
		return nil, fmt.Errorf("critical-difference diagram: %d groups need a height of at least %.1f cm at this width and font size; give a larger height or none", k, need.Points()/vg.Centimeter.Points())
	}
	return fig, nil
}

// cdDiagram draws the diagram into the plot's data area, in points from its top-left corner.
type cdDiagram struct {
	hd    handler
	fs    vg.Length
	names []string
	ranks []float64
	order []int // groups by mean rank, best first
	cd    float64
	axis  string
}

// cdLayout is where everything goes, x from the left and y down from the top, in points.
type cdLayout struct {
	xa, xb     vg.Length // ends of the rank axis
	xl, xr     vg.Length // where the elbows end, left and right
	yName      vg.Length // baseline row of the axis' name (0 when it shares the CD row)
	yCD, yAxis vg.Length
	cliques    [][2]int // first and last position in order of groups that do not differ
	yClique    []vg.Length
	rows       []vg.Length // per position in order: the label's vertical centre
	wrapped    []string    // per group: its label, wrapped
	height     vg.Length
}

// label is a group's name wrapped to maxW with its mean rank after it, on the last line when it
// fits there.
func (d *cdDiagram) label(i int, maxW vg.Length) string {
	name := d.hd.wrap(d.names[i], d.fs, maxW)
	rank := fmt.Sprintf("(%.2f)", d.ranks[i])
	lines := d.hd.Lines(name)
	if d.hd.width(lines[len(lines)-1]+" "+rank, d.fs) <= maxW {
		return name + " " + rank
	}
	return name + "\n" + rank
}

func (d *cdDiagram) cdText() string { return fmt.Sprintf("CD = %.3f", d.cd) }

func (d *cdDiagram) style(x text.XAlignment, y text.YAlignment) text.Style {
	return text.Style{Color: color.Black, Font: d.hd.font(d.fs), Handler: d.hd, XAlign: x, YAlign: y}
}

func (d *cdDiagram) layout(width vg.Length) cdLayout {
	fs, k := d.fs, len(d.names)
	half := (k + 1) / 2
	margin, gap, elbow := 0.3*fs, 0.5*fs, fs
	var g cdLayout
	// Labels take at most 30% of the width a side; narrower while the axis would be too short.
	for maxW := 0.3 * width; ; maxW *= 0.85 {
		g.wrapped = make([]string, k)
		var leftW, rightW vg.Length
		for n, i := range d.order {
			g.wrapped[i] = d.label(i, maxW)
			w := d.style(0, 0).Width(g.wrapped[i])
			if n < half {
				leftW = max(leftW, w)
			} else {
				rightW = max(rightW, w)
			}
		}
		g.xl, g.xr = margin+leftW+gap, width-margin-rightW-gap
		g.xa, g.xb = g.xl+elbow, g.xr-elbow
		if g.xb-g.xa >= 6*fs || maxW < 3*fs {
			break
		}
	}
	line := d.style(0, 0).Height("0")
	g.yCD = line + 0.6*fs
	// The axis' name goes right of the CD bar's label, or on a row of its own when they would meet.
	cdEnd := g.xa + vg.Length(min(d.cd, float64(k-1))/float64(k-1))*(g.xb-g.xa)
	cdRight := (g.xa+cdEnd)/2 + d.style(0, 0).Width(d.cdText())/2
	if d.axis != "" && g.xb-d.style(0, 0).Width(d.axis) < cdRight+fs {
		g.yName = line
		g.yCD += line + 0.2*fs
	}
	g.yAxis = g.yCD + 0.5*fs + line + 0.4*fs
	// Cliques: maximal runs of groups, in rank order, whose mean ranks span no more than cd.
	last := -1
	for i := range k {
		j := i
		for j+1 < k && d.ranks[d.order[j+1]]-d.ranks[d.order[i]] <= d.cd {
			j++
		}
		if j > i && j > last {
			g.cliques = append(g.cliques, [2]int{i, j})
			g.yClique = append(g.yClique, g.yAxis+0.7*fs+vg.Length(len(g.yClique))*0.5*fs)
			last = j
		}
	}
	y := g.yAxis + 0.7*fs + vg.Length(len(g.cliques))*0.5*fs + 0.4*fs
	// Rows: the left side best first downwards, the right side worst first, so elbows never cross.
	g.rows = make([]vg.Length, k)
	yl, yr := y, y
	for n := range k {
		pos := n
		if n >= half {
			pos = k - 1 + half - n // worst first on the right
		}
		i := d.order[pos]
		h := d.style(0, 0).Height(g.wrapped[i])
		if pos < half {
			g.rows[pos] = yl + h/2
			yl += h + 0.35*fs
		} else {
			g.rows[pos] = yr + h/2
			yr += h + 0.35*fs
		}
	}
	g.height = max(yl, yr) + margin
	return g
}

func (d *cdDiagram) Plot(c draw.Canvas, _ *plot.Plot) {
	g := d.layout(c.Max.X - c.Min.X)
	k := len(d.names)
	at := func(x, y vg.Length) vg.Point { return vg.Point{X: c.Min.X + x, Y: c.Max.Y - y} }
	xr := func(r float64) vg.Length { return g.xa + vg.Length((r-1)/float64(k-1))*(g.xb-g.xa) }
	thin := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
	line := func(sty draw.LineStyle, pts ...vg.Point) { c.StrokeLines(sty, pts) }

	// The scale bar: CD long (cut at the axis' end), from rank 1, its value above it; the axis'
	// name on the right.
	fs := d.fs
	end := min(1+d.cd, float64(k))
	line(draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, at(xr(1), g.yCD), at(xr(end), g.yCD))
	for _, r := range []float64{1, end} {
		line(thin, at(xr(r), g.yCD-0.25*fs), at(xr(r), g.yCD+0.25*fs))
	}
	c.FillText(d.style(draw.XCenter, draw.YBottom), at((xr(1)+xr(end))/2, g.yCD-0.5*fs), d.cdText())
	if d.axis != "" {
		y := g.yCD - 0.5*fs
		if g.yName > 0 {
			y = g.yName
		}
		c.FillText(d.style(draw.XRight, draw.YBottom), at(g.xb, y), d.axis)
	}
	// The axis with a tick and a number at every rank, half ticks between.
	line(draw.LineStyle{Color: color.Black, Width: vg.Points(1)}, at(g.xa, g.yAxis), at(g.xb, g.yAxis))
	for r := 1.0; r <= float64(k); r += 0.5 {
		tick := 0.35 * fs
		if r != float64(int(r)) {
			tick = 0.2 * fs
		}
		line(thin, at(xr(r), g.yAxis), at(xr(r), g.yAxis-tick))
		if r == float64(int(r)) {
			c.FillText(d.style(draw.XCenter, draw.YBottom), at(xr(r), g.yAxis-0.4*fs), fmt.Sprint(int(r)))
		}
	}
	// Elbows and labels.
	half := (k + 1) / 2
	for pos, i := range d.order {
		x, y := xr(d.ranks[i]), g.rows[pos]
		if pos < half {
			line(thin, at(x, g.yAxis), at(x, y), at(g.xl, y))
			c.FillText(d.style(draw.XRight, draw.YCenter), at(g.xl-0.3*fs, y), g.wrapped[i])
		} else {
			line(thin, at(x, g.yAxis), at(x, y), at(g.xr, y))
			c.FillText(d.style(draw.XLeft, draw.YCenter), at(g.xr+0.3*fs, y), g.wrapped[i])
		}
	}
	// Thick bars over the groups that do not differ.
	bar := draw.LineStyle{Color: color.Black, Width: vg.Points(2.5)}
	for n, cl := range g.cliques {
		y := g.yClique[n]
		line(bar, at(xr(d.ranks[d.order[cl[0]]])-0.2*fs, y), at(xr(d.ranks[d.order[cl[1]]])+0.2*fs, y))
	}
}

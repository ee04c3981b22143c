package chart

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// placeLegend puts the legend in the first corner of the data area (top corners first, the
// preferred side first) where it covers no point of lines, each given as its vertices; when every
// corner covers one, as on a narrow figure, the legend goes outside, right of the data area.
func (f *Figure) placeLegend(lines []plotter.XYs, preferLeft bool) {
	p := f.Plot
	for _, c := range [][2]bool{{true, preferLeft}, {true, !preferLeft}, {false, preferLeft}, {false, !preferLeft}} {
		p.Legend.Top, p.Legend.Left = c[0], c[1]
		if !f.legendCovers(lines) {
			return
		}
	}
	f.legendOutside = true
}

// legendCovers reports whether the legend, where it is, covers a vertex of a line or a point on
// a segment between two (sampled every tenth of the segment).
func (f *Figure) legendCovers(lines []plotter.XYs) bool {
	p := f.Plot
	area := p.DataCanvas(f.inset(draw.NewCanvas(new(recorder.Canvas), f.Width, f.Height)))
	r := legendBox(&p.Legend, area.Rectangle, f.fontSize/4)
	tx, ty := p.Transforms(&area)
	for _, l := range lines {
		for i, pt := range l {
			if inside(r, vg.Point{X: tx(pt.X), Y: ty(pt.Y)}) {
				return true
			}
			if i == 0 {
				continue
			}
			a, b := vg.Point{X: tx(l[i-1].X), Y: ty(l[i-1].Y)}, vg.Point{X: tx(pt.X), Y: ty(pt.Y)}
			for k := 1; k < 10; k++ {
				t := vg.Length(k) / 10
				if inside(r, vg.Point{X: a.X + (b.X-a.X)*t, Y: a.Y + (b.Y-a.Y)*t}) {
					return true
				}
			}
		}
	}
	return false
}

func inside(r vg.Rectangle, p vg.Point) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

// legendBox is where Legend.Draw puts the legend in area, grown by pad on every side.
// (Legend.Rectangle gives its size, but on the other side than Draw when Left is set.)
func legendBox(l *plot.Legend, area vg.Rectangle, pad vg.Length) vg.Rectangle {
	size := l.Rectangle(draw.Canvas{Rectangle: area}).Size()
	var r vg.Rectangle
	if l.Left {
		r.Min.X = area.Min.X + l.XOffs
	} else {
		r.Min.X = area.Max.X - size.X + l.XOffs
	}
	if l.Top {
		r.Min.Y = area.Max.Y - size.Y + l.YOffs
	} else {
		r.Min.Y = area.Min.Y + l.YOffs
	}
	r.Max = vg.Point{X: r.Min.X + size.X, Y: r.Min.Y + size.Y}
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - pad, Y: r.Min.Y - pad}, Max: vg.Point{X: r.Max.X + pad, Y: r.Max.Y + pad}}
}

// drawOutside draws the plot with its legend in a column right of the data area.
func (f *Figure) drawOutside(c draw.Canvas) {
	p := f.Plot
	legend := p.Legend
	w := legend.Rectangle(c).Size().X + f.fontSize
	p.Legend = plot.NewLegend()
	p.Legend.TextStyle = legend.TextStyle
	p.Draw(draw.Crop(c, 0, -w, 0, 0))
	p.Legend = legend
	legend.Top, legend.Left = true, true
	// The column starts a font size right of the data area and is as high as the data area.
	area := p.DataCanvas(draw.Crop(c, 0, -w, 0, 0))
	col := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: c.Max.X - w + f.fontSize, Y: area.Min.Y}, Max: vg.Point{X: c.Max.X, Y: area.Max.Y}}}
	legend.Draw(col)
}

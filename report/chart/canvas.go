package chart

import (
	"image/color"
	"math"
	"strconv"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// The SVG and PDF canvases share this: the drawing state gonum's vg.Canvas contract asks for,
// paths flattened to absolute moves, lines and cubic curves, and text as glyph outlines.

// affine maps (x, y) to (a·x + c·y + e, b·x + d·y + f).
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// then returns the transform that applies n first, then m (m × n).
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// scale is the factor lengths (line widths, dashes) grow by.
func (m affine) scale() float64 { return math.Sqrt(math.Abs(m.a*m.d - m.b*m.c)) }

// state is what Push saves and Pop restores.
type state struct {
	m     affine
	color color.Color
	width vg.Length
	dash  []vg.Length
	dashO vg.Length
}

// states implements the state-keeping half of vg.Canvas.
type states struct{ stack []state }

func newStates() states {
	return states{stack: []state{{m: identity, color: color.Black, width: vg.Points(1)}}}
}

func (s *states) top() *state              { return &s.stack[len(s.stack)-1] }
func (s *states) SetLineWidth(w vg.Length) { s.top().width = w }
func (s *states) SetLineDash(d []vg.Length, offset vg.Length) {
	s.top().dash, s.top().dashO = d, offset
}
func (s *states) SetColor(c color.Color) {
	if c == nil {
		c = color.Black
	}
	s.top().color = c
}
func (s *states) Rotate(rad float64) {
	sin, cos := math.Sincos(rad)
	s.top().m = s.top().m.then(affine{a: cos, b: sin, c: -sin, d: cos})
}
func (s *states) Translate(pt vg.Point) {
	s.top().m = s.top().m.then(affine{a: 1, d: 1, e: pt.X.Points(), f: pt.Y.Points()})
}
func (s *states) Scale(x, y float64) { s.top().m = s.top().m.then(affine{a: x, d: y}) }
func (s *states) Push()              { s.stack = append(s.stack, *s.top()) }
func (s *states) Pop() {
	if len(s.stack) > 1 {
		s.stack = s.stack[:len(s.stack)-1]
	}
}

// segment is one piece of a flattened path in absolute page coordinates (y up).
type segment struct {
	op  byte // 'M', 'L', 'C', 'Z'
	pts [3][2]float64
}

// flatten turns a vg.Path drawn under m into absolute segments: arcs become cubic Béziers of at
// most a quarter turn, quadratic curves become cubic ones.
func flatten(p vg.Path, m affine) []segment {
	var out []segment
	var cx, cy float64 // current point, in path coordinates
	have := false
	to := func(op byte, pts ...[2]float64) {
		s := segment{op: op}
		for i, q := range pts {
			x, y := m.apply(q[0], q[1])
			s.pts[i] = [2]float64{x, y}
		}
		out = append(out, s)
	}
	for _, c := range p {
		x, y := c.Pos.X.Points(), c.Pos.Y.Points()
		switch c.Type {
		case vg.MoveComp:
			to('M', [2]float64{x, y})
			cx, cy, have = x, y, true
		case vg.LineComp:
			to('L', [2]float64{x, y})
			cx, cy, have = x, y, true
		case vg.CurveComp:
			switch len(c.Control) {
			case 1:
				qx, qy := c.Control[0].X.Points(), c.Control[0].Y.Points()
				to('C', [2]float64{cx + 2.0/3*(qx-cx), cy + 2.0/3*(qy-cy)}, [2]float64{x + 2.0/3*(qx-x), y + 2.0/3*(qy-y)}, [2]float64{x, y})
			case 2:
				to('C', [2]float64{c.Control[0].X.Points(), c.Control[0].Y.Points()}, [2]float64{c.Control[1].X.Points(), c.Control[1].Y.Points()}, [2]float64{x, y})
			}
			cx, cy, have = x, y, true
		case vg.ArcComp:
			r := c.Radius.Points()
			sx, sy := x+r*math.Cos(c.Start), y+r*math.Sin(c.Start)
			if !have {
				to('M', [2]float64{sx, sy})
			} else if sx != cx || sy != cy {
				to('L', [2]float64{sx, sy})
			}
			n := int(math.Ceil(math.Abs(c.Angle) / (math.Pi / 2)))
			step := c.Angle / float64(max(n, 1))
			k := 4.0 / 3 * math.Tan(step/4)
			a := c.Start
			for range n {
				s0, c0 := math.Sincos(a)
				s1, c1 := math.Sincos(a + step)
				to('C', [2]float64{x + r*(c0-k*s0), y + r*(s0+k*c0)}, [2]float64{x + r*(c1+k*s1), y + r*(s1-k*c1)}, [2]float64{x + r*c1, y + r*s1})
				a += step
			}
			cx, cy, have = x+r*math.Cos(a), y+r*math.Sin(a), true
		case vg.CloseComp:
			out = append(out, segment{op: 'Z'})
		}
	}
	return out
}

// glyphPath returns the outlines of str drawn with face at pt (its baseline's start), as a path
// in the canvas' coordinates, advancing and kerning as font.Face.Width measures.
func glyphPath(face font.Face, pt vg.Point, str string) vg.Path {
	f := face.Face
	var (
		buf   sfnt.Buffer
		upem  = fixed.Int26_6(f.UnitsPerEm())
		scale = face.Font.Size.Points() / float64(upem)
		x     = 0.0
		prev  sfnt.GlyphIndex
		p     vg.Path
	)
	at := func(q fixed.Point26_6) vg.Point {
		return vg.Point{X: pt.X + vg.Length((x+float64(q.X))*scale), Y: pt.Y - vg.Length(float64(q.Y)*scale)}
	}
	for i, r := range str {
		gi, err := f.GlyphIndex(&buf, r)
		if err != nil {
			continue
		}
		if i > 0 {
			if k, err := f.Kern(&buf, prev, gi, upem, 0); err == nil {
				x += float64(k)
			}
		}
		segs, err := f.LoadGlyph(&buf, gi, upem, nil)
		if err == nil {
			for _, s := range segs {
				switch s.Op {
				case sfnt.SegmentOpMoveTo:
					if len(p) > 0 {
						p.Close()
					}
					p.Move(at(s.Args[0]))
				case sfnt.SegmentOpLineTo:
					p.Line(at(s.Args[0]))
				case sfnt.SegmentOpQuadTo:
					p.QuadTo(at(s.Args[0]), at(s.Args[1]))
				case sfnt.SegmentOpCubeTo:
					p.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
				}
			}
			if len(segs) > 0 {
				p.Close()
			}
		}
		if adv, err := f.GlyphAdvance(&buf, gi, upem, 0); err == nil {
			x += float64(adv)
		}
		prev = gi
	}
	return p
}

// num writes a coordinate with two decimals at most (a hundredth of a point), which keeps files
// small and renders identical.
func num(v float64) string {
	v = math.Round(v*100) / 100
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// rgba returns a colour's non-premultiplied components.
func rgba(c color.Color) (r, g, b uint8, a float64) {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return n.R, n.G, n.B, float64(n.A) / 255
}

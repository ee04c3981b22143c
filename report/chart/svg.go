package chart

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// svgCanvas draws an SVG document that references its fonts instead of embedding them: text is
// a <text> element naming the font families (with metric-compatible alternatives) and carrying
// textLength, the width measured here, so any viewer lays each label out over exactly the room
// the figure gave it. Coordinates are absolute (no nested transforms), which also lets a test
// read every label's bounding box from the file.
type svgCanvas struct {
	states
	w, h  vg.Length
	fonts *fonts
	buf   bytes.Buffer
}

var _ vg.CanvasWriterTo = (*svgCanvas)(nil)

func newSVG(w, h vg.Length, f *fonts) *svgCanvas {
	c := &svgCanvas{states: newStates(), w: w, h: h, fonts: f}
	vg.Initialize(c)
	return c
}

func (c *svgCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

// page maps the canvas' y-up points to SVG's y-down ones.
func (c *svgCanvas) page() affine {
	return affine{a: 1, d: -1, f: c.h.Points()}.then(c.top().m)
}

func (c *svgCanvas) pathData(p vg.Path) string {
	var b strings.Builder
	for _, s := range flatten(p, c.page()) {
		b.WriteByte(s.op)
		n := map[byte]int{'M': 1, 'L': 1, 'C': 3}[s.op]
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(num(s.pts[i][0]) + "," + num(s.pts[i][1]))
		}
	}
	return b.String()
}

func colorAttrs(kind string, col color.Color) string {
	r, g, b, a := rgba(col)
	s := fmt.Sprintf(` %s="#%02x%02x%02x"`, kind, r, g, b)
	if a < 1 {
		s += fmt.Sprintf(` %s-opacity="%s"`, kind, num(a))
	}
	return s
}

func (c *svgCanvas) Stroke(p vg.Path) {
	st := c.top()
	if st.width <= 0 || len(p) == 0 {
		return
	}
	k := c.top().m.scale()
	fmt.Fprintf(&c.buf, `<path d="%s" fill="none"%s stroke-width="%s"`, c.pathData(p), colorAttrs("stroke", st.color), num(st.width.Points()*k))
	if len(st.dash) > 0 {
		ds := make([]string, len(st.dash))
		for i, d := range st.dash {
			ds[i] = num(d.Points() * k)
		}
		fmt.Fprintf(&c.buf, ` stroke-dasharray="%s" stroke-dashoffset="%s"`, strings.Join(ds, ","), num(st.dashO.Points()*k))
	}
	c.buf.WriteString("/>\n")
}

func (c *svgCanvas) Fill(p vg.Path) {
	if len(p) == 0 {
		return
	}
	fmt.Fprintf(&c.buf, `<path d="%s"%s/>`+"\n", c.pathData(p), colorAttrs("fill", c.top().color))
}

// FillString writes str as text in the face's family at pt, its baseline's start.
func (c *svgCanvas) FillString(face font.Face, pt vg.Point, str string) {
	// Viewers drop a text's leading and trailing spaces; the glyphs are placed and measured
	// without them instead.
	trimmed := strings.TrimLeft(str, " ")
	pt.X += face.Width(str) - face.Width(trimmed)
	str = strings.TrimRight(trimmed, " ")
	if str == "" {
		return
	}
	m := c.page().then(affine{a: 1, d: -1, e: pt.X.Points(), f: pt.Y.Points()}) // text runs y-down
	family := c.fonts.family[face.Font.Typeface]
	pos := fmt.Sprintf(`x="%s" y="%s"`, num(m.e), num(m.f))
	if m.a != 1 || m.b != 0 || m.c != 0 || m.d != 1 {
		pos = fmt.Sprintf(`transform="matrix(%s %s %s %s %s %s)"`, num4(m.a), num4(m.b), num4(m.c), num4(m.d), num(m.e), num(m.f))
	}
	fmt.Fprintf(&c.buf, `<text %s font-family="%s" font-size="%s" textLength="%s" lengthAdjust="spacingAndGlyphs"%s>%s</text>`+"\n",
		pos, family, num(face.Font.Size.Points()), num(face.Width(str).Points()), colorAttrs("fill", c.top().color), html.EscapeString(str))
}

// num4 writes a matrix coefficient to four decimals.
func num4(v float64) string {
	v = math.Round(v*1e4) / 1e4
	if v == 0 {
		v = 0
	}
	return fmt.Sprint(v)
}

func (c *svgCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return
	}
	x0, y0 := c.page().apply(rect.Min.X.Points(), rect.Max.Y.Points())
	x1, y1 := c.page().apply(rect.Max.X.Points(), rect.Min.Y.Points())
	fmt.Fprintf(&c.buf, `<image x="%s" y="%s" width="%s" height="%s" href="data:image/png;base64,%s"/>`+"\n",
		num(min(x0, x1)), num(min(y0, y1)), num(math.Abs(x1-x0)), num(math.Abs(y1-y0)), base64.StdEncoding.EncodeToString(b.Bytes()))
}

func (c *svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var out bytes.Buffer
	fmt.Fprintf(&out, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%spt" height="%spt" viewBox="0 0 %s %s">
`, num(c.w.Points()), num(c.h.Points()), num(c.w.Points()), num(c.h.Points()))
	out.Write(c.buf.Bytes())
	out.WriteString("</svg>\n")
	return out.WriteTo(w)
}

package chart

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// pdfCanvas draws a one-page PDF with text as glyph outlines: nothing to embed or subset, any
// script drawn, and the same shapes in every viewer (journals often ask for outlined fonts). The
// file carries no date, so the same figure gives the same bytes.
type pdfCanvas struct {
	states
	w, h    vg.Length
	content bytes.Buffer
	alphas  map[string]string // "ca 0.5" -> "/A0"
	images  [][]byte          // XObject streams: RGB, then the alpha soft mask
	imgSize [][2]int
}

var _ vg.CanvasWriterTo = (*pdfCanvas)(nil)

func newPDF(w, h vg.Length) *pdfCanvas {
	c := &pdfCanvas{states: newStates(), w: w, h: h, alphas: map[string]string{}}
	vg.Initialize(c)
	return c
}

func (c *pdfCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

func (c *pdfCanvas) path(p vg.Path) bool {
	segs := flatten(p, c.top().m)
	for _, s := range segs {
		switch s.op {
		case 'M':
			fmt.Fprintf(&c.content, "%s %s m\n", num(s.pts[0][0]), num(s.pts[0][1]))
		case 'L':
			fmt.Fprintf(&c.content, "%s %s l\n", num(s.pts[0][0]), num(s.pts[0][1]))
		case 'C':
			fmt.Fprintf(&c.content, "%s %s %s %s %s %s c\n", num(s.pts[0][0]), num(s.pts[0][1]), num(s.pts[1][0]), num(s.pts[1][1]), num(s.pts[2][0]), num(s.pts[2][1]))
		case 'Z':
			c.content.WriteString("h\n")
		}
	}
	return len(segs) > 0
}

// alpha selects the graphics state for a fill ("ca") or stroke ("CA") opacity.
func (c *pdfCanvas) alpha(op string, a float64) {
	key := op + " " + num(a)
	name, ok := c.alphas[key]
	if !ok {
		name = fmt.Sprintf("/A%d", len(c.alphas))
		c.alphas[key] = name
	}
	fmt.Fprintf(&c.content, "%s gs\n", name)
}

func (c *pdfCanvas) Stroke(p vg.Path) {
	st := c.top()
	if st.width <= 0 {
		return
	}
	r, g, b, a := rgba(st.color)
	k := st.m.scale()
	c.content.WriteString("q\n")
	c.alpha("CA", a)
	fmt.Fprintf(&c.content, "%s %s %s RG %s w\n", num(float64(r)/255), num(float64(g)/255), num(float64(b)/255), num(st.width.Points()*k))
	if len(st.dash) > 0 {
		ds := make([]string, len(st.dash))
		for i, d := range st.dash {
			ds[i] = num(d.Points() * k)
		}
		fmt.Fprintf(&c.content, "[%s] %s d\n", strings.Join(ds, " "), num(st.dashO.Points()*k))
	}
	if c.path(p) {
		c.content.WriteString("S\n")
	}
	c.content.WriteString("Q\n")
}

func (c *pdfCanvas) Fill(p vg.Path) {
	r, g, b, a := rgba(c.top().color)
	c.content.WriteString("q\n")
	c.alpha("ca", a)
	fmt.Fprintf(&c.content, "%s %s %s rg\n", num(float64(r)/255), num(float64(g)/255), num(float64(b)/255))
	if c.path(p) {
		c.content.WriteString("f\n")
	}
	c.content.WriteString("Q\n")
}

func (c *pdfCanvas) FillString(face font.Face, pt vg.Point, str string) {
	c.Fill(glyphPath(face, pt, str))
}

func (c *pdfCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	bounds := img.Bounds()
	var rgb, mask bytes.Buffer
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, a := rgba(img.At(x, y))
			rgb.Write([]byte{r, g, b})
			mask.WriteByte(byte(a*255 + 0.5))
		}
	}
	n := len(c.images) / 2
	c.images = append(c.images, rgb.Bytes(), mask.Bytes())
	c.imgSize = append(c.imgSize, [2]int{bounds.Dx(), bounds.Dy()})
	m := c.top().m.then(affine{a: (rect.Max.X - rect.Min.X).Points(), d: (rect.Max.Y - rect.Min.Y).Points(), e: rect.Min.X.Points(), f: rect.Min.Y.Points()})
	fmt.Fprintf(&c.content, "q %s %s %s %s %s %s cm /I%d Do Q\n", num4(m.a), num4(m.b), num4(m.c), num4(m.d), num(m.e), num(m.f), n)
}

func deflate(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

func (c *pdfCanvas) WriteTo(w io.Writer) (int64, error) {
	var out bytes.Buffer
	var offsets []int
	obj := func(body string, stream []byte) int {
		offsets = append(offsets, out.Len())
		n := len(offsets)
		fmt.Fprintf(&out, "%d 0 obj\n%s", n, body)
		if stream != nil {
			fmt.Fprintf(&out, "\nstream\n%s\nendstream", stream)
		}
		out.WriteString("\nendobj\n")
		return n
	}
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	// The page refers to objects written after it: content 4, info 5, then states and images.
	var gs []string
	keys := make([]string, 0, len(c.alphas))
	for k := range c.alphas {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return c.alphas[keys[i]] < c.alphas[keys[j]] })
	next := 6
	for _, k := range keys {
		gs = append(gs, fmt.Sprintf("%s %d 0 R", c.alphas[k], next))
		next++
	}
	var xo []string
	for i := range c.imgSize {
		xo = append(xo, fmt.Sprintf("/I%d %d 0 R", i, next))
		next += 2
	}
	res := fmt.Sprintf("/ExtGState << %s >>", strings.Join(gs, " "))
	if len(xo) > 0 {
		res += fmt.Sprintf(" /XObject << %s >>", strings.Join(xo, " "))
	}
	obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << %s >> /Contents 4 0 R >>",
		num(c.w.Points()), num(c.h.Points()), res), nil)
	z := deflate(c.content.Bytes())
	obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>", len(z)), z)
	obj("<< /Producer (jikken) /Creator (jikken) >>", nil)
	for _, k := range keys {
		op, a, _ := strings.Cut(k, " ")
		obj(fmt.Sprintf("<< /Type /ExtGState /%s %s >>", op, a), nil)
	}
	for i, sz := range c.imgSize {
		rgb, mask := deflate(c.images[2*i]), deflate(c.images[2*i+1])
		self := len(offsets) + 1
		obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /SMask %d 0 R /Length %d >>",
			sz[0], sz[1], self+1, len(rgb)), rgb)
		obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>",
			sz[0], sz[1], len(mask)), mask)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return out.WriteTo(w)
}

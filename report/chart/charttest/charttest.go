// Package charttest helps tests check figures from outside: the bounding box of every label of
// an SVG the chart package wrote, and whether this machine has the CJK font the tests need.
package charttest

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/report/chart"
)

// Text is a label of an SVG with its bounding box in the SVG's user units (y down).
type Text struct {
	Content                string
	MinX, MinY, MaxX, MaxY float64
}

// Ascent and Descent bound the ink of glyphs above and below the baseline, relative to the font
// size: Liberation Sans' own ascent and descent (0.905 and 0.212) bound all of its glyphs, and
// the ideographs of Noto Sans CJK stay within 0.88 and 0.12.
const (
	Ascent  = 0.905
	Descent = 0.212
)

// TextBoxes reads an SVG written by the chart package and returns its width, its height and every
// <text> element with its box: from the baseline's start over textLength, Ascent above it and
// Descent below, through the element's transform (a matrix) if any.
func TextBoxes(r io.Reader) (w, h float64, texts []Text, err error) {
	dec := xml.NewDecoder(r)
	var cur *Text
	var corners [4][2]float64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range t.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch t.Name.Local {
			case "svg":
				var vb [4]float64
				for i, f := range strings.Fields(attr["viewBox"]) {
					if i < 4 {
						vb[i], _ = strconv.ParseFloat(f, 64)
					}
				}
				w, h = vb[2], vb[3]
			case "text":
				m := [6]float64{1, 0, 0, 1, num(attr["x"]), num(attr["y"])}
				if tr := attr["transform"]; tr != "" {
					f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(tr, "matrix("), ")"))
					if len(f) != 6 {
						return 0, 0, nil, fmt.Errorf("text transform %q is not a matrix", tr)
					}
					for i := range m {
						m[i] = num(f[i])
					}
				}
				fs, tl := num(attr["font-size"]), num(attr["textLength"])
				for i, p := range [4][2]float64{{0, -Ascent * fs}, {tl, -Ascent * fs}, {0, Descent * fs}, {tl, Descent * fs}} {
					corners[i] = [2]float64{m[0]*p[0] + m[2]*p[1] + m[4], m[1]*p[0] + m[3]*p[1] + m[5]}
				}
				cur = &Text{MinX: corners[0][0], MaxX: corners[0][0], MinY: corners[0][1], MaxY: corners[0][1]}
				for _, c := range corners {
					cur.MinX, cur.MaxX = min(cur.MinX, c[0]), max(cur.MaxX, c[0])
					cur.MinY, cur.MaxY = min(cur.MinY, c[1]), max(cur.MaxY, c[1])
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.Content += string(t)
			}
		case xml.EndElement:
			if t.Name.Local == "text" && cur != nil {
				texts = append(texts, *cur)
				cur = nil
			}
		}
	}
	return w, h, texts, nil
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// Outside returns the texts whose box leaves the w × h canvas, described for a failure message.
func Outside(w, h float64, texts []Text) []string {
	var out []string
	for _, t := range texts {
		if t.MinX < 0 || t.MinY < 0 || t.MaxX > w || t.MaxY > h {
			out = append(out, fmt.Sprintf("%q at [%.1f, %.1f]-[%.1f, %.1f] leaves the %.1f x %.1f canvas", t.Content, t.MinX, t.MinY, t.MaxX, t.MaxY, w, h))
		}
	}
	return out
}

// Overlapping returns the pairs of texts whose boxes overlap, described for a failure message.
func Overlapping(texts []Text) []string {
	var out []string
	for i, a := range texts {
		for _, b := range texts[i+1:] {
			if a.MinX < b.MaxX && b.MinX < a.MaxX && a.MinY < b.MaxY && b.MinY < a.MaxY {
				out = append(out, fmt.Sprintf("%q and %q overlap", a.Content, b.Content))
			}
		}
	}
	return out
}

// HaveCJKFont reports whether a font that draws Japanese is where the chart package looks. Tests
// that need one skip without it, with the command that installs it, and fail under CI=true,
// where .ci/run installs it.
func HaveCJKFont(t testing.TB) {
	t.Helper()
	if os.Getenv("JIKKEN_FONT") != "" {
		return
	}
	for _, f := range chart.FallbackFontFiles {
		if _, err := os.Stat(f); err == nil {
			return
		}
	}
	msg := "no CJK font: apt-get install fonts-noto-cjk (or set JIKKEN_FONT to a font file that draws Japanese)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Lines returns the vertices of every stroked, unfilled path of an SVG the chart package wrote
// whose stroke width is width (in the SVG's user units, y down): the curves' median lines at 1.5.
func Lines(r io.Reader, width float64) ([][][2]float64, error) {
	dec := xml.NewDecoder(r)
	var out [][][2]float64
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "path" {
			continue
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		if attr["fill"] != "none" || num(attr["stroke-width"]) != width {
			continue
		}
		var line [][2]float64
		for _, f := range strings.FieldsFunc(attr["d"], func(r rune) bool { return r == 'M' || r == 'L' || r == ' ' }) {
			x, y, ok := strings.Cut(f, ",")
			if !ok {
				return nil, fmt.Errorf("path data %q: only M and L are read", attr["d"])
			}
			line = append(line, [2]float64{num(x), num(y)})
		}
		out = append(out, line)
	}
}

package chart_test

import (
	"bytes"
	"compress/zlib"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/report/chart/charttest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.svg with the actual output")

var groups = []chart.Group{
	{Name: "sgd", Values: []float64{0.31, 0.33, 0.29, 0.35, 0.30, 0.32}},
	{Name: "adam", Values: []float64{0.21, 0.20, 0.22, 0.19, 0.23, 0.18}},
	{Name: "rms", Values: []float64{0.25, 0.26, 0.21, 0.24, 0.27, 0.22}},
}

func figures(t *testing.T) map[string]*chart.Figure {
	t.Helper()
	box, err := chart.Box(chart.Style{}, "loss by algo", "loss", groups)
	if err != nil {
		t.Fatal(err)
	}
	curves, err := chart.Curves(chart.Style{}, "loss over steps", "step", "loss", []chart.Band{
		{Name: "sgd", Steps: []float64{0, 1, 2, 3}, Median: []float64{1, 0.7, 0.5, 0.4}, Q1: []float64{0.9, 0.6, 0.45, 0.35}, Q3: []float64{1.1, 0.8, 0.6, 0.45}},
		{Name: "adam", Steps: []float64{0, 1, 2, 3}, Median: []float64{1, 0.5, 0.3, 0.2}, Q1: []float64{0.95, 0.45, 0.25, 0.18}, Q3: []float64{1.05, 0.6, 0.35, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cd, err := chart.CD(chart.Style{}, "critical difference (alpha 0.05)", "mean rank (1 = best)",
		[]string{"sgd", "adam", "rms", "lbfgs", "newton"}, []float64{4.6, 1.3, 2.1, 3.5, 3.5}, 1.2)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*chart.Figure{"box": box, "curves": curves, "cd": cd}
}

// The SVGs are golden files: the same input draws the same file, so any change in a figure shows
// up as a diff to review (go test ./report/chart -update writes them and PNGs of them to look at).
func TestFiguresGolden(t *testing.T) {
	for name, f := range figures(t) {
		var svg bytes.Buffer
		if err := f.Write(&svg, "svg"); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name+".golden.svg")
		if *update {
			if err := os.WriteFile(path, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"png", "pdf"} {
				var b bytes.Buffer
				if err := f.Write(&b, format); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(os.TempDir(), "jikken-chart-"+name+"."+format), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./report/chart -update)", err)
		}
		if !bytes.Equal(svg.Bytes(), want) {
			t.Errorf("%s figure differs from %s", name, path)
		}
	}
}

// Every format renders the same bytes twice; SVG and PDF carry no font (the SVG names its
// families, the PDF draws glyph outlines), so they stay small.
func TestFormatsDeterministicAndSmall(t *testing.T) {
	for name, f := range figures(t) {
		for _, format := range chart.Formats {
			var a, b bytes.Buffer
			if err := f.Write(&a, format); err != nil {
				t.Fatal(err)
			}
			if err := figures(t)[name].Write(&b, format); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s %s: two renders differ", name, format)
			}
			switch format {
			case "png":
				if !bytes.HasPrefix(a.Bytes(), []byte("\x89PNG")) {
					t.Errorf("%s png is not a PNG", name)
				}
			case "svg":
				if bytes.Contains(a.Bytes(), []byte("@font-face")) || bytes.Contains(a.Bytes(), []byte("base64")) || a.Len() > 40_000 {
					t.Errorf("%s svg: %d bytes; it must reference fonts, not embed them", name, a.Len())
				}
				if !bytes.Contains(a.Bytes(), []byte(`font-family="'Liberation Sans', Arimo, Arial, Helvetica, sans-serif"`)) {
					t.Errorf("%s svg names no font family", name)
				}
			case "pdf":
				checkPDF(t, name, a.Bytes())
			}
		}
	}
}

// checkPDF checks the file's structure: a header, an xref table whose offsets point at the
// objects, a content stream that inflates, no font and no date.
func checkPDF(t *testing.T, name string, b []byte) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
		t.Fatalf("%s pdf: bad header or trailer", name)
	}
	if bytes.Contains(b, []byte("/Font")) || bytes.Contains(b, []byte("CreationDate")) || len(b) > 60_000 {
		t.Errorf("%s pdf: %d bytes, a font or a date inside", name, len(b))
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s pdf: no startxref", name)
	}
	xref := string(b[atoi(string(m[1])):])
	offsets := regexp.MustCompile(`(\d{10}) 00000 n`).FindAllStringSubmatch(xref, -1)
	for i, o := range offsets {
		if want := []byte(itoa(i+1) + " 0 obj"); !bytes.HasPrefix(b[atoi(o[1]):], want) {
			t.Errorf("%s pdf: xref entry %d points at %q", name, i+1, b[atoi(o[1]):atoi(o[1])+10])
		}
	}
	s := bytes.Index(b, []byte("stream\n"))
	e := bytes.Index(b, []byte("\nendstream"))
	zr, err := zlib.NewReader(bytes.NewReader(b[s+7 : e]))
	if err != nil {
		t.Fatalf("%s pdf: content stream: %v", name, err)
	}
	content, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(content, []byte(" c\n")) || !bytes.Contains(content, []byte("f\n")) {
		t.Errorf("%s pdf: content stream has no filled curves (the glyphs): %v", name, err)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// A Japanese name and a 40-character name, in a page-wide and a column-wide figure, in the box
// plot and the critical-difference diagram: every label stays inside the canvas and no two
// overlap. (docs/analysis.md: render them in Chromium to look.)
func TestLongAndJapaneseNamesFit(t *testing.T) {
	charttest.HaveCJKFont(t)
	long := "population-based-training-with-restarts"
	names := []string{"実験的最適化法", long, "adam", "sgd-momentum", "rms"}
	var gs []chart.Group
	for i, n := range names {
		gs = append(gs, chart.Group{Name: n, Values: []float64{float64(i), float64(i) + 0.5, float64(i) + 0.2}})
	}
	for _, s := range []chart.Style{{}, {Width: 8.5 * vg.Centimeter, Height: 7 * vg.Centimeter}, {FontSize: 14}} {
		box, err := chart.Box(s, "loss of "+long+" and 実験的最適化法 by algorithm", "loss", gs)
		if err != nil {
			t.Fatal(err)
		}
		natural := s
		natural.Height = 0 // the diagram is as tall as it needs
		cd, err := chart.CD(natural, "critical difference", "mean rank (1 = best)", names, []float64{1.2, 2.5, 2.9, 4.1, 4.3}, 1.4)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]*chart.Figure{"box": box, "cd": cd} {
			var svg bytes.Buffer
			if err := f.Write(&svg, "svg"); err != nil {
				t.Fatal(err)
			}
			w, h, texts, err := charttest.TextBoxes(bytes.NewReader(svg.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			all := ""
			for _, tx := range texts {
				all += tx.Content
			}
			if !strings.Contains(all, "実験的最適化法") || !strings.Contains(strings.ReplaceAll(all, " ", ""), long) {
				t.Errorf("%s %+v: the names are not all drawn: %q", name, s, all)
			}
			for _, o := range append(charttest.Outside(w, h, texts), charttest.Overlapping(texts)...) {
				t.Errorf("%s %+v: %s", name, s, o)
			}
			if !bytes.Contains(svg.Bytes(), []byte("Noto Sans CJK")) {
				t.Errorf("%s: the Japanese name's font family is not named", name)
			}
			for _, format := range []string{"png", "pdf"} {
				if err := f.Write(io.Discard, format); err != nil {
					t.Errorf("%s %s: %v", name, format, err)
				}
			}
		}
	}
}

func TestMissingFallbackFontIsAClearError(t *testing.T) {
	_, err := chart.Box(chart.Style{Font: "/nonexistent/font.ttc"}, "", "v", []chart.Group{{Name: "実験", Values: []float64{1}}})
	if err == nil || !strings.Contains(err.Error(), "apt-get install fonts-noto-cjk") || !strings.Contains(err.Error(), "--font FILE") {
		t.Errorf("err = %v; want a how-to", err)
	}
}

// A name with a character no installed font draws (an emoji) is still drawn, that character as
// a missing-glyph box, rather than failing the figure.
func TestPartlyDrawableName(t *testing.T) {
	charttest.HaveCJKFont(t)
	f, err := chart.Box(chart.Style{}, "", "v", []chart.Group{{Name: "実験 🧪", Values: []float64{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(io.Discard, "pdf"); err != nil {
		t.Fatal(err)
	}
}

func TestErrors(t *testing.T) {
	if _, err := chart.Box(chart.Style{}, "", "", nil); err == nil {
		t.Error("Box with no groups: want an error")
	}
	if _, err := chart.Box(chart.Style{}, "", "", []chart.Group{{Name: "a", Failed: 2}}); err == nil {
		t.Error("Box with nothing to draw: want an error")
	}
	if _, err := chart.Curves(chart.Style{}, "", "", "", []chart.Band{{Name: "a", Steps: []float64{1}, Median: []float64{1}}}); err == nil {
		t.Error("Curves with mismatched lengths: want an error")
	}
	if _, err := chart.CD(chart.Style{}, "", "", []string{"a"}, []float64{1}, 1); err == nil {
		t.Error("CD with one group: want an error")
	}
	if _, err := chart.CD(chart.Style{Height: vg.Centimeter}, "", "", []string{"a", "b", "c", "d", "e", "f"}, []float64{1, 2, 3, 4, 5, 6}, 1); err == nil ||
		!strings.Contains(err.Error(), "need a height of at least") {
		t.Errorf("CD in 1 cm: err = %v", err)
	}
	f, _ := chart.Box(chart.Style{}, "", "v", groups)
	if err := f.Write(&bytes.Buffer{}, "eps"); err == nil {
		t.Error("Write eps: want an error")
	}
}

// A group whose every trial failed has no box, but keeps its place and says so.
func TestBoxOfFailures(t *testing.T) {
	f, err := chart.Box(chart.Style{}, "", "v", []chart.Group{{Name: "a", Values: []float64{1, 2}}, {Name: "b", Failed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := f.Write(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), ">b (3 failed)</text>") {
		t.Errorf("the failed group's label is missing")
	}
}

func TestLogScaleWhenValuesSpanDecades(t *testing.T) {
	wide, err := chart.Box(chart.Style{}, "", "best", []chart.Group{{Name: "a", Values: []float64{1e-6, 1e-3}}, {Name: "b", Values: []float64{10, 4000}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := wide.Plot.Y.Scale.(plot.LogScale); !ok || wide.Plot.Y.Label.Text != "best (log scale)" {
		t.Errorf("values over 9 decades: scale %T, label %q; want a labelled log scale", wide.Plot.Y.Scale, wide.Plot.Y.Label.Text)
	}
	for name, vals := range map[string][]float64{"narrow": {1, 2, 500}, "zero": {0, 1, 1e6}} {
		f, err := chart.Box(chart.Style{}, "", "v", []chart.Group{{Name: "a", Values: vals}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.Plot.Y.Scale.(plot.LogScale); ok {
			t.Errorf("%s values %v: want a linear scale", name, vals)
		}
	}
	if err := wide.Write(io.Discard, "png"); err != nil {
		t.Errorf("rendering a log-scale plot: %v", err)
	}
}

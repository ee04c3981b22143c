package chart

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.svg with the actual output")

var groups = []Group{
	{"sgd", []float64{0.31, 0.33, 0.29, 0.35, 0.30, 0.32}},
	{"adam", []float64{0.21, 0.20, 0.22, 0.19, 0.23, 0.18}},
	{"rms", []float64{0.25, 0.26, 0.21, 0.24, 0.27, 0.22}},
}

func plots(t *testing.T) map[string]*plot.Plot {
	t.Helper()
	box, err := Box("loss by algo", "loss", groups)
	if err != nil {
		t.Fatal(err)
	}
	curves, err := Curves("loss over steps", "step", "loss", []Band{
		{"sgd", []float64{0, 1, 2, 3}, []float64{1, 0.7, 0.5, 0.4}, []float64{0.9, 0.6, 0.45, 0.35}, []float64{1.1, 0.8, 0.6, 0.45}},
		{"adam", []float64{0, 1, 2, 3}, []float64{1, 0.5, 0.3, 0.2}, []float64{0.95, 0.45, 0.25, 0.18}, []float64{1.05, 0.6, 0.35, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cd, err := CD("critical difference (alpha 0.05)", []string{"sgd", "adam", "rms", "lbfgs", "newton"}, []float64{4.6, 1.3, 2.1, 3.5, 3.5}, 1.2)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*plot.Plot{"box": box, "curves": curves, "cd": cd}
}

// The SVGs are golden files: gonum/plot renders identically for identical input, so any change
// in a plot shows up as a diff to review (go test ./report/chart -update, then look at them).
func TestPlotsGolden(t *testing.T) {
	for name, p := range plots(t) {
		var svg bytes.Buffer
		if err := render(&svg, p, "svg", Width, Height, false); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name+".golden.svg")
		if *update {
			if err := os.WriteFile(path, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var png bytes.Buffer
			if err := Write(&png, p, "png", Width, Height); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(os.TempDir(), "jikken-chart-"+name+".png"), png.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./report/chart -update)", err)
		}
		if !bytes.Equal(svg.Bytes(), want) {
			t.Errorf("%s plot differs from %s", name, path)
		}
	}
}

func TestPNGIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	p := plots(t)["box"]
	if err := Write(&a, p, "png", Width, Height); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, plots(t)["box"], "png", Width, Height); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || !bytes.HasPrefix(a.Bytes(), []byte("\x89PNG")) {
		t.Error("two renders of the same box plot differ or are not PNG")
	}
}

func TestSVGEmbedsFonts(t *testing.T) {
	var svg bytes.Buffer
	if err := Write(&svg, plots(t)["cd"], "svg", Width, Height); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg.Bytes(), []byte("@font-face")) {
		t.Error("SVG output does not embed its fonts; browsers would substitute wider ones and clip labels")
	}
}

func TestErrors(t *testing.T) {
	if _, err := Box("", "", nil); err == nil {
		t.Error("Box with no groups: want an error")
	}
	if _, err := Box("", "", []Group{{"a", nil}}); err == nil {
		t.Error("Box with an empty group: want an error")
	}
	if _, err := Curves("", "", "", []Band{{Name: "a", Steps: []float64{1}, Median: []float64{1}}}); err == nil {
		t.Error("Curves with mismatched lengths: want an error")
	}
	if _, err := CD("", []string{"a"}, []float64{1}, 1); err == nil {
		t.Error("CD with one group: want an error")
	}
	if err := Write(&bytes.Buffer{}, plot.New(), "pdf", Width, Height); err == nil {
		t.Error("Write pdf: want an error")
	}
}

func TestLogScaleWhenValuesSpanDecades(t *testing.T) {
	wide, err := Box("", "best", []Group{{"a", []float64{1e-6, 1e-3}}, {"b", []float64{10, 4000}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := wide.Y.Scale.(plot.LogScale); !ok || wide.Y.Label.Text != "best (log scale)" {
		t.Errorf("values over 9 decades: scale %T, label %q; want a labelled log scale", wide.Y.Scale, wide.Y.Label.Text)
	}
	for name, vals := range map[string][]float64{"narrow": {1, 2, 500}, "zero": {0, 1, 1e6}} {
		p, err := Box("", "v", []Group{{"a", vals}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Y.Scale.(plot.LogScale); ok {
			t.Errorf("%s values %v: want a linear scale", name, vals)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, wide, "png", Width, Height); err != nil {
		t.Errorf("rendering a log-scale plot: %v", err)
	}
}

func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range (decadeTicks{}).Ticks(3e-57, 4000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"1e-50", "1e-40", "1e-30", "1e-20", "1e-10", "1"}
	if len(labels) != len(want) {
		t.Fatalf("labels = %v; want %v", labels, want)
	}
	for i := range want {
		if labels[i] != want[i] {
			t.Fatalf("labels = %v; want %v", labels, want)
		}
	}
	var small []string
	for _, tk := range (decadeTicks{}).Ticks(0.005, 2000) {
		if tk.Label != "" {
			small = append(small, tk.Label)
		}
	}
	if got := strings.Join(small, " "); got != "0.001 0.01 0.1 1 10 100 1000 10000" {
		t.Errorf("labels = %q", got)
	}
}

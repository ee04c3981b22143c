package simplot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

const timeline = `time_s,util_cpu,util_nvidia.com/gpu,util_pods,pending,running
0,0.1,0.5,0.01,2,1
3600,0.2,1.0,0.02,1,2
7200,0.0,0.0,0.00,0,0
`

func TestCharts(t *testing.T) {
	tl, err := ReadTable(strings.NewReader(timeline))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := ReadTable(strings.NewReader("name,jct_s\na,100\nb,\nc,1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"utilisation": func(b *bytes.Buffer) error { return Utilisation(b, tl, "u") },
		"queue":       func(b *bytes.Buffer) error { return Queue(b, tl, "q") },
		"jct":         func(b *bytes.Buffer) error { return JCTCDF(b, pods, "j") },
	} {
		var a, b bytes.Buffer
		if err := draw(&a); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := png.Decode(bytes.NewReader(a.Bytes())); err != nil {
			t.Fatalf("%s: not a PNG: %v", name, err)
		}
		draw(&b)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renders differ", name)
		}
	}
	empty, _ := ReadTable(strings.NewReader("name,jct_s\na,\n"))
	if err := JCTCDF(&bytes.Buffer{}, empty, "j"); err == nil {
		t.Error("a CDF of no pods succeeded")
	}
}

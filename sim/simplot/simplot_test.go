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
	jobs, err := ReadTable(strings.NewReader(usersCSV))
	if err != nil {
		t.Fatal(err)
	}
	shares, err := ReadTable(strings.NewReader("time_s,gpu_amy,gpu_bob\n0,0.5,0.25\n60,0,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"utilisation": func(b *bytes.Buffer) error { return Utilisation(b, tl, "u") },
		"queue":       func(b *bytes.Buffer) error { return Queue(b, tl, "q") },
		"jct":         func(b *bytes.Buffer) error { return JCTCDF(b, pods, "j") },
		"users":       func(b *bytes.Buffer) error { return CDFs(b, "u", "x", ByUser(jobs, "wait_s", 1)) },
		"share":       func(b *bytes.Buffer) error { return UserShare(b, shares, "s") },
		"lines": func(b *bytes.Buffer) error {
			return Lines(b, "l", "x", "y", []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}, {Name: "b", X: []float64{0, 1}, Y: []float64{2, 1}}})
		},
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

const usersCSV = `name,user,wait_s,jct_s
a,bob,0,100
b,amy,5,
c,bob,10,300
d,amy,,
`

// ByUser groups a column by user in name order, skips empty cells and adds the offset.
func TestByUser(t *testing.T) {
	jobs, err := ReadTable(strings.NewReader(usersCSV))
	if err != nil {
		t.Fatal(err)
	}
	got := ByUser(jobs, "wait_s", 1)
	if len(got) != 2 || got[0].Name != "amy" || len(got[0].Values) != 1 || got[0].Values[0] != 6 ||
		got[1].Name != "bob" || len(got[1].Values) != 2 || got[1].Values[1] != 11 {
		t.Fatalf("ByUser = %+v", got)
	}
	if err := CDFs(&bytes.Buffer{}, "t", "x", ByUser(jobs, "jct_s", -1000)); err == nil {
		t.Error("a CDF of no positive values succeeded")
	}
}

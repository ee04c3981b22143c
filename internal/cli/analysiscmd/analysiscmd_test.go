package analysiscmd

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

const csv = `trial,status,algo,lr,seed,loss
t1,succeeded,a,0.1,1,0.5
t2,succeeded,b,0.1,1,0.3
t3,succeeded,a,0.1,2,0.6
t4,succeeded,b,0.1,2,0.2
t5,succeeded,a,0.1,3,0.55
t6,succeeded,b,0.1,3,0.25
`

func TestRunCompareFromStdin(t *testing.T) {
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(csv)
	f := &cmdutil.Factory{IO: ios, StoreURL: t.TempDir()}
	opts := &CompareOptions{Factory: f, Source: "-", Format: "json",
		Options: report.Options{By: "algo", Metric: "loss", Direction: report.LowerIsBetter, Alpha: 0.05}}
	if err := runCompare(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metric   string
		Pairwise []struct{ A, B, Test string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if doc.Metric != "loss" || len(doc.Pairwise) != 1 || doc.Pairwise[0].A != "a" || doc.Pairwise[0].Test != "mann-whitney-u" {
		t.Errorf("json = %s", out)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q; want nothing", errOut)
	}
}

func TestRunCompareUsageErrors(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IO: ios}
	for _, opts := range []*CompareOptions{
		{Factory: f, Source: "x.csv", Format: "yaml", Options: report.Options{By: "a", Metric: "b", Alpha: 0.05}},
		{Factory: f, Source: "x.csv", Format: "text", Options: report.Options{By: "a", Metric: "b", Alpha: 0}},
	} {
		if err := runCompare(context.Background(), opts); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
			t.Errorf("%+v: err = %v; want a usage error", opts, err)
		}
	}
}

func TestTestFlagsUsageErrors(t *testing.T) {
	for _, f := range []testFlags{
		{lower: true, higher: true, incomplete: "drop"},
		{alternative: "bigger", incomplete: "drop"},
		{failed: "worst", incomplete: "drop"},
		{lower: true, failed: "skip", incomplete: "drop"},
		{incomplete: "ignore"},
	} {
		var o report.Options
		if err := f.apply(&o); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
			t.Errorf("%+v: err = %v; want a usage error", f, err)
		}
	}
	f := testFlags{higher: true, alternative: "less", failed: "drop", incomplete: "error"}
	var o report.Options
	if err := f.apply(&o); err != nil || o.Direction != report.HigherIsBetter || o.Alternative != stats.Less || o.Failed != "drop" || o.Incomplete != "error" {
		t.Errorf("apply = %+v, %v", o, err)
	}
}

func TestParseLength(t *testing.T) {
	for in, want := range map[string]vg.Length{"16cm": 16 * vg.Centimeter, "85mm": 85 * vg.Millimeter, "3.5in": 3.5 * vg.Inch, "400pt": 400, " 8.5cm ": 8.5 * vg.Centimeter} {
		if got, err := parseLength("--width", in); err != nil || math.Abs(float64(got-want)) > 1e-9 {
			t.Errorf("parseLength(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"16", "cm", "-3cm", "0mm", "3furlongs", "1e9in", "300cm"} {
		if _, err := parseLength("--width", in); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
			t.Errorf("parseLength(%q): err = %v; want a usage error", in, err)
		}
	}
	if err := (&figureFlags{width: "16cm", fontSize: 2}).apply(&chart.Style{}); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
		t.Errorf("--font-size 2: err = %v; want a usage error", err)
	}
}

func TestIsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "results")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]bool{
		"-": true, "r.csv": true, "R.CSV": true, file: true, dir: false, "20260101-120000-demo": false, "latest": false,
	} {
		if got := isFile(arg); got != want {
			t.Errorf("isFile(%q) = %v; want %v", arg, got, want)
		}
	}
}

func TestChooseByAndMetrics(t *testing.T) {
	tb, err := results.ReadCSV(strings.NewReader(csv), "test")
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]bool{"algo": true, "lr": true, "seed": true}
	if by, note := chooseBy("", "", tb, params); by != "algo" || note != "" {
		t.Errorf("chooseBy = %q, %q; want algo (lr is constant, seed is not a group)", by, note)
	}
	if by, _ := chooseBy("lr", "", tb, params); by != "lr" {
		t.Errorf("an explicit --by must win, got %q", by)
	}
	if by, note := chooseBy("", "", tb, map[string]bool{}); by != "" || !strings.Contains(note, "no parameter varies") {
		t.Errorf("chooseBy without params = %q, %q", by, note)
	}
	tb.Rows[0][3] = "0.2"
	if _, note := chooseBy("", "", tb, params); !strings.Contains(note, "several parameters vary (algo, lr)") {
		t.Errorf("note = %q", note)
	}
	if by, note := chooseBy("", "lr,seed", tb, params); by != "algo" {
		t.Errorf("with --pair-by lr,seed: by = %q, note %q; want algo", by, note)
	}

	got, err := chooseMetrics(nil, report.LowerIsBetter, tb, params)
	if err != nil || !reflect.DeepEqual(got, []metricChoice{{"loss", report.LowerIsBetter}}) {
		t.Errorf("default metrics = %v, %v; want loss, lower is better", got, err)
	}
	got, err = chooseMetrics([]string{"loss:min", "acc:max", "f1"}, report.DirectionUnknown, tb, params)
	want := []metricChoice{{"loss", report.LowerIsBetter}, {"acc", report.HigherIsBetter}, {"f1", report.DirectionUnknown}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("metrics = %v, %v; want %v", got, err, want)
	}
	if _, err := chooseMetrics([]string{"loss:down"}, report.DirectionUnknown, tb, params); cmdutil.CodeOf(err) != cmdutil.ExitUsage {
		t.Errorf("loss:down: err = %v; want a usage error", err)
	}
}

// A figure too small for its labels is a usage error (exit 2), whatever the command.
func TestFigureTooSmallIsAUsageError(t *testing.T) {
	for _, f := range []figureFlags{
		{width: "2cm", fontSize: 10},
		{width: "16cm", height: "2cm", fontSize: 10},
		{width: "5cm", fontSize: 12},
	} {
		var s chart.Style
		if err := f.apply(&s); cmdutil.CodeOf(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "cannot hold") {
			t.Errorf("%+v: err = %v; want a usage error saying the labels do not fit", f, err)
		}
	}
	var s chart.Style
	if err := (&figureFlags{width: "8.5cm", fontSize: 10}).apply(&s); err != nil {
		t.Errorf("a paper's column: %v", err)
	}
}

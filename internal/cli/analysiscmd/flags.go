package analysiscmd

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot/vg"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/report"
	"github.com/jikken-dev/jikken/report/chart"
	"github.com/jikken-dev/jikken/stats"
)

// testFlags are the flags compare, plot and report share to say how groups are compared.
type testFlags struct {
	lower, higher bool
	alternative   string
	failed        string
	incomplete    string
}

func (f *testFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.lower, "lower-is-better", false, "smaller metric values are better (a loss, a runtime)")
	fl.BoolVar(&f.higher, "higher-is-better", false, "larger metric values are better (an accuracy, a reward)")
	fl.StringVar(&f.alternative, "alternative", "two-sided", "pairwise tests: two-sided, less or greater (the first group of a pair smaller or larger)")
	fl.StringVar(&f.failed, "failed", "", "failed trials and NaN/Inf values: worst (ranked below every value; the default when the direction is given) or drop (listed)")
	fl.StringVar(&f.incomplete, "incomplete", report.IncompleteDrop, "paired designs: drop blocks lacking a usable row for some group (listed, as R's friedman.test) or error")
}

// direction returns the direction the flags give, or a usage error when both are set.
func (f *testFlags) direction() (report.Direction, error) {
	switch {
	case f.lower && f.higher:
		return 0, cmdutil.UsageError("--lower-is-better and --higher-is-better contradict each other; give one")
	case f.lower:
		return report.LowerIsBetter, nil
	case f.higher:
		return report.HigherIsBetter, nil
	}
	return report.DirectionUnknown, nil
}

// apply checks the flags and sets them on opts; mistakes are usage errors.
func (f *testFlags) apply(opts *report.Options) error {
	dir, err := f.direction()
	if err != nil {
		return err
	}
	opts.Direction = dir
	switch f.alternative {
	case "two-sided", "two.sided", "":
		opts.Alternative = stats.TwoSided
	case "less":
		opts.Alternative = stats.Less
	case "greater":
		opts.Alternative = stats.Greater
	default:
		return cmdutil.UsageError("--alternative %q: use two-sided, less or greater", f.alternative)
	}
	switch f.failed {
	case "", report.FailedDrop:
	case report.FailedWorst:
		if dir == report.DirectionUnknown {
			return cmdutil.UsageError("--failed worst needs the metric's direction: add --lower-is-better or --higher-is-better")
		}
	default:
		return cmdutil.UsageError("--failed %q: use worst or drop", f.failed)
	}
	opts.Failed = f.failed
	if f.incomplete != report.IncompleteDrop && f.incomplete != report.IncompleteError {
		return cmdutil.UsageError("--incomplete %q: use drop or error", f.incomplete)
	}
	opts.Incomplete = f.incomplete
	return nil
}

// figureFlags are the size and lettering flags of plot and report.
type figureFlags struct {
	width, height string
	fontSize      float64
	font          string
}

func (f *figureFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.width, "width", "16cm", "figure width, with a unit: cm, mm, in or pt (8.5cm for a paper's column)")
	fl.StringVar(&f.height, "height", "", "figure height with a unit (default 10cm; a critical-difference diagram fits its content)")
	fl.Float64Var(&f.fontSize, "font-size", 10, "size of labels in points (titles are 1.2 times larger)")
	fl.StringVar(&f.font, "font", "", "font file for characters Liberation Sans lacks, e.g. CJK names (default: $JIKKEN_FONT, then Noto Sans CJK and system fonts)")
}

// apply checks the flags and sets the figure style they ask for; mistakes are usage errors.
func (f *figureFlags) apply(s *chart.Style) error {
	var err error
	if s.Width, err = parseLength("--width", f.width); err != nil {
		return err
	}
	if f.height != "" {
		if s.Height, err = parseLength("--height", f.height); err != nil {
			return err
		}
	}
	if f.fontSize < 4 || f.fontSize > 72 {
		return cmdutil.UsageError("--font-size %g: give a size in points between 4 and 72", f.fontSize)
	}
	s.FontSize, s.Font = vg.Length(f.fontSize), f.font
	if err := s.Check(); err != nil {
		return cmdutil.UsageError("--width %s --height %s --font-size %g: %v", f.width, orDefault(f.height, "10cm"), f.fontSize, err)
	}
	return nil
}

// parseLength reads a length such as 16cm, 85mm, 3.5in or 400pt.
func parseLength(flag, s string) (vg.Length, error) {
	units := []struct {
		suffix string
		unit   vg.Length
	}{{"cm", vg.Centimeter}, {"mm", vg.Millimeter}, {"in", vg.Inch}, {"pt", vg.Points(1)}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(strings.TrimSpace(s), u.suffix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f <= 0 || f > 1000 || vg.Length(f)*u.unit > 200*vg.Centimeter {
				break
			}
			return vg.Length(f) * u.unit, nil
		}
	}
	return 0, cmdutil.UsageError("%s %q: give a positive length with a unit, e.g. 16cm, 85mm, 3.5in or 400pt (at most 2 m)", flag, s)
}

// plotFlags are the figure controls of plot: the texts, the axes, the legend and the groups.
type plotFlags struct {
	title, xLabel, yLabel string
	logX, logY            bool
	legend                string
	order                 []string
	rename                []string
}

func (f *plotFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.title, "title", "", `figure title ("-" for none; default: what is drawn)`)
	fl.StringVar(&f.xLabel, "xlabel", "", `x axis label ("-" for none)`)
	fl.StringVar(&f.yLabel, "ylabel", "", `y axis label ("-" for none; default: the metric)`)
	fl.BoolVar(&f.logX, "log-x", false, "curves: steps or time on a log scale (all positive)")
	fl.BoolVar(&f.logY, "log-y", false, "metric on a log scale (all values positive)")
	fl.StringVar(&f.legend, "legend", chart.LegendAuto, "curves' legend: auto (a corner free of curves, else outside), inside, outside or none")
	fl.StringSliceVar(&f.order, "order", nil, "groups in this order, e.g. --order sgd,adam (the others follow)")
	fl.StringArrayVar(&f.rename, "rename", nil, "show a group under another name: OLD=NEW (repeatable)")
}

// apply sets the texts, axes and legend on s and returns the renaming asked; mistakes are usage
// errors.
func (f *plotFlags) apply(s *chart.Style) (map[string]string, error) {
	switch f.legend {
	case chart.LegendAuto, chart.LegendInside, chart.LegendOutside, chart.LegendNone:
	default:
		return nil, cmdutil.UsageError("--legend %q: use auto, inside, outside or none", f.legend)
	}
	s.Title, s.XLabel, s.YLabel, s.LogX, s.LogY, s.Legend = f.title, f.xLabel, f.yLabel, f.logX, f.logY, f.legend
	rename := map[string]string{}
	for _, r := range f.rename {
		old, to, ok := strings.Cut(r, "=")
		if !ok || old == "" || to == "" {
			return nil, cmdutil.UsageError("--rename %q: write OLD=NEW, e.g. --rename de=\"differential evolution\"", r)
		}
		rename[old] = to
	}
	return rename, nil
}

package analysiscmd

import (
	"github.com/spf13/pflag"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/report"
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

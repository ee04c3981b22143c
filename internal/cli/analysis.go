package cli

import "github.com/jikken-dev/jikken/internal/cli/analysiscmd"

func init() {
	register(analysiscmd.NewCompareCmd)
	register(analysiscmd.NewPlotCmd)
	register(analysiscmd.NewReportCmd)
}

package analysiscmd

import (
	"fmt"
	"io"

	"github.com/jikken-dev/jikken/report"
)

// warnLeftOut lists on stderr the rows ranked worst, the blocks and rows left out, for the
// machine-readable formats and the plots, whose stdout carries only the document (the JSON
// document lists them too).
func warnLeftOut(w io.Writer, c *report.Comparison) {
	for _, d := range c.Worst {
		fmt.Fprintf(w, "jikken: warning: ranked worst %s\n", d)
	}
	for _, b := range c.DroppedBlocks {
		fmt.Fprintf(w, "jikken: warning: left out block %s: %s\n", b.Block, b.Reason)
	}
	for _, d := range c.Dropped {
		fmt.Fprintf(w, "jikken: warning: left out %s\n", d)
	}
}

package analysiscmd

import (
	"fmt"
	"io"

	"github.com/jikken-dev/jikken/report"
)

// warnDropped lists left-out rows on stderr for the machine-readable formats, whose stdout
// carries only the documented document.
func warnDropped(w io.Writer, c *report.Comparison) {
	for _, d := range c.Dropped {
		fmt.Fprintf(w, "jikken: warning: left out %s\n", d)
	}
}

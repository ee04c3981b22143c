package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/jikken-dev/jikken/internal/progress"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// runProgress shows a run's progress: a redrawn status line on a terminal, or one plain line
// per trial that ends when output is piped.
type runProgress struct {
	line  *progress.Line
	tty   bool
	quiet bool
	width int
	start time.Time
	last  runner.Counts
}

func newProgress(w io.Writer, tty, quiet bool, width int) *runProgress {
	return &runProgress{line: progress.New(w, tty), tty: tty, quiet: quiet, width: width, start: time.Now()}
}

func (p *runProgress) event(ev runner.Event) {
	if p.quiet {
		return
	}
	p.last = ev.Counts
	// A running trial's reason says why the run waits for it (see core's waitsOnServers).
	if ev.Trial != "" && (ev.Status == store.Failed || ev.Status == store.Skipped || (ev.Status == store.Pending || ev.Status == store.Running) && ev.Reason != "") {
		p.line.Println(fmt.Sprintf("%-8s %s: %s", label(ev.Status), ev.Trial, ev.Reason))
	} else if !p.tty && ev.Trial != "" && ev.Status.Final() {
		p.line.Println(fmt.Sprintf("%-8s %s", label(ev.Status), ev.Trial))
	}
	if ev.Counts.Running == 0 {
		p.line.DrawNow(p.status())
	} else {
		p.line.Draw(p.status())
	}
}

func label(s store.Status) string {
	switch s {
	case store.Succeeded:
		return "ok"
	case store.Failed:
		return "FAILED"
	case store.Skipped:
		return "skipped"
	case store.Killed:
		return "killed"
	case store.Pending:
		return "retry"
	case store.Stopped:
		return "stopped"
	}
	return string(s)
}

// status is the status line: a bar when there is room, counts, elapsed time and ETA.
func (p *runProgress) status() string {
	c := p.last
	done := c.Succeeded + c.Failed + c.Skipped + c.Killed + c.Stopped + c.Pruned + c.Eliminated
	elapsed := time.Since(p.start)
	pruned := ""
	if c.Pruned > 0 {
		pruned = fmt.Sprintf("  pruned %d", c.Pruned)
	}
	if c.Eliminated > 0 {
		pruned += fmt.Sprintf("  eliminated %d", c.Eliminated)
	}
	s := fmt.Sprintf(" %d/%d  ok %d%s  failed %d  running %d  %s  ETA %s", done, c.Total, c.Succeeded, pruned, c.Failed+c.Skipped, c.Running,
		progress.Clock(elapsed), progress.ETA(done, c.Total, elapsed))
	return progress.Bar(done, c.Total, p.width-len(s)-3) + s
}

// finish ends the status line.
func (p *runProgress) finish() {
	if !p.quiet {
		p.line.Done(p.status())
	}
}

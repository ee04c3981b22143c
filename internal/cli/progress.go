package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// progress shows a run's progress: a redrawn status line on a terminal, or one plain line per
// trial that ends when output is piped.
type progress struct {
	w        io.Writer
	tty      bool
	quiet    bool
	width    int
	start    time.Time
	lastDraw time.Time
	last     runner.Counts
	drawn    bool
}

func newProgress(w io.Writer, tty, quiet bool, width int) *progress {
	return &progress{w: w, tty: tty, quiet: quiet, width: width, start: time.Now()}
}

func (p *progress) event(ev runner.Event) {
	if p.quiet {
		return
	}
	p.last = ev.Counts
	if ev.Trial != "" && (ev.Status == store.Failed || ev.Status == store.Skipped || (ev.Status == store.Pending && ev.Reason != "")) {
		p.clear()
		fmt.Fprintf(p.w, "%-8s %s: %s\n", label(ev.Status), ev.Trial, ev.Reason)
	} else if !p.tty && ev.Trial != "" && ev.Status.Final() {
		fmt.Fprintf(p.w, "%-8s %s\n", label(ev.Status), ev.Trial)
	}
	if p.tty && (time.Since(p.lastDraw) > 100*time.Millisecond || ev.Counts.Running == 0) {
		p.draw()
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
	}
	return string(s)
}

func (p *progress) clear() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *progress) draw() {
	c := p.last
	done := c.Succeeded + c.Failed + c.Skipped + c.Killed
	elapsed := time.Since(p.start)
	eta := "--:--"
	if done > 0 && done < c.Total {
		eta = clock(time.Duration(float64(elapsed) / float64(done) * float64(c.Total-done)))
	} else if done == c.Total {
		eta = "00:00"
	}
	status := fmt.Sprintf(" %d/%d  ok %d  failed %d  running %d  %s  ETA %s", done, c.Total, c.Succeeded, c.Failed+c.Skipped, c.Running, clock(elapsed), eta)
	barWidth := p.width - len(status) - 3
	if barWidth > 40 {
		barWidth = 40
	}
	bar := ""
	if barWidth >= 10 && c.Total > 0 {
		fill := barWidth * done / c.Total
		bar = "[" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "]"
	}
	fmt.Fprint(p.w, "\r\033[K"+bar+status)
	p.drawn = true
	p.lastDraw = time.Now()
}

// finish ends the status line.
func (p *progress) finish() {
	if p.tty && !p.quiet {
		p.draw()
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

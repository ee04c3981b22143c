package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Every is the shortest time between two redraws.
const Every = 100 * time.Millisecond

// Line is a status line on w. On a writer that is not a terminal every method does nothing but
// Println, which prints.
type Line struct {
	w     io.Writer
	tty   bool
	last  time.Time
	drawn bool
}

// New returns a Line on w; tty says whether w is a terminal.
func New(w io.Writer, tty bool) *Line { return &Line{w: w, tty: tty} }

// Draw shows s as the status line, unless it was redrawn less than Every ago.
func (l *Line) Draw(s string) {
	if l.tty && time.Since(l.last) >= Every {
		l.DrawNow(s)
	}
}

// DrawNow shows s as the status line.
func (l *Line) DrawNow(s string) {
	if !l.tty {
		return
	}
	fmt.Fprint(l.w, "\r\033[K"+s)
	l.drawn, l.last = true, time.Now()
}

// Println prints a line of its own above the status line (the status line comes back at the
// next Draw).
func (l *Line) Println(s string) {
	l.Clear()
	fmt.Fprintln(l.w, s)
}

// Clear removes the status line.
func (l *Line) Clear() {
	if l.tty && l.drawn {
		fmt.Fprint(l.w, "\r\033[K")
		l.drawn = false
	}
}

// Done shows s a last time and ends the line, so what follows starts below it.
func (l *Line) Done(s string) {
	if !l.tty {
		return
	}
	l.DrawNow(s)
	fmt.Fprintln(l.w)
	l.drawn = false
}

// Bar draws done of total as a bar at most width wide ("[=====     ]"), or "" when there is
// no room (under 10 columns) or no total.
func Bar(done, total, width int) string {
	width = min(width, 40)
	if width < 10 || total <= 0 {
		return ""
	}
	fill := width * min(done, total) / total
	return "[" + strings.Repeat("=", fill) + strings.Repeat(" ", width-fill) + "]"
}

// Clock writes d as mm:ss, or h:mm:ss from an hour on.
func Clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// ETA estimates the time left when done of total took elapsed: "--:--" before anything is done.
func ETA(done, total int, elapsed time.Duration) string {
	switch {
	case done >= total:
		return "00:00"
	case done <= 0:
		return "--:--"
	}
	return Clock(time.Duration(float64(elapsed) / float64(done) * float64(total-done)))
}

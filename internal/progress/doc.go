// Package progress is jikken's one progress renderer: a status line on a terminal, redrawn in
// place at most ten times a second, moved out of the way of lines printed above it, and never
// drawn when the output is not a terminal (scripts read plain lines instead).
package progress

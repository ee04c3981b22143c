// Package iostreams carries a command's input and output streams and knows whether they are
// terminals, so commands draw progress bars and colour only for a person, and tests swap the
// streams for buffers.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams is what a command reads from and writes to.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// OutTTY reports whether Out is a terminal: progress bars and tables padded for a screen are
	// drawn only then; otherwise output is plain lines a script can read.
	OutTTY bool
	// ErrTTY reports whether ErrOut is a terminal.
	ErrTTY bool
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

// Test returns streams backed by buffers (no terminal) and the buffers themselves.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// TerminalWidth returns the width of the terminal behind ErrOut, or 80.
func (s *IOStreams) TerminalWidth() int {
	if f, ok := s.ErrOut.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

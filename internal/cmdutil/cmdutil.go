// Package cmdutil holds what every jikken command shares: the factory that hands commands their
// streams and store, the documented exit codes, and output-format handling.
package cmdutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/iostreams"
)

// Exit codes, documented in `jikken --help` and docs/cli.md. One place maps errors to them.
const (
	ExitOK          = 0
	ExitFailure     = 1 // the command failed: bad input, unreachable store, ...
	ExitUsage       = 2 // wrong flags or arguments
	ExitTrialFailed = 3 // the run finished but some trials did not succeed
	ExitInterrupted = 130
)

// ExitError carries an exit code other than ExitError through cobra to main.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Silent is an ExitError whose message was already shown to the user.
func Silent(code int) error { return &ExitError{Code: code} }

// UsageError marks an error as a usage mistake (exit code 2).
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the exit code an error maps to.
func CodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}

// Factory hands commands what they need, so tests can build commands with buffers and temp dirs.
type Factory struct {
	IO *iostreams.IOStreams
	// StoreURL is the --store flag value after defaults (JIKKEN_STORE, then ./.jikken).
	StoreURL string
	// Executable is the path of the running jikken binary (for --detach and in-container executors).
	Executable string
}

// DefaultStoreURL returns JIKKEN_STORE or ./.jikken.
func DefaultStoreURL() string {
	if s := os.Getenv("JIKKEN_STORE"); s != "" {
		return s
	}
	return ".jikken"
}

// Format is an output format chosen with -o.
type Format string

// CheckFormat returns an error naming the allowed values when f is not one of them.
func CheckFormat(f string, allowed ...string) (Format, error) {
	for _, a := range allowed {
		if f == a {
			return Format(f), nil
		}
	}
	return "", UsageError("unknown output format %q; use one of %v", f, allowed)
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Execute runs root with args on ios and maps its outcome to an exit code, the one place the
// binaries do so: an error is printed as "name: message" unless already shown (Silent), and a
// plain failure after an interrupt is reported as ExitInterrupted.
func Execute(ctx context.Context, root *cobra.Command, ios *iostreams.IOStreams, name string, args []string) int {
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Err != nil {
		fmt.Fprintf(ios.ErrOut, "%s: %v\n", name, err)
	}
	if ctx.Err() != nil && CodeOf(err) == ExitFailure {
		return ExitInterrupted
	}
	return CodeOf(err)
}

// ParseAge reads an age given on the command line: an optional leading count of weeks or days
// ("2w", "30d", "1.5d") followed by, or instead of, a Go duration ("1d12h", "12h", "90m").
// Empty, negative, NaN and absurdly long ages are errors that say how to write one.
func ParseAge(s string) (time.Duration, error) {
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("age %q %s; write e.g. 30d, 2w, 1d12h or 90m", s, why)
	}
	if s == "" {
		return bad("is empty")
	}
	units, rest := 0.0, s
	if i := strings.IndexAny(s, "dw"); i >= 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || !(n >= 0) { // NaN too
			return bad("does not start with a count of days or weeks")
		}
		day := 24 * float64(time.Hour)
		if s[i] == 'w' {
			day *= 7
		}
		units, rest = n*day, s[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return bad("is not a duration")
		}
	}
	if d < 0 {
		return bad("is negative")
	}
	total := units + float64(d)
	if total >= math.MaxInt64 {
		return bad("is too long")
	}
	return time.Duration(total), nil
}

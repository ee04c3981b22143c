package cmdutil

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/iostreams"
)

func TestExecuteMapsErrorsToExitCodes(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		cancel  bool
		code    int
		printed string
	}{
		{"success", nil, false, ExitOK, ""},
		{"failure", errors.New("boom"), false, ExitFailure, "tool: boom\n"},
		{"usage", UsageError("bad flag %q", "x"), false, ExitUsage, "tool: bad flag \"x\"\n"},
		{"already reported", Silent(ExitTrialFailed), false, ExitTrialFailed, ""},
		{"failure after interrupt", errors.New("context canceled"), true, ExitInterrupted, "tool: context canceled\n"},
		{"specific code kept after interrupt", Silent(ExitTrialFailed), true, ExitTrialFailed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			root := &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true,
				RunE: func(*cobra.Command, []string) error { return c.err }}
			ios, _, _, errOut := iostreams.Test()
			if got := Execute(ctx, root, ios, "tool", nil); got != c.code {
				t.Errorf("exit code %d, want %d", got, c.code)
			}
			if got := errOut.String(); got != c.printed {
				t.Errorf("stderr %q, want %q", got, c.printed)
			}
		})
	}
	// An unknown flag is a usage error once the root maps flag errors (as jikken's does).
	root := &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true, RunE: func(*cobra.Command, []string) error { return nil }}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError("%v", err) })
	ios, _, _, errOut := iostreams.Test()
	if got := Execute(context.Background(), root, ios, "tool", []string{"--nope"}); got != ExitUsage || !strings.Contains(errOut.String(), "unknown flag: --nope") {
		t.Fatalf("unknown flag: exit %d, stderr %q", got, errOut.String())
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "30d", want: 30 * 24 * time.Hour},
		{in: "1.5d", want: 36 * time.Hour},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "12h", want: 12 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "0s", want: 0},
		{in: "nonsense", bad: true},
		{in: "d", bad: true},
		{in: "-1d", bad: true},
		{in: "-3h", bad: true},
		{in: "3dd", bad: true},
		{in: "30", bad: true},
		{in: "", bad: true},
		{in: "NaNd", bad: true},
		{in: "1e300d", bad: true},
		{in: "2w", want: 14 * 24 * time.Hour},
		{in: "1w2d", bad: true},
	} {
		got, err := ParseAge(tc.in)
		if tc.bad != (err != nil) || got != tc.want && !tc.bad {
			t.Errorf("ParseAge(%q) = %v, %v; want %v (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "12h", "nonsense", "-1d", "1e300d", "Infd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseAge(s); err == nil && d < 0 {
			t.Errorf("ParseAge(%q) = %v, a negative age", s, d)
		}
	})
}

package cmdutil

import (
	"context"
	"errors"
	"strings"
	"testing"

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

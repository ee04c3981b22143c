package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
)

func newLogsCmd(f *cmdutil.Factory) *cobra.Command {
	var follow, stderr bool
	cmd := &cobra.Command{
		Use:   "logs RUN TRIAL",
		Short: "Print a trial's output",
		Long: `Logs prints what TRIAL of RUN wrote to stdout (or stderr with --stderr): from the store once the
attempt has ended, or from the running attempt's file while it runs. With -f it keeps printing
until the trial ends.`,
		Example: `  jikken logs latest build
  jikken logs latest run-ga-sphere-s3 --stderr
  jikken logs 20261122-101500-sweep train-0 -f`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, id, err := resolveRun(ctx, f, args[0])
			if err != nil {
				return err
			}
			m, err := runs.Manifest(ctx, id)
			if err != nil {
				return err
			}
			trial := args[1]
			known := false
			for _, t := range m.Trials {
				known = known || t.Name == trial
			}
			if !known {
				return fmt.Errorf("run %s has no trial %q; list them with 'jikken status %s --all'", id, trial, id)
			}
			name := "stdout.log"
			if stderr {
				name = "stderr.log"
			}
			return printLogs(ctx, f, runs, id, trial, name, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the trial ends")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	return cmd
}

func printLogs(ctx context.Context, f *cmdutil.Factory, runs store.Runs, run, trial, name string, follow bool) error {
	for {
		rec, err := runs.Trial(ctx, run, trial)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		host, _ := os.Hostname()
		if rec != nil && rec.Live != nil && rec.Live.Dir != "" && rec.Live.Host == host {
			if lf, err := os.Open(filepath.Join(rec.Live.Dir, name)); err == nil {
				return tail(ctx, f.IO.Out, lf, follow, func() bool {
					r, err := runs.Trial(ctx, run, trial)
					return err != nil || r.Live == nil || r.Live.Attempt != rec.Live.Attempt
				})
			}
		}
		data, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(run, trial, name))
		switch {
		case err == nil:
			_, err = f.IO.Out.Write(data)
			return err
		case !errors.Is(err, store.ErrNotFound):
			return err
		case !follow:
			return fmt.Errorf("trial %s of %s has no %s yet (it has not run)", trial, run, name)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// tail copies r to w; when follow is set it keeps reading new data until ended reports true.
// The open file stays readable after the runner moves it into the store.
func tail(ctx context.Context, w io.Writer, r *os.File, follow bool, ended func() bool) error {
	defer r.Close()
	for {
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		if ended() {
			_, err := io.Copy(w, r)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(300 * time.Millisecond):
		}
	}
}

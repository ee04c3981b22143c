package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
)

func newLogsCmd(f *cmdutil.Factory) *cobra.Command {
	var follow, stderr bool
	var attempt int
	cmd := &cobra.Command{
		Use:   "logs RUN TRIAL",
		Short: "Print a trial's output",
		Long: `Logs prints what TRIAL of RUN wrote to stdout (or stderr with --stderr): from the store once the
attempt has ended, or from the running attempt's file while it runs. With -f it keeps printing
until the trial ends, or until no runner works on the run any more.

Every attempt's logs are kept: --attempt N prints those of attempt N (a retry replaces the
trial's outputs, not the logs of the attempts before it).`,
		Example: `  jikken logs latest build
  jikken logs latest run-ga-sphere-s3 --stderr
  jikken logs latest flaky-step --attempt 1
  jikken logs 20261122-101500-sweep train-0 -f`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if attempt < 0 {
				return cmdutil.UsageError("--attempt must be 1 or more")
			}
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
				// A trial a search added is named by its record only.
				recs, err := runs.Trials(ctx, id)
				known = err == nil && recs[trial] != nil
			}
			if !known {
				return fmt.Errorf("run %s has no trial %q; list them with 'jikken status %s --all'", id, trial, id)
			}
			name := "stdout.log"
			if stderr {
				name = "stderr.log"
			}
			if attempt > 0 {
				return printAttemptLogs(ctx, f, runs, id, trial, name, attempt, follow)
			}
			return printLogs(ctx, f, runs, id, trial, name, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the trial ends")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().IntVar(&attempt, "attempt", 0, "print the logs of attempt N (default: the latest)")
	return cmd
}

// printAttemptLogs prints the logs of one attempt: the trial's own logs when it is the latest,
// else those kept under attempts/N/.
func printAttemptLogs(ctx context.Context, f *cmdutil.Factory, runs store.Runs, run, trial, name string, n int, follow bool) error {
	rec, err := runs.Trial(ctx, run, trial)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("trial %s of %s has not run", trial, run)
		}
		return err
	}
	last := 0
	if k := len(rec.Attempts); k > 0 {
		last = rec.Attempts[k-1].N
	}
	if n > last {
		return fmt.Errorf("trial %s of %s has %d attempt(s); --attempt takes 1 to %d", trial, run, last, max(last, 1))
	}
	if n == last {
		return printLogs(ctx, f, runs, run, trial, name, follow)
	}
	data, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(run, trial, path.Join("attempts", strconv.Itoa(n), name)))
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("attempt %d of %s in %s left no %s (runs from before jikken kept every attempt's logs have only the latest)", n, trial, run, name)
	}
	if err != nil {
		return err
	}
	_, err = f.IO.Out.Write(data)
	return err
}

func printLogs(ctx context.Context, f *cmdutil.Factory, runs store.Runs, run, trial, name string, follow bool) error {
	host, _ := os.Hostname()
	for {
		rec, err := runs.Trial(ctx, run, trial)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if rec != nil && rec.Live != nil && rec.Live.Dir != "" && rec.Live.Host == host {
			if lf, err := os.Open(filepath.Join(rec.Live.Dir, name)); err == nil {
				return tail(ctx, f.IO.Out, lf, follow, func() bool {
					r, err := runs.Trial(ctx, run, trial)
					return err != nil || r.Live == nil || r.Live.Attempt != rec.Live.Attempt || !runnerAlive(ctx, runs, run, host)
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
		case rec != nil && ended(rec):
			return missingLog(runs.Blob, run, rec, name)
		case !follow:
			return fmt.Errorf("trial %s of %s has no %s yet (it has not run)", trial, run, name)
		case !runnerAlive(ctx, runs, run, host):
			return fmt.Errorf("trial %s of %s has no %s, and no runner works on the run; start it with 'jikken resume %s'", trial, run, name, run)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ended reports whether a trial's record is final and names an attempt that ran.
func ended(rec *store.TrialRecord) bool {
	switch rec.Status {
	case store.Succeeded, store.Failed, store.Killed, store.Pruned, store.Eliminated:
		return len(rec.Attempts) > 0
	}
	return false
}

// missingLog explains a log the store lacks for a trial that ran: the attempt ended without it
// reaching the store (on a cluster, the executor in the pod uploads it, and the pod's own log
// goes with its Job), so following or resuming would not bring it.
func missingLog(blob store.Blob, run string, rec *store.TrialRecord, name string) error {
	a := rec.Attempts[len(rec.Attempts)-1]
	how := string(rec.Status)
	if rec.ExitCode != nil {
		how += fmt.Sprintf(" with exit status %d", *rec.ExitCode)
	}
	why := "the attempt ended without it reaching the store"
	if lost := descriptorOf(rec.Backend).LostLog; lost != "" {
		why = lost
	}
	return fmt.Errorf("trial %s of %s %s (attempt %d on %s) but the store has no %s: %s; what it stored is in %s",
		rec.Name, run, how, a.N, rec.Backend, name, why, trialLocation(blob, run, rec.Name))
}

// trialLocation is where a trial's files are in the store, as a user would look for them.
func trialLocation(blob store.Blob, run, trial string) string {
	loc, key := blob.Location(), store.TrialKey(run, trial, "")
	if strings.Contains(loc, "://") {
		return strings.TrimSuffix(loc, "/") + "/" + key + "/"
	}
	return filepath.Join(loc, filepath.FromSlash(key)) + string(filepath.Separator)
}

// runnerAlive reports whether a runner works on run, or may still: a live process on this
// host, a lock held from another host (whose process cannot be checked from here), or a run
// that no runner has started yet (a detached one takes a moment).
func runnerAlive(ctx context.Context, runs store.Runs, run, host string) bool {
	li, err := runs.LockHolder(ctx, run)
	if err != nil {
		return true // cannot tell: keep following
	}
	if li != nil {
		return li.Host != host || store.HolderAlive(li, host)
	}
	// Without a lock, a run whose state is recorded has no runner (it ended, or its runner died).
	if _, err := runs.State(ctx, run); errors.Is(err, store.ErrNotFound) {
		m, err := runs.Manifest(ctx, run)
		return err == nil && time.Since(m.Created) < time.Minute
	}
	return false
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

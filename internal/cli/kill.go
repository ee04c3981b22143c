package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

func newKillCmd(f *cmdutil.Factory) *cobra.Command {
	var settings backendSettings
	cmd := &cobra.Command{
		Use:   "kill RUN|FILE",
		Short: "Stop a run: its runner and every trial it started",
		Long: `Kill stops RUN: it asks the run's runner to stop (the runner kills its trials and records them
as killed), or, when the runner is gone, stops the trials it left running itself. Given an
experiment FILE, it stops every unfinished run of that file. Runs are found in the store, never
by evaluating the file again. Resume later with 'jikken resume RUN'.`,
		Example: `  jikken kill latest
  jikken kill experiments/sweep.jsonnet`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			runs, err := openRuns(ctx, f)
			if err != nil {
				return err
			}
			ids, err := killTargets(ctx, runs, args[0])
			if err != nil {
				return err
			}
			for _, id := range ids {
				if m, err := runs.Manifest(ctx, id); err == nil {
					if err := exportedRun(m); err != nil {
						return err
					}
				}
				n, err := killRun(ctx, f, runs, id, settings)
				if err != nil {
					return fmt.Errorf("kill %s: %w", id, err)
				}
				fmt.Fprintf(f.IO.Out, "killed run %s (%d trials stopped)\n", id, n)
			}
			return nil
		},
	}
	settings.addFlags(cmd, false)
	return cmd
}

// killTargets resolves a run reference, or the unfinished runs of an experiment file.
func killTargets(ctx context.Context, runs store.Runs, arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if err != nil || st.IsDir() {
		id, err := runs.Resolve(ctx, arg)
		if err != nil {
			return nil, err
		}
		return []string{id}, nil
	}
	abs, _ := filepath.Abs(arg)
	all, err := runs.RunIDs(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, id := range all {
		m, err := runs.Manifest(ctx, id)
		if err != nil || m.File != abs || runner.ExportOf(m.Backend) != nil {
			continue
		}
		if s, err := runs.State(ctx, id); err == nil && s.Status != store.Running {
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no unfinished run of %s in %s", arg, runs.Blob.Location())
	}
	return ids, nil
}

// killRun stops one run and returns how many trials it stopped.
func killRun(ctx context.Context, f *cmdutil.Factory, runs store.Runs, id string, s backendSettings) (int, error) {
	host, _ := os.Hostname()
	holder, err := runs.LockHolder(ctx, id)
	if err != nil {
		return 0, err
	}
	before, _ := runs.Trials(ctx, id)
	running := 0
	for _, r := range before {
		if r.Status == store.Running {
			running++
		}
	}
	if store.HolderAlive(holder, host) {
		// The runner records the kill itself; wait for it to let go of the run.
		if err := signalProcess(holder.PID, syscall.SIGTERM); err != nil {
			return 0, fmt.Errorf("signal runner pid %d: %w", holder.PID, err)
		}
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if h, _ := runs.LockHolder(ctx, id); h == nil {
				return running, nil
			}
		}
		return running, fmt.Errorf("runner pid %d did not stop within 30s", holder.PID)
	}
	if holder != nil && holder.Host != host {
		return 0, fmt.Errorf("the runner is on %s (pid %d); run kill there", holder.Host, holder.PID)
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return 0, err
	}
	backend, err := openBackend(ctx, f, runs.Blob, m.Backend, s.over(m.Backend, m.Options.Backend))
	if err != nil {
		return 0, err
	}
	live, err := backend.Live(ctx, id)
	if err != nil {
		return 0, err
	}
	for _, lt := range live {
		if err := backend.StopLive(ctx, lt); err != nil {
			return 0, err
		}
	}
	now := time.Now().UTC()
	for _, rec := range before {
		if rec.Status == store.Running || rec.Live != nil {
			rec.Status, rec.Reason, rec.Live, rec.Finished = store.Killed, "killed by 'jikken kill' after its runner died", nil, &now
			if err := runs.WriteTrial(ctx, rec); err != nil {
				return 0, err
			}
		}
	}
	if s, err := runs.State(ctx, id); err == nil && s.Status == store.Running {
		s.Status, s.Finished, s.Runner = store.Killed, &now, nil
		if err := runs.WriteState(ctx, id, s); err != nil {
			return 0, err
		}
	}
	_ = runs.Blob.Delete(context.WithoutCancel(ctx), store.RunKey(id, "lock"))
	return len(live), nil
}

// signalProcess sends sig to the process pid.
func signalProcess(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}

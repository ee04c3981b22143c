package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/cmdutil/expflags"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

type extendOptions struct {
	f      *cmdutil.Factory
	seeds  string
	file   string
	dryRun bool
	detach bool
	exp    expflags.Flags
	rf     resumeFlags
}

func newExtendCmd(f *cmdutil.Factory) *cobra.Command {
	o := &extendOptions{f: f}
	cmd := &cobra.Command{
		Use:   "extend RUN",
		Short: "Add trials to a run and run them, keeping its id",
		Long: `Extend adds trials to the plan of RUN and runs them on the run's backend and store, so
that one run id holds every seed of a comparison.

With --seeds, every matrix that has seeds gets those seeds too (30..59 adds 30 seeds to each
group). Otherwise the experiment is evaluated again: by default the sources the run recorded
(with --ext-str and --tla-str over the recorded ones, so --tla-str seeds=60 asks for more), or
the file --file names. Only additions are allowed: when an existing trial's definition would
change, or a trial would go, extend names the trial and the field and adds nothing. Seeds that
a matrix already has are refused too. A trial that waits (after) for a grown matrix group, such
as a step comparing the group, runs again once the new trials have.

The grown plan is recorded before any trial starts, so a crash at any point leaves a run that
'jikken resume' completes. Then only the added trials run: the run's own trials stand as they
ended ('jikken resume' reruns those that did not succeed). A run still running (a live runner
holds its lock) is not extended.

RUN is a run id, a unique prefix of one, or "latest".`,
		Example: `  jikken extend latest --seeds 30..59
  jikken extend latest --tla-str seeds=60
  jikken extend 20261122-101500-sweep --file sweep.jsonnet --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExtend(cmd.Context(), cmd, o, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.seeds, "seeds", "", "add these seeds to every matrix with seeds: numbers and ranges, such as 30..59 or 5,7,10..12")
	fl.StringVar(&o.file, "file", "", "evaluate this experiment file instead of the sources the run recorded")
	fl.BoolVar(&o.dryRun, "dry-run", false, "say what would be added, and add nothing")
	fl.BoolVar(&o.detach, "detach", false, "run the added trials in the background and print the run id")
	o.exp.Add(cmd)
	o.rf.add(cmd)
	return cmd
}

func runExtend(ctx context.Context, cmd *cobra.Command, o *extendOptions, ref string) error {
	if o.seeds != "" && (o.file != "" || len(o.exp.ExtStr) > 0 || len(o.exp.TLAStr) > 0) {
		return cmdutil.UsageError("--seeds adds seeds to the recorded plan; it does not go with --file, --ext-str or --tla-str")
	}
	runs, id, err := resolveRun(ctx, o.f, ref)
	if err != nil {
		return err
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return err
	}
	if err := exportedRun(m); err != nil {
		return err
	}
	next, err := o.grownPlan(ctx, m)
	var verr *experiment.ValidationError
	if errors.As(err, &verr) {
		// A refusal like the others: exit 2, nothing added.
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	}
	if err != nil {
		return err
	}
	g, err := experiment.Extend(m.Trials, next.Trials)
	var ce *experiment.ChangeError
	if errors.As(err, &ce) {
		return cmdutil.UsageError("extend %s: %w", id, err)
	}
	if err != nil {
		return err
	}
	if len(g.Added) == 0 {
		return cmdutil.UsageError("extend %s: the new plan adds no trial to the run's %d; pass --seeds, --tla-str or an edited --file", id, len(m.Trials))
	}
	ios := o.f.IO
	fmt.Fprintf(ios.ErrOut, "extend %s: %d trials added (%s), %d in all", id, len(g.Added), brief(g.Added), len(g.Trials))
	if len(g.Rerun) > 0 {
		fmt.Fprintf(ios.ErrOut, "; %d run again after them (%s)", len(g.Rerun), brief(g.Rerun))
	}
	fmt.Fprintln(ios.ErrOut)
	if o.dryRun {
		return nil
	}
	if err := runner.Extend(ctx, runs, m, next, g, o.seeds); err != nil {
		if errors.Is(err, runner.ErrRunning) {
			return cmdutil.UsageError("%w", err)
		}
		return err
	}
	if o.detach {
		backend := o.rf.backendName
		if backend == "" {
			backend = next.Backend
		}
		s := o.rf.settings.over(next.Backend, next.Options.Backend)
		return detach(o.f, runs, next, backend, s, o.rf.eo.host.GPUsBusy)
	}
	// Only the added trials run: the run's own trials stand as they ended (resume reruns those
	// that did not succeed), except those extend set to run again and those a killed runner left.
	keep := make(map[string]bool, len(m.Trials))
	for _, t := range m.Trials {
		keep[t.Name] = !slices.Contains(g.Rerun, t.Name)
	}
	return o.rf.resume(ctx, o.f, cmd, runs, next, keep)
}

// grownPlan is the run's manifest with the plan the new evaluation gives (its Trials are that
// plan, to be checked against the run's).
func (o *extendOptions) grownPlan(ctx context.Context, m *store.Manifest) (*store.Manifest, error) {
	next := *m
	if o.seeds != "" {
		seeds, err := experiment.ParseSeeds(o.seeds)
		if err != nil {
			return nil, cmdutil.UsageError("--seeds: %w", err)
		}
		ev, err := experiment.WithSeeds(m.Evaluated, seeds)
		if err != nil {
			return nil, cmdutil.UsageError("extend %s: %w", m.RunID, err)
		}
		exp, err := experiment.ParseMax(m.File, ev, o.exp.MaxTrials)
		if err != nil {
			return nil, err
		}
		next.Evaluated, next.Trials = exp.Evaluated, exp.Trials
		return &next, nil
	}
	opts, err := o.exp.Options(o.f)
	if err != nil {
		return nil, err
	}
	ext, tla := maps.Clone(m.Options.ExtStr), maps.Clone(m.Options.TLAStr)
	opts.ExtStr, opts.TLAStr = over(ext, opts.ExtStr), over(tla, opts.TLAStr)
	opts.RunID = m.RunID
	file := o.file
	if file == "" {
		dir, err := os.MkdirTemp("", "jikken-extend-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if file, err = writeSources(dir, m); err != nil {
			return nil, fmt.Errorf("extend %s: %w", m.RunID, err)
		}
	}
	exp, err := experiment.Load(file, opts)
	if err != nil {
		return nil, err
	}
	printWarnings(o.f.IO.ErrOut, exp.Warnings)
	next.Sources, next.Evaluated, next.Trials = exp.Sources, exp.Evaluated, exp.Trials
	next.Options.ExtStr, next.Options.TLAStr = opts.ExtStr, opts.TLAStr
	if o.file != "" {
		next.File = exp.Path
	}
	return &next, nil
}

// over sets the values of b over those of a.
func over(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, b)
	return a
}

// writeSources writes the sources a run recorded under dir, as they were laid out around the
// experiment file (imports from folders above it included), and returns the file's path there.
func writeSources(dir string, m *store.Manifest) (string, error) {
	main := filepath.Base(m.File)
	if _, ok := m.Sources[main]; !ok {
		return "", fmt.Errorf("the run recorded no source of %s; pass --file", m.File)
	}
	depth := 0
	for name := range m.Sources {
		if filepath.IsAbs(name) {
			return "", fmt.Errorf("the run imported %s by an absolute path, which extend cannot lay out again; pass --file", name)
		}
		depth = max(depth, strings.Count(filepath.ToSlash(filepath.Clean(name)), "../"))
	}
	root := dir
	for i := range depth {
		root = filepath.Join(root, fmt.Sprintf("d%d", i))
	}
	for name, text := range m.Sources {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(root, main), nil
}

// brief names a few trials of a list.
func brief(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, ... %s", strings.Join(names[:2], ", "), names[len(names)-1])
}

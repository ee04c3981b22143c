package cli

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

type metricMatch struct {
	Name string `json:"name"`
	// Original and Reproduced are the final values, NaN and infinities as metrics.jsonl writes
	// them (nil: not logged).
	Original   *track.Float `json:"original"`
	Reproduced *track.Float `json:"reproduced"`
	Match      bool         `json:"match"`
}

type reproduceJSON struct {
	Original   string        `json:"original"`
	RunID      string        `json:"run_id"`
	Trial      string        `json:"trial"`
	Status     store.Status  `json:"status"`
	Match      bool          `json:"match"`
	Metrics    []metricMatch `json:"metrics"`
	Tolerance  float64       `json:"tolerance"`
	CodeCommit string        `json:"code_commit,omitempty"`
}

func newReproduceCmd(f *cmdutil.Factory) *cobra.Command {
	var output, backendName string
	var tolerance float64
	var settings backendSettings
	cmd := &cobra.Command{
		Use:   "reproduce RUN/TRIAL",
		Short: "Rerun one trial exactly as it ran, and check its result matches",
		Long: `Reproduce re-creates the code snapshot RUN recorded, reruns TRIAL with the same params, seed,
env and image (the digest its record shows, when it reruns on the same backend), and the steps it
waits for (such as a build), as a new run, then compares the new final metrics with the
recorded ones. The exit code is 0 when every metric matches (within
--tolerance, relative) and 1 when one differs.`,
		Example: `  jikken reproduce latest/opt-de-sphere-s3
  jikken reproduce 20261122-101500-sweep/train-7 --tolerance 1e-6 -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ref, trial, ok := strings.Cut(args[0], "/")
			if len(args) == 2 {
				ref, trial, ok = args[0], args[1], true
			}
			if !ok || trial == "" {
				return cmdutil.UsageError("name a trial: RUN/TRIAL (or RUN TRIAL)")
			}
			runs, id, err := resolveRun(ctx, f, ref)
			if err != nil {
				return err
			}
			orig, err := runs.Manifest(ctx, id)
			if err != nil {
				return err
			}
			all, err := withSearchTrial(ctx, runs, orig, trial)
			if err != nil {
				return err
			}
			plan, err := withAncestors(all, trial)
			if err != nil {
				return fmt.Errorf("run %s: %w", id, err)
			}
			if backendName == "" {
				backendName = orig.Backend
			}
			if backendName == orig.Backend {
				settings = settings.over(orig.Backend, orig.Options.Backend)
			}
			settings.Jobs = orig.Options.Jobs
			backend, err := openBackend(ctx, f, runs.Blob, backendName, settings)
			if err != nil {
				return err
			}
			if backendName == orig.Backend {
				if plan, err = pinImages(ctx, f, runs, id, plan); err != nil {
					return err
				}
			} else if countImages(plan) > 0 {
				fmt.Fprintf(f.IO.ErrOut, "warning: rerunning on %s, not %s: images are used by tag, not by the digests the run recorded\n", backendName, orig.Backend)
			}
			m := *orig
			m.RunID = runner.NewRunID(orig.Experiment+"-repro", time.Now())
			m.Created, m.Trials, m.Reproduces, m.Backend = time.Now().UTC(), plan, id+"/"+trial, backend.Name()
			m.Options.Backend = recordOf(backend)
			if m.Code == nil {
				fmt.Fprintf(f.IO.ErrOut, "warning: run %s recorded no code snapshot (not a git repository); rerunning with the code as it is now\n", id)
			}
			if err := runs.CreateManifest(ctx, &m); err != nil {
				return fmt.Errorf("record run: %w", err)
			}
			err = execute(ctx, f, runs, &m, backend, execOptions{jobs: orig.Options.Jobs, output: "quiet", host: hostSettings{}.over(orig.Options)})
			if err != nil && cmdutil.CodeOf(err) != cmdutil.ExitTrialFailed {
				return err
			}
			return compareReproduction(ctx, f, runs, id, m.RunID, trial, tolerance, output, &m)
		},
	}
	cmdutil.FormatFlag(cmd, &output, "text", "json")
	cmd.Flags().StringVar(&backendName, "backend", "", "where the trial runs (default: as it ran)")
	cmd.Flags().Float64Var(&tolerance, "tolerance", 0, "largest relative difference that still counts as a match")
	settings.addFlags(cmd, true)
	return cmd
}

// pinImages replaces the image of every trial of plan by the digest its record in run shows
// (what the engine actually ran), so a tag moved since the run does not change the rerun. A
// trial without a recorded digest keeps its image, with a warning.
func pinImages(ctx context.Context, f *cmdutil.Factory, runs store.Runs, run string, plan []experiment.Trial) ([]experiment.Trial, error) {
	recs, err := runs.Trials(ctx, run)
	if err != nil {
		return nil, err
	}
	out := make([]experiment.Trial, len(plan))
	for i, t := range plan {
		out[i] = t
		if t.Image == "" {
			continue
		}
		rec := recs[t.Name]
		if rec == nil || rec.ImageDigest == "" {
			fmt.Fprintf(f.IO.ErrOut, "warning: trial %s recorded no image digest; rerunning with %s as it is now\n", t.Name, t.Image)
			continue
		}
		out[i].Image = rec.ImageDigest
	}
	return out, nil
}

// withAncestors returns trial name and every trial it waits for, in plan order, unchanged.
func withAncestors(trials []experiment.Trial, name string) ([]experiment.Trial, error) {
	idx := map[string]int{}
	for i, t := range trials {
		idx[t.Name] = i
	}
	start, ok := idx[name]
	if !ok {
		return nil, fmt.Errorf("no trial %q; list them with 'jikken status RUN --all'", name)
	}
	keep := map[int]bool{}
	var visit func(int)
	visit = func(i int) {
		if keep[i] {
			return
		}
		keep[i] = true
		for _, d := range trials[i].Depends {
			visit(idx[d.Trial])
		}
		for _, a := range trials[i].After {
			visit(idx[a])
		}
	}
	visit(start)
	var out []experiment.Trial
	for i, t := range trials {
		if keep[i] {
			out = append(out, t)
		}
	}
	return out, nil
}

func compareReproduction(ctx context.Context, f *cmdutil.Factory, runs store.Runs, origID, newID, trial string, tol float64, output string, m *store.Manifest) error {
	final := func(run string) (map[string]float64, store.Status, error) {
		rows, err := results.Load(ctx, runs, run)
		if err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			if r.Trial == trial {
				return r.Metrics, r.Status, nil
			}
		}
		return nil, "", fmt.Errorf("trial %s not in run %s", trial, run)
	}
	a, _, err := final(origID)
	if err != nil {
		return err
	}
	b, status, err := final(newID)
	if err != nil {
		return err
	}
	out := reproduceJSON{Original: origID + "/" + trial, RunID: newID, Trial: trial, Status: status, Match: status == store.Succeeded, Tolerance: tol, Metrics: []metricMatch{}}
	if m.Code != nil {
		out.CodeCommit = m.Code.Commit
	}
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range b {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		mm := metricMatch{Name: k}
		if v, ok := a[k]; ok {
			x := track.Float(v)
			mm.Original = &x
		}
		if v, ok := b[k]; ok {
			x := track.Float(v)
			mm.Reproduced = &x
		}
		mm.Match = mm.Original != nil && mm.Reproduced != nil && within(float64(*mm.Original), float64(*mm.Reproduced), tol)
		out.Match = out.Match && mm.Match
		out.Metrics = append(out.Metrics, mm)
	}
	if output == "json" {
		if err := cmdutil.WriteJSON(f.IO.Out, out); err != nil {
			return err
		}
	} else {
		w := f.IO.Out
		fmt.Fprintf(w, "reproduced %s as %s (%s)\n", out.Original, newID+"/"+trial, status)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "METRIC\tORIGINAL\tREPRODUCED\tMATCH")
		show := func(p *track.Float) string {
			if p == nil {
				return "-"
			}
			return strconv.FormatFloat(float64(*p), 'g', -1, 64)
		}
		for _, mm := range out.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", mm.Name, show(mm.Original), show(mm.Reproduced), mm.Match)
		}
		_ = tw.Flush()
	}
	if len(out.Metrics) == 0 {
		return fmt.Errorf("trial %s recorded no metrics, so there is nothing to compare; have it write metrics.jsonl or result.json", trial)
	}
	if !out.Match {
		if status != store.Succeeded {
			return fmt.Errorf("the reproduction %s; see 'jikken status %s'", status, newID)
		}
		return fmt.Errorf("the reproduced result differs from the recorded one")
	}
	if output != "json" {
		fmt.Fprintln(f.IO.Out, "result matches")
	}
	return nil
}

func within(a, b, tol float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

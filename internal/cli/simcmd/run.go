package simcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/progress"
	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/metrics"
	"github.com/jikken-dev/jikken/sim/scenario"
)

type runOptions struct {
	f        *cmdutil.Factory
	plugins  Plugins
	scenario string
	dir      string // where the results go
	profile  string
	seed     uint64
	format   string // how the summary is printed: text or json
	timeline string
	progress bool
	memory   memoryFlag
	// cpuProfile and memProfile name pprof files to write (hidden flags, for bench/sim).
	cpuProfile string
	memProfile string
}

func newRunCmd(f *cmdutil.Factory, pl Plugins) *cobra.Command {
	o := &runOptions{f: f, plugins: pl}
	var out *cmdutil.PathOutput
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml --dir OUTDIR",
		Short: "Run one scenario and write summary.json, jobs.csv, pods.csv and timeline.csv",
		Long: `run simulates the scenario and writes to OUTDIR:
  summary.json   job JCT/wait/slowdown percentiles (a gang is one job; pod-level figures
                 under pod_*), per-user figures, makespan, throughput, GPU allocation,
                 fragmentation, fairness, run cost and a determinism hash
  jobs.csv       one row per job (a gang, or a pod on its own): submit, start, end, wait,
                 JCT, slowdown, preemptions, restarts, lost GPU time, user
  pods.csv       one row per pod: submit, start, end, node, wait, JCT, slowdown, preemptions,
                 restarts, lost work, user
  timeline.csv   allocation, capacity and utilisation per resource, queue length and running
                 pods over time (averaged down to output.timelineRows rows, ready to plot)
  user_share.csv each user's share of the GPUs over time, averaged the same way

A progress bar is drawn on a terminal only; -o json prints the summary as JSON. (The old
spellings '-o OUTDIR', --output-dir and --format still work, with a warning.)`,
		Example: `  jikken sim run examples/sim/small.yaml --dir out
  jikken sim run examples/sim/philly.yaml --dir out --profile fifo --seed 7 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.scenario = args[0]
			if err := out.Resolve(f.IO); err != nil {
				return err
			}
			o.dir, o.format = out.Path, out.Format
			if o.dir == "" {
				return cmdutil.UsageError("missing --dir OUTDIR: the folder to write summary.json, pods.csv and timeline.csv to")
			}
			if o.timeline != "csv" && o.timeline != "jsonl" {
				return cmdutil.UsageError("unknown --timeline-format %q; use csv or jsonl", o.timeline)
			}
			if _, err := o.memory.bytes(); err != nil {
				return err
			}
			return runRun(cmd.Context(), o)
		},
	}
	out = cmdutil.AddPathOutput(cmd, "dir", "", "folder to write the results to (created if missing)", "text", "json")
	cmdutil.DeprecatedAlias(cmd, "output-dir", "dir")
	cmdutil.DeprecatedAlias(cmd, "format", "output")
	cmd.Flags().StringVar(&o.profile, "profile", "", "scheduler profile overriding the scenario's (kube-default, kube-framework, fifo, fifo-backfill, sjf, srtf, las, las-time, gittins, drf)")
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(scenario.Profiles(), cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "seed overriding the scenario's")
	cmd.Flags().StringVar(&o.timeline, "timeline-format", "csv", "timeline file format: csv or jsonl")
	_ = cmd.RegisterFlagCompletionFunc("timeline-format", cobra.FixedCompletions([]string{"csv", "jsonl"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(&o.progress, "progress", true, "draw a progress bar when stderr is a terminal")
	o.memory.add(cmd)
	cmd.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	cmd.Flags().StringVar(&o.memProfile, "memprofile", "", "write a heap profile, taken after the simulation and before the output files, to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	_ = cmd.Flags().MarkHidden("memprofile")
	return cmd
}

// memoryFlag is --max-memory: the cap on a run's records (pods and samples).
type memoryFlag struct{ text string }

func (m *memoryFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&m.text, "max-memory", "4Gi", "refuse runs whose pods and time-series samples would need more memory than this (0: no cap)")
}

// bytes returns the cap for scenario.Options.MaxMemory (0, the default, when unset).
func (m *memoryFlag) bytes() (int64, error) {
	if m.text == "" {
		return 0, nil
	}
	q, err := sim.ParseQuantity(m.text)
	if err != nil || q < 0 {
		return 0, cmdutil.UsageError("--max-memory %q: give an amount of memory such as 8Gi, or 0 for no cap", m.text)
	}
	if q == 0 {
		return -1, nil
	}
	return q / sim.Milli, nil
}

// simStatus is the status line of a simulation: name, bar, pods finished and their rate.
func simStatus(name, scheduler string, done, total int, elapsed time.Duration, width int) string {
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	counts := fmt.Sprintf(" %d pods  %.0f pods/s  %s", done, rate, progress.Clock(elapsed))
	if total > 0 {
		// Gang members make pods outnumber jobs; keep the count within its end.
		counts = fmt.Sprintf(" %d/%d pods  %.0f pods/s  %s", min(done, total), total, rate, progress.Clock(elapsed))
	}
	head := fmt.Sprintf("%s (%s) ", name, scheduler)
	return head + progress.Bar(done, total, width-len(head)-len(counts)-2) + counts
}

// result is one finished simulation.
type result struct {
	summary metrics.Summary
	built   *scenario.Built
	rec     *metrics.Recorder
	rows    int
}

// simulate builds and runs a scenario, with a progress bar on a terminal. An observer in opts
// receives the records too. Cancelling ctx stops the run after the current step.
func simulate(ctx context.Context, f *cmdutil.Factory, sc *scenario.Scenario, opts scenario.Options, showProgress bool) (*result, error) {
	rec := &metrics.Recorder{}
	if opts.Observer != nil {
		opts.Observer = tee{rec, opts.Observer}
	} else {
		opts.Observer = rec
	}
	start := time.Now()
	b, err := scenario.Build(sc, opts)
	if err != nil {
		return nil, memoryHint(err)
	}
	line := progress.New(f.IO.ErrOut, showProgress && f.IO.ErrTTY)
	defer line.Clear()
	e := b.Engine
	interrupted := ctx.Done()
	for steps := 0; !e.Done(); steps++ {
		// One step is one instant: checking between steps bounds the reaction to an interrupt
		// by the longest step, not by thousands of them.
		select {
		case <-interrupted:
			return nil, fmt.Errorf("simulate %s: stopped at simulated time %v: %w", sc.Name, e.Cluster().Now(), ctx.Err())
		default:
		}
		if err := e.Step(); err != nil {
			return nil, fmt.Errorf("simulate %s: %w", sc.Name, err)
		}
		if err := b.Budget.Check(e.Cluster().Stats().Submitted, len(rec.Samples)); err != nil {
			return nil, memoryHint(fmt.Errorf("simulate %s: stopped at simulated time %v: %w", sc.Name, e.Cluster().Now(), err))
		}
		if steps&4095 == 0 {
			line.Draw(simStatus(sc.Name, b.Scheduler, e.Cluster().Stats().Finished, b.Total, time.Since(start), f.IO.TerminalWidth()))
		}
	}
	wall := time.Since(start).Seconds()
	// The determinism hash is left to the caller that writes pods.csv (see runRun).
	s := metrics.SummarizeUnhashed(e.Cluster(), rec.Samples)
	s.Scenario, s.Scheduler, s.Seed = sc.Name, b.Scheduler, b.Seed
	s.WallSeconds = round3(wall)
	if wall > 0 {
		s.EventsPerSecond = round3(float64(s.Events) / wall)
		s.PodsPerSecond = round3(float64(s.Pods) / wall)
	}
	s.PeakRSSBytes = peakRSS()
	rows := sc.Output.TimelineRows
	if rows == 0 {
		rows = 2000
	}
	return &result{summary: s, built: b, rec: rec, rows: max(rows, 0)}, nil
}

// memoryHint names the flag that raises the memory cap.
func memoryHint(err error) error {
	if me := (*scenario.MemoryError)(nil); errors.As(err, &me) {
		return fmt.Errorf("%w with --max-memory", err)
	}
	return err
}

// tee passes records to two observers.
type tee [2]sim.Observer

func (t tee) Sampled(s *sim.Sample) { t[0].Sampled(s); t[1].Sampled(s) }
func (t tee) PodDone(p *sim.Pod)    { t[0].PodDone(p); t[1].PodDone(p) }

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

func runRun(ctx context.Context, o *runOptions) error {
	sc, err := scenario.Load(o.scenario)
	if err != nil {
		return err
	}
	limit, err := o.memory.bytes()
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	r, err := simulate(ctx, o.f, sc, scenario.Options{Profile: o.profile, Seed: o.seed, MaxMemory: limit, Plugins: o.plugins.Sim, FrameworkPlugins: o.plugins.Framework}, o.progress)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("create output folder: %w", err)
	}
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return err
		}
	}
	c := r.built.Engine.Cluster()
	if err := writeFile(filepath.Join(o.dir, "jobs.csv"), func(w io.Writer) error { return metrics.WriteJobSeq(w, metrics.EachJob(c.Pods())) }); err != nil {
		return err
	}
	// pods.csv is hashed as it is written: the determinism hash covers its bytes.
	digest := metrics.NewDigest()
	if err := writeFile(filepath.Join(o.dir, "pods.csv"), func(w io.Writer) error {
		return metrics.WritePods(io.MultiWriter(w, digest), c.Pods())
	}); err != nil {
		return err
	}
	if r.summary.DeterminismHash, err = digest.Sum(r.rec.Samples, c.Names()); err != nil {
		return err
	}
	rows := metrics.Downsample(r.rec.Samples, r.rows)
	tl := "timeline.csv"
	write := metrics.WriteTimelineCSV
	if o.timeline == "jsonl" {
		tl, write = "timeline.jsonl", metrics.WriteTimelineJSONL
	}
	if err := writeFile(filepath.Join(o.dir, tl), func(w io.Writer) error { return write(w, rows, r.built.Names) }); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(o.dir, "user_share.csv"), func(w io.Writer) error {
		return metrics.WriteUserShares(w, r.rec.Samples, c.Users(), r.rows)
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(o.dir, "summary.json"), func(w io.Writer) error { return cmdutil.WriteJSON(w, r.summary) }); err != nil {
		return err
	}
	if o.format == "json" {
		return cmdutil.WriteJSON(o.f.IO.Out, r.summary)
	}
	s := r.summary
	fmt.Fprintf(o.f.IO.Out, "%s (%s, seed %d): %d jobs (%d pods), %d succeeded, %d failed, %d unfinished\n", s.Scenario, s.Scheduler, s.Seed,
		s.Jobs, s.Pods, s.JobsSucceeded, s.JobsFailed, s.JobsUnfinished)
	fmt.Fprintf(o.f.IO.Out, "makespan %.1f s, mean JCT %.1f s (p95 %.1f), mean wait %.1f s (p95 %.1f), GPU allocation %.3f\n",
		s.Makespan, s.JCT.Mean, s.JCT.P95, s.Wait.Mean, s.Wait.P95, s.GPUAllocation)
	fmt.Fprintf(o.f.IO.Out, "wrote %s\n", o.dir)
	return nil
}

// writeFile writes through a temp file and a rename, so a failed run leaves no half file.
func writeFile(path string, fill func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err := fill(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

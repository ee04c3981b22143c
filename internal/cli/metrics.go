package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// metricsOptions are the arguments of 'jikken metrics'.
type metricsOptions struct {
	Run    string
	Trial  string // "" for every trial
	Follow bool
	Format string
	// Every is how often -f polls the store.
	Every time.Duration
}

func newMetricsCmd(f *cmdutil.Factory) *cobra.Command {
	o := &metricsOptions{}
	cmd := &cobra.Command{
		Use:   "metrics RUN [TRIAL]",
		Short: "Print the metric points trials log, as they log them",
		Long: `Metrics prints the metric points of RUN's trials (of TRIAL only when given), one a line: those a
running attempt logged so far (its live metrics, in the store within seconds of being written)
and those of ended attempts. A trial's points are its last attempt's. With -f it keeps printing
new points as they arrive, until every trial has ended or no runner works on the run.

Each line names the trial, the attempt, the point's number in its attempt (seq), its step and
its value; -o json prints one JSON object a line: {"trial","attempt","seq","name","value",
"step","ts"}.`,
		Example: `  jikken metrics latest
  jikken metrics latest lr=0.1 -f
  jikken metrics latest -f -o json | jq -c 'select(.name == "loss")'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = args[0]
			if len(args) == 2 {
				o.Trial = args[1]
			}
			if o.Every <= 0 {
				return cmdutil.UsageError("--every must be more than 0")
			}
			return runMetrics(cmd.Context(), f, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing new points until the trials end")
	cmd.Flags().DurationVar(&o.Every, "every", time.Second, "with -f, how often to look for new points")
	cmdutil.FormatFlag(cmd, &o.Format, "text", "json")
	return cmd
}

// curve is where the printing of one trial's points stands.
type curve struct {
	name    string
	attempt int
	after   int64
}

func runMetrics(ctx context.Context, f *cmdutil.Factory, o *metricsOptions) error {
	runs, id, err := resolveRun(ctx, f, o.Run)
	if err != nil {
		return err
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return err
	}
	recs, err := runs.Trials(ctx, id)
	if err != nil {
		return err
	}
	var curves []*curve
	for _, t := range store.Planned(m, recs) {
		if o.Trial == "" || t.Name == o.Trial {
			curves = append(curves, &curve{name: t.Name})
		}
	}
	if len(curves) == 0 {
		return fmt.Errorf("run %s has no trial %q; list them with 'jikken status %s --all'", id, o.Trial, id)
	}
	host, _ := os.Hostname()
	for {
		recs, err := trialRecords(ctx, runs, id, o.Trial)
		if err != nil {
			return err
		}
		// Records written before the pass: a trial whose record is final has all its points in.
		over := !o.Follow || allEnded(recs, len(curves)) || !runnerAlive(ctx, runs, id, host)
		for _, c := range curves {
			if err := c.print(ctx, runs, id, recs[c.name], f.IO.Out, o.Format); err != nil {
				return err
			}
		}
		if over {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Every):
		}
	}
}

// trialRecords reads the records of the run's trials, or of one.
func trialRecords(ctx context.Context, runs store.Runs, run, trial string) (map[string]*store.TrialRecord, error) {
	if trial == "" {
		return runs.Trials(ctx, run)
	}
	rec, err := runs.Trial(ctx, run, trial)
	if errors.Is(err, store.ErrNotFound) {
		return map[string]*store.TrialRecord{}, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]*store.TrialRecord{trial: rec}, nil
}

// allEnded reports whether each of n trials has a final record.
func allEnded(recs map[string]*store.TrialRecord, n int) bool {
	if len(recs) < n {
		return false
	}
	for _, r := range recs {
		if !r.Status.Final() {
			return false
		}
	}
	return true
}

// curveAttempt is the attempt whose points are the trial's curve: the running one, else the last.
func curveAttempt(rec *store.TrialRecord) int {
	switch {
	case rec == nil:
		return 0
	case rec.Live != nil:
		return rec.Live.Attempt
	case len(rec.Attempts) > 0:
		return rec.Attempts[len(rec.Attempts)-1].N
	}
	return 0
}

// print writes the points of the trial's curve that were not printed yet. A new attempt starts
// its points from 1 again. An ended attempt without live points (a run from before them) prints
// its metrics.jsonl, numbered by line.
func (c *curve) print(ctx context.Context, runs store.Runs, run string, rec *store.TrialRecord, w io.Writer, format string) error {
	n := curveAttempt(rec)
	if n == 0 {
		return nil
	}
	if n != c.attempt {
		c.attempt, c.after = n, 0
	}
	var werr error
	emit := func(p store.LivePoint) error {
		werr = writePoint(w, format, c.name, n, p)
		return werr
	}
	after, err := runs.LiveAfter(ctx, run, c.name, n, c.after, emit)
	c.after = after
	if werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	if c.after > 0 || rec.Live != nil || !rec.Status.Final() {
		return nil
	}
	data, err := store.ReadAll(ctx, runs.Blob, store.TrialKey(run, c.name, "metrics.jsonl"))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if m, err := track.ParseMetricLine(bytes.TrimSpace(line)); err == nil {
			c.after++
			if err := emit(store.LivePoint{Seq: c.after, Metric: m}); err != nil {
				return err
			}
		}
	}
	return nil
}

// writePoint prints one point as text or as a JSON line.
func writePoint(w io.Writer, format, trial string, attempt int, p store.LivePoint) error {
	if format == "json" {
		// The point's own JSON, as the store holds it, after the trial and attempt.
		b, err := p.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, `{"trial":%s,"attempt":%d,%s`+"\n", strconv.Quote(trial), attempt, b[1:])
		return err
	}
	step := "-"
	if p.Step != nil {
		step = strconv.FormatInt(*p.Step, 10)
	}
	_, err := fmt.Fprintf(w, "%s\tattempt=%d\tseq=%d\tstep=%s\t%s=%s\n", trial, attempt, p.Seq, step, p.Name, record.EncodeFloat(p.Value))
	return err
}

// liveValue is a running trial's latest value of its primary metric (the first it logged), as
// 'jikken status' shows it.
type liveValue struct {
	Name string `json:"name"`
	// Value is as metrics.jsonl writes it (NaN and infinities as strings).
	Value json.RawMessage `json:"value"`
	Step  *int64          `json:"step,omitempty"`
	// Seq is the point's number in its attempt: how many points the attempt logged up to it.
	Seq int64 `json:"seq"`
}

func (v liveValue) String() string {
	s := v.Name + "=" + string(v.Value)
	if v.Step != nil {
		s += " @step " + strconv.FormatInt(*v.Step, 10)
	}
	return s
}

// withLiveValues sets the latest value of the primary metric of each running trial of v.
func withLiveValues(ctx context.Context, runs store.Runs, v *runView) {
	for i := range v.Trials {
		t := &v.Trials[i]
		if t.Status != store.Running {
			continue
		}
		rec, err := runs.Trial(ctx, v.RunID, t.Name)
		if err != nil || rec.Live == nil {
			continue
		}
		if p, ok, err := runs.LiveLatest(ctx, v.RunID, t.Name, rec.Live.Attempt, ""); err == nil && ok {
			t.Metric = &liveValue{Name: p.Name, Value: record.EncodeFloat(p.Value), Step: p.Step, Seq: p.Seq}
		}
	}
}

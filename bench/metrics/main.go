// Command metrics-bench measures live metrics: how much slower a trial that logs 100,000 points
// as fast as it can runs under jikken than alone, how many store requests its points cost, and
// how long a point takes from being written to being readable in the store. It runs the trial
// under the runner (local backend, folder store: what `jikken run` does) and under the executor
// (S3 store: what a Kubernetes pod or a Slurm job does). bench/metrics/run.sh starts a MinIO and
// runs it; see docs/tracking.md for the figures.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/bench/s3bench"
	"github.com/jikken-dev/jikken/executor"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "logger" {
		if err := logger(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "metrics-bench logger:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "metrics-bench:", err)
		os.Exit(1)
	}
}

// logger is the trial: it appends n points to $JIKKEN_OUTPUT_DIR/metrics.jsonl, one write each
// (as a program that flushes every line), at rate points a second (0: as fast as it can), each
// stamped with the time it was written, and puts its own running time in result.json.
func logger(args []string) error {
	fl := flag.NewFlagSet("logger", flag.ContinueOnError)
	n := fl.Int("n", 100_000, "points")
	rate := fl.Float64("rate", 0, "points a second (0: as fast as it can)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	dir := os.Getenv("JIKKEN_OUTPUT_DIR")
	f, err := os.OpenFile(filepath.Join(dir, "metrics.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	start := time.Now()
	buf := make([]byte, 0, 128)
	for i := 1; i <= *n; i++ {
		if *rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(i) / *rate * float64(time.Second)))))
		}
		buf = fmt.Appendf(buf[:0], `{"name":"loss","value":%g,"step":%d,"ts":%d}`+"\n", 1/float64(i), i, time.Now().UnixMilli())
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	elapsed := time.Since(start).Seconds()
	if err := f.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), fmt.Appendf(nil, `{"elapsed_s":%g}`+"\n", elapsed), 0o644)
}

// counting is a Blob that counts its PUTs: each is one request of the S3 store for objects
// under 16 MiB.
type counting struct {
	store.Blob
	puts atomic.Int64
}

func (c *counting) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	c.puts.Add(1)
	return c.Blob.Put(ctx, key, r, size)
}

// ListAfter keeps the S3 store's start-after listing, which embedding the interface hides.
func (c *counting) ListAfter(ctx context.Context, prefix, after string, fn func(store.Info) error) error {
	return store.ListAfter(ctx, c.Blob, prefix, after, fn)
}

type result struct {
	path    string
	elapsed []float64 // the trial's own running time, each round
	puts    int64     // PUTs of the last fast round: live chunks, then the final outputs and records
	chunks  int       // live chunks of the last fast round
	lat     []float64 // write -> readable, ms, every point of the latency round
}

// add records a round: the latency round's latencies, or a fast round's time and requests.
func (r *result) add(latencyRound bool, elapsed float64, chunks int, puts int64, lat []float64) {
	if latencyRound {
		r.lat = lat
		return
	}
	r.elapsed = append(r.elapsed, elapsed)
	r.chunks, r.puts = chunks, puts
}

func run() error {
	n := flag.Int("n", 100_000, "points the fast trial logs")
	rounds := flag.Int("rounds", 5, "rounds of the fast trial; the table shows medians")
	latN := flag.Int("latency-points", 600, "points of the latency round, logged at -rate a second")
	rate := flag.Float64("rate", 100, "points a second in the latency round")
	bucket := flag.String("bucket", "", "S3 bucket for the executor's store (empty: skip it)")
	liveEvery := flag.Duration("runner-live-every", runner.DefaultLiveEvery, "the runner's live interval (negative: no live metrics, to measure the runner alone)")
	flag.Parse()
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "metrics-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var cfg s3.Config
	if *bucket != "" {
		if cfg, err = s3.LoadConfig(os.Getenv); err != nil {
			return err
		}
		if _, err := s3bench.Plain(ctx, cfg, *bucket); err != nil {
			return err
		}
	}
	alone := &result{path: "the trial alone"}
	folder := &result{path: fmt.Sprintf("runner, local backend, folder store (live every %v)", *liveEvery)}
	exe := &result{path: "executor, S3 store on MinIO (live every 4 s)"}
	// The three take turns in each round, so that a machine whose load drifts slows them alike;
	// the last round is the latency round, at -rate points a second.
	for r := range *rounds + 1 {
		points, rt := *n, 0.0
		if r == *rounds {
			points, rt = *latN, *rate
		}
		if r < *rounds {
			dir := filepath.Join(tmp, "alone", strconv.Itoa(r))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			cmd := execLogger(self, points, rt)
			cmd.Env = append(os.Environ(), "JIKKEN_OUTPUT_DIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("trial alone: %v\n%s", err, out)
			}
			e, err := elapsedIn(os.ReadFile(filepath.Join(dir, "result.json")))
			if err != nil {
				return err
			}
			alone.elapsed = append(alone.elapsed, e)
		}
		blob, err := store.OpenFolder(filepath.Join(tmp, "store", strconv.Itoa(r)))
		if err != nil {
			return err
		}
		c := &counting{Blob: blob}
		e, k, lat, err := underRunner(ctx, c, filepath.Join(tmp, "work", strconv.Itoa(r)), self, points, rt, *liveEvery)
		if err != nil {
			return err
		}
		folder.add(r == *rounds, e, k, c.puts.Load(), lat)
		if *bucket == "" {
			continue
		}
		sb, err := s3.New(ctx, fmt.Sprintf("s3://%s/bench-%d", *bucket, r), cfg)
		if err != nil {
			return err
		}
		c = &counting{Blob: sb}
		e, k, lat, err = underExecutor(ctx, c, filepath.Join(tmp, "exec", strconv.Itoa(r)), self, points, rt)
		if err != nil {
			return err
		}
		exe.add(r == *rounds, e, k, c.puts.Load(), lat)
	}
	results := []*result{alone, folder}
	if *bucket != "" {
		results = append(results, exe)
	}

	base := median(alone.elapsed)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "path\ttrial time (median of %d)\tslowdown\tlive chunks\tchunk PUTs per 1,000 points\tall PUTs\twrite→readable median\tp99\t\n", *rounds)
	for _, r := range results {
		if r == alone {
			fmt.Fprintf(tw, "%s\t%.3f s\t\t\t\t\t\t\t\n", r.path, base)
			continue
		}
		m := median(r.elapsed)
		fmt.Fprintf(tw, "%s\t%.3f s\t%+.1f %%\t%d\t%.2f\t%d\t%.0f ms\t%.0f ms\t\n", r.path, m, 100*(m/base-1), r.chunks,
			1000*float64(r.chunks)/float64(*n), r.puts, median(r.lat), quantile(r.lat, 0.99))
	}
	return tw.Flush()
}

func execLogger(self string, n int, rate float64) *exec.Cmd {
	return exec.Command(self, "logger", "-n", strconv.Itoa(n), "-rate", strconv.FormatFloat(rate, 'g', -1, 64))
}

func elapsedIn(data []byte, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	var r struct {
		Elapsed float64 `json:"elapsed_s"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.Elapsed == 0 {
		return 0, fmt.Errorf("result.json %q: %v", data, err)
	}
	return r.Elapsed, nil
}

// underRunner runs the logger as a one-trial run of the runner on the local backend, with a
// reader polling its live points every 100 ms (as 'jikken metrics -f --every 100ms').
func underRunner(ctx context.Context, b *counting, work, self string, n int, rate float64, every time.Duration) (float64, int, []float64, error) {
	runs := store.Runs{Blob: b}
	m := &store.Manifest{RunID: runner.NewRunID("bench", time.Now()), Trials: []experiment.Trial{{
		Name: "logger", Cmd: experiment.Command{Argv: execLogger(self, n, rate).Args}}}}
	if err := runs.WriteManifest(ctx, m); err != nil {
		return 0, 0, nil, err
	}
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 1, WorkRoot: work, Workdir: work, StopGrace: time.Second, LiveEvery: every}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return 0, 0, nil, err
	}
	stop := watch(ctx, runs, m.RunID)
	sum, err := r.Execute(ctx, m, false)
	lat := stop()
	if err != nil {
		return 0, 0, nil, err
	}
	if sum.Status != store.Succeeded {
		return 0, 0, nil, fmt.Errorf("the trial under the runner: %s", sum.Trials[0].Reason)
	}
	e, err := elapsedIn(store.ReadAll(ctx, b, store.TrialKey(m.RunID, "logger", "result.json")))
	if err != nil {
		return 0, 0, nil, err
	}
	k, err := chunks(ctx, b, m.RunID)
	return e, k, lat, err
}

// underExecutor runs the logger under the executor, as a pod or a Slurm job with an S3 store.
func underExecutor(ctx context.Context, b *counting, dir, self string, n int, rate float64) (float64, int, []float64, error) {
	runs := store.Runs{Blob: b}
	out := filepath.Join(dir, "out")
	stop := watch(ctx, runs, "bench")
	res, err := executor.Run(ctx, executor.Options{
		Argv: execLogger(self, n, rate).Args, Env: append(os.Environ(), "JIKKEN_OUTPUT_DIR="+out),
		Store: b, RunID: "bench", Trial: "logger", Attempt: 1, OutputDir: out, LogDir: filepath.Join(dir, "logs"),
		FlushEvery: -1,
	})
	lat := stop()
	if err != nil {
		return 0, 0, nil, err
	}
	if res.ExitCode != 0 || res.Upload != nil {
		return 0, 0, nil, fmt.Errorf("the trial under the executor: %+v", res)
	}
	e, err := elapsedIn(os.ReadFile(filepath.Join(out, "result.json")))
	if err != nil {
		return 0, 0, nil, err
	}
	k, err := chunks(ctx, b, "bench")
	return e, k, lat, err
}

// watch polls the live points of run's trial "logger" every 100 ms (as 'jikken metrics -f
// --every 100ms') until stopped, and returns, for each point, the milliseconds from its write
// (its ts) to the poll that first read it.
func watch(ctx context.Context, runs store.Runs, run string) (stop func() []float64) {
	var out []float64
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		after := int64(0)
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			after, _ = runs.LiveAfter(ctx, run, "logger", 1, after, func(p store.LivePoint) error {
				out = append(out, float64(time.Now().UnixMilli()-p.TS))
				return nil
			})
		}
	}()
	return func() []float64 {
		close(done)
		<-ended
		return out
	}
}

// chunks counts the live chunks of run's trial "logger": one PUT each.
func chunks(ctx context.Context, b store.Blob, run string) (int, error) {
	k := 0
	err := b.List(ctx, store.LivePrefix(run, "logger", 1), func(store.Info) error { k++; return nil })
	return k, err
}

func median(xs []float64) float64 { return quantile(xs, 0.5) }

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

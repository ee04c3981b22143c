package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/jikken-dev/jikken/internal/version"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
	"github.com/jikken-dev/jikken/track"
)

// Options configure one execution of a trial.
type Options struct {
	// Argv is the trial's command; Argv[0] is looked up on PATH.
	Argv []string
	// Dir is the working directory of the command (default: the current one).
	Dir string
	// Env is the command's environment (default: the executor's own), less the store's
	// credentials (s3.CredentialEnv): the executor needs them to upload, the trial never does.
	Env []string

	Store store.Blob
	RunID string
	Trial string
	// Attempt is recorded in trial.json when Record is set.
	Attempt int

	// OutputDir is $JIKKEN_OUTPUT_DIR: the folder whose files are uploaded after the command ends.
	OutputDir string
	// LogDir holds stdout.log and stderr.log while the command runs (default: a temporary folder).
	LogDir string
	// Params, when set, is written to ParamsPath before the command starts ($JIKKEN_PARAMS).
	Params     []byte
	ParamsPath string

	// ScanStdoutMetrics appends the `::metric name=value` lines of stdout to metrics.jsonl. A
	// runner that collects stdout.log itself does that scan and turns this off.
	ScanStdoutMetrics bool
	// Record writes the trial's record (trial.json) when the command ends: for workflows that
	// run without a jikken runner (Argo). The record is only written for the final outcome.
	Record *store.TrialRecord

	// Stdout and Stderr also receive the command's output (the container's own log).
	Stdout, Stderr io.Writer
	// FlushEvery is how often the growing logs are uploaded while the command runs (default
	// 10s; negative: only at the end).
	FlushEvery time.Duration
	// Signals are forwarded to the command (default SIGTERM, SIGINT, and where the system has
	// them SIGUSR1, SIGUSR2 and SIGHUP: a batch system's warning, checkpoint.signal).
	Signals []os.Signal
	// LiveEvery is how often the metric points the command writes (metrics.jsonl, ::metric
	// lines of stdout) are appended to the store's live chunks while it runs (default
	// DefaultLiveEvery; negative: never).
	LiveEvery time.Duration
	// Checkpoint, when set, keeps the trial's checkpoint folder in the store across attempts.
	Checkpoint *Checkpoint
}

// Checkpoint is how the executor keeps a trial's checkpoint folder in the store: the newest
// complete version is restored into Dir before the command starts ($JIKKEN_CHECKPOINT_DIR,
// with JIKKEN_RESUMED=1 when there was one), and Dir is uploaded every Every while the command
// runs (0: only at the end) and once it has ended, whatever its exit (after a SIGTERM the trial
// saves, exits, and its checkpoint goes up within the grace period). While a trial goes on
// after a forwarded signal (its warning), its folder and logs are uploaded every quarter of
// Before, so that what it saved goes up before SIGKILL ends the executor too. A folder over Max bytes
// is not uploaded: the trial's log says so and the last good version stays the newest.
type Checkpoint struct {
	Dir    string
	Every  time.Duration
	Before time.Duration
	Max    int64
}

// DefaultLiveEvery is how often the executor appends new live metric points: at most one store
// request per interval and per MiB of lines, whatever the trial logs.
const DefaultLiveEvery = 4 * time.Second

// Result is how an execution ended.
type Result struct {
	// ExitCode is the command's exit status (128+signal when killed by one), -1 when it could
	// not start.
	ExitCode int
	Reason   string
	// Upload is set when outputs did not all reach the store.
	Upload error
	// Notes say what of the trial's outputs was left out (a symbolic link), as the runner's
	// record of an attempt says it.
	Notes []string
}

// Run runs the trial's command to its end and uploads its outputs. An error means the execution
// could not be set up at all; a command that fails is reported in Result.
func Run(ctx context.Context, o Options) (Result, error) {
	if len(o.Argv) == 0 {
		return Result{ExitCode: -1}, errors.New("trial-exec: no command given after --")
	}
	if o.Store == nil || o.RunID == "" || o.Trial == "" || o.OutputDir == "" {
		return Result{ExitCode: -1}, errors.New("trial-exec: store, run, trial and output dir are required")
	}
	if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("trial-exec: create output dir: %w", err)
	}
	if o.Params != nil && o.ParamsPath != "" {
		if err := os.WriteFile(o.ParamsPath, o.Params, 0o644); err != nil {
			return Result{ExitCode: -1}, fmt.Errorf("trial-exec: write params: %w", err)
		}
	}
	logDir := o.LogDir
	if logDir == "" {
		d, err := os.MkdirTemp("", "jikken-exec-")
		if err != nil {
			return Result{ExitCode: -1}, fmt.Errorf("trial-exec: %w", err)
		}
		defer os.RemoveAll(d)
		logDir = d
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("trial-exec: create log dir: %w", err)
	}
	stdoutPath, stderrPath := filepath.Join(logDir, "stdout.log"), filepath.Join(logDir, "stderr.log")
	stdout, err := os.Create(stdoutPath)
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("trial-exec: %w", err)
	}
	defer stdout.Close()
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("trial-exec: %w", err)
	}
	defer stderr.Close()

	u := &uploader{o: o, stdoutPath: stdoutPath, stderrPath: stderrPath}
	if o.Checkpoint != nil {
		ck, err := restoreCheckpoint(ctx, o, tee(stderr, o.Stderr))
		if err != nil {
			return Result{ExitCode: -1}, err
		}
		u.ck = ck
		u.o.Env = ck.env(u.o.Env)
	}
	feed := u.feedLive(ctx, stderr)
	started := time.Now()
	res := u.execute(ctx, stdout, stderr)
	stdout.Sync()
	u.stopLive(ctx, feed, stderr)
	var ckNotes []string
	if u.ck != nil {
		ckNotes = u.ck.save(ctx, tee(stderr, o.Stderr))
	}
	stderr.Sync()
	res.Notes, res.Upload = u.finish(ctx, res, started, stderr)
	res.Notes = append(res.Notes, ckNotes...)
	return res, nil
}

type uploader struct {
	o                      Options
	stdoutPath, stderrPath string
	mu                     sync.Mutex // one upload of the logs at a time
	ck                     *keeper    // nil: no checkpoint
}

func (u *uploader) key(name string) string { return store.TrialKey(u.o.RunID, u.o.Trial, name) }

// execute runs the command with its output teed to the log files, uploading the logs every
// FlushEvery so `jikken logs` shows a trial that is still running.
func (u *uploader) execute(ctx context.Context, stdout, stderr *os.File) Result {
	o := u.o
	cmd := exec.Command(o.Argv[0], o.Argv[1:]...)
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Dir, cmd.Env = o.Dir, s3.WithoutCredentials(env)
	cmd.Stdout, cmd.Stderr = tee(stdout, o.Stdout), tee(stderr, o.Stderr)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "trial-exec: start %s: %v\n", o.Argv[0], err)
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "trial-exec: start %s: %v\n", o.Argv[0], err)
		}
		code := 127
		if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
			code = 126
		}
		return Result{ExitCode: code, Reason: fmt.Sprintf("could not start %s: %v", o.Argv[0], err)}
	}
	sigs := o.Signals
	if sigs == nil {
		sigs = forwarded
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, sigs...)
	defer signal.Stop(sigc)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var saves, warned <-chan time.Time
		if u.ck != nil && u.ck.every > 0 {
			t := time.NewTicker(u.ck.every)
			defer t.Stop()
			saves = t.C
		}
		var tick <-chan time.Time
		if o.FlushEvery >= 0 {
			every := o.FlushEvery
			if every == 0 {
				every = 10 * time.Second
			}
			t := time.NewTicker(every)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-done:
				return
			case s := <-sigc:
				_ = cmd.Process.Signal(s)
				if u.ck != nil && warned == nil && u.ck.before > 0 {
					// Warned: SIGKILL may end this executor with the trial once before has
					// passed, so what the trial saves goes up now and then until it ends.
					t := time.NewTicker(u.ck.before / 4)
					defer t.Stop()
					warned = t.C
				}
			case <-warned:
				go u.ck.saveIfIdle(ctx, tee(stderr, o.Stderr))
				_ = u.putLogs(ctx)
			case <-tick:
				_ = u.putLogs(ctx)
			case <-saves:
				// In the background: signals must reach the trial while a large folder goes up.
				go u.ck.saveIfIdle(ctx, tee(stderr, o.Stderr))
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	wg.Wait()
	return exitOf(cmd.ProcessState, err)
}

func tee(f *os.File, w io.Writer) io.Writer {
	if w == nil {
		return f
	}
	return io.MultiWriter(f, w)
}

func exitOf(ps *os.ProcessState, err error) Result {
	if ps == nil {
		return Result{ExitCode: -1, Reason: err.Error()}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Result{ExitCode: 128 + int(ws.Signal()), Reason: "killed by signal " + ws.Signal().String()}
	}
	return Result{ExitCode: ps.ExitCode()}
}

func (u *uploader) putLogs(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var errs []error
	for name, p := range map[string]string{"stdout.log": u.stdoutPath, "stderr.log": u.stderrPath} {
		if err := store.PutCopy(ctx, u.o.Store, u.key(name), p); err != nil {
			errs = append(errs, fmt.Errorf("upload %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// finish uploads everything the trial left: metrics (with stdout's ::metric lines when asked),
// result, artifacts, logs and params, then the record when asked. What it left out is noted at
// the end of the trial's stderr (the stored log and the container's), since the runner that
// reads this attempt's record may be elsewhere. It returns the notes and the upload errors.
func (u *uploader) finish(ctx context.Context, res Result, started time.Time, stderr *os.File) ([]string, error) {
	o := u.o
	var errs []error
	if o.ScanStdoutMetrics {
		if err := track.AppendStdoutMetrics(u.stdoutPath, filepath.Join(o.OutputDir, "metrics.jsonl")); err != nil {
			errs = append(errs, err)
		}
	}
	notes, err := store.PutOutputs(ctx, o.Store, o.RunID, o.Trial, o.OutputDir, false)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range notes {
		fmt.Fprintf(tee(stderr, o.Stderr), "jikken trial-exec: note: %s\n", n)
	}
	if err := u.putLogs(ctx); err != nil {
		errs = append(errs, err)
	}
	if o.Params != nil {
		if err := o.Store.Put(ctx, u.key("params.json"), bytes.NewReader(o.Params), int64(len(o.Params))); err != nil {
			errs = append(errs, fmt.Errorf("upload params.json: %w", err))
		}
	}
	upload := errors.Join(errs...)
	if o.Record != nil {
		if err := u.record(ctx, res, upload, notes, started); err != nil {
			upload = errors.Join(upload, err)
		}
	}
	return notes, upload
}

// record writes trial.json for a trial that ran without a runner.
func (u *uploader) record(ctx context.Context, res Result, upload error, notes []string, started time.Time) error {
	rec := *u.o.Record
	rec.Run, rec.Name, rec.Tool = u.o.RunID, u.o.Trial, "jikken "+version.String()
	end := time.Now().UTC()
	code := res.ExitCode
	rec.ExitCode, rec.Reason = &code, res.Reason
	switch {
	case upload != nil:
		rec.Status, rec.Reason = store.Failed, "outputs did not reach the store: "+upload.Error()
	case code == 0:
		rec.Status = store.Succeeded
	default:
		rec.Status = store.Failed
		if rec.Reason == "" {
			rec.Reason = fmt.Sprintf("exit status %d", code)
		}
	}
	st := started.UTC()
	n := u.o.Attempt
	if n < 1 {
		n = 1
	}
	rec.Attempts = append(rec.Attempts, store.Attempt{N: n, Started: st, Finished: end, ExitCode: &code, Reason: rec.Reason, Notes: notes})
	rec.Started, rec.Finished = &st, &end
	b, err := json.MarshalIndent(&rec, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := u.o.Store.Put(ctx, u.key("trial.json"), bytes.NewReader(b), int64(len(b))); err != nil {
		return fmt.Errorf("record trial: %w", err)
	}
	return nil
}

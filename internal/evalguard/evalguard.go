package evalguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/jikken-dev/jikken/experiment"
)

// Defaults: above what real experiments need (a 100,000-trial array built with string
// concatenation took 15 s and 0.8 GB here under a load average of 15; with std.format's '%' it
// took 8.5 min and 1.1 GB), below what hurts a laptop.
const (
	DefaultMemory  int64 = 4 << 30
	DefaultTimeout       = 5 * time.Minute
)

// exitMemory is the child's exit status when its heap passed the limit.
const exitMemory = 3

// ChildEnv is set in the child's environment. A process that has it never starts a child of
// its own (Nested): should Exe not be a program that serves, nothing can multiply.
const ChildEnv = "JIKKEN_EVAL_CHILD"

// Nested reports whether this process is a child a Guard started.
func Nested() bool { return os.Getenv(ChildEnv) == "1" }

// Guard evaluates experiment files in child processes: Exe with Args is a program whose job is
// Serve (jikken's hidden 'eval-experiment' command).
type Guard struct {
	Exe  string
	Args []string
	// Memory is how many bytes the evaluation may use; Timeout how long it may take.
	Memory  int64
	Timeout time.Duration
}

type request struct {
	Path   string             `json:"path"`
	Opts   experiment.Options `json:"opts"`
	Memory int64              `json:"memory"`
}

type response struct {
	Evaluation *experiment.Evaluation `json:"evaluation,omitempty"`
	Error      string                 `json:"error,omitempty"`
}

// LimitError says an evaluation was stopped at a limit (experiment.Load names the file).
type LimitError struct {
	Limit string // "memory" or "time"
	Value string // the limit, for people: "2Gi", "1m0s"
	Flag  string // the flag that raises it
}

func (e *LimitError) Error() string {
	what := "used more than " + e.Value + " of memory"
	if e.Limit == "time" {
		what = "took longer than " + e.Value
	}
	return fmt.Sprintf("stopped: the Jsonnet evaluation %s (a huge std.range, a string or array that keeps doubling, an endless recursion?); fix the file, or raise the limit with %s if it really needs more",
		what, e.Flag)
}

// Evaluate evaluates path in a child process, as experiment.Options.Evaluator. In a child
// (Nested) it evaluates in this process: the parent bounds it already.
func (g *Guard) Evaluate(path string, opts experiment.Options) (*experiment.Evaluation, error) {
	if Nested() {
		return experiment.Evaluate(path, opts)
	}
	memory, timeout := g.Memory, g.Timeout
	if memory <= 0 {
		memory = DefaultMemory
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	req, err := json.Marshal(request{Path: path, Opts: opts, Memory: memory})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.Exe, g.Args...)
	cmd.WaitDelay = 5 * time.Second
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	var stdout bytes.Buffer
	stderr := &head{max: 8 << 10}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(req), &stdout, stderr
	runErr := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, &LimitError{Limit: "time", Value: timeout.String(), Flag: "--eval-timeout"}
	case errors.As(runErr, &ee) && (ee.ExitCode() == exitMemory || outOfMemory(stderr.String())):
		return nil, &LimitError{Limit: "memory", Value: resource.NewQuantity(memory, resource.BinarySI).String(), Flag: "--eval-memory"}
	case runErr != nil:
		lines := strings.SplitN(strings.TrimSpace(stderr.String()), "\n", 4)
		return nil, fmt.Errorf("the process evaluating it failed (%v): %s", runErr, strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	var resp response
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("the process evaluating it answered nonsense (%v); is %s a jikken binary?", err, g.Exe)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	if resp.Evaluation == nil {
		return nil, fmt.Errorf("the process evaluating it gave no result")
	}
	return resp.Evaluation, nil
}

// outOfMemory reports whether the Go runtime died for want of memory (the address-space limit
// Serve sets makes an allocation fail before the heap check sees it).
func outOfMemory(stderr string) bool {
	return strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory")
}

// head keeps the first max bytes written to it: where the Go runtime says why it died, before
// the goroutine dump.
type head struct {
	max int
	b   []byte
}

func (h *head) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *head) String() string { return string(h.b) }

// Serve is the child's side: it reads one request from in, evaluates it under the request's
// memory limit and writes the result to out. When the heap passes the limit it calls exit,
// since an evaluation cannot be stopped otherwise.
func Serve(in io.Reader, out io.Writer, exit func(code int)) error {
	var req request
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return fmt.Errorf("eval-experiment: read request: %w", err)
	}
	if req.Memory > 0 {
		limitAddressSpace(req.Memory)
		debug.SetMemoryLimit(req.Memory)
		stop := watchHeap(req.Memory, func() { exit(exitMemory) })
		defer stop()
	}
	var resp response
	ev, err := experiment.Evaluate(req.Path, req.Opts)
	if err != nil {
		resp.Error = err.Error()
	} else {
		resp.Evaluation = ev
	}
	return json.NewEncoder(out).Encode(resp)
}

// watchHeap calls over when the heap passes limit, checking every few milliseconds; stop ends
// the watch.
func watchHeap(limit int64, over func()) (stop func()) {
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 && int64(sample[0].Value.Uint64()) > limit {
					over()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

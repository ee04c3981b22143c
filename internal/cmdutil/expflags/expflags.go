// Package expflags holds the flags of the commands that evaluate an experiment file (run,
// validate, export), kept apart from cmdutil so that binaries without those commands
// (git-ghost) link no Jsonnet.
package expflags

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/evalguard"
)

// EvalCommand is the hidden command that evaluates an experiment file for a parent jikken
// (evalguard.Serve), so the parent can bound its memory and time.
const EvalCommand = "eval-experiment"

// Flags are the flags of the commands that evaluate an experiment file (run,
// validate, export): Jsonnet variables and the limits on the evaluation and the plan. Zero
// values are the defaults.
type Flags struct {
	ExtStr, TLAStr []string
	MaxTrials      int
	EvalMemory     string
	EvalTimeout    time.Duration
}

// Add adds the flags to cmd.
func (e *Flags) Add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&e.ExtStr, "ext-str", nil, "pass std.extVar(KEY) to the experiment as KEY=VALUE (repeatable)")
	fl.StringArrayVar(&e.TLAStr, "tla-str", nil, "pass a top-level argument to the experiment as KEY=VALUE (repeatable)")
	fl.IntVar(&e.MaxTrials, "max-trials", experiment.DefaultMaxTrials, "refuse an experiment of more trials than this (a matrix is checked before it is expanded)")
	fl.StringVar(&e.EvalMemory, "eval-memory", resource.NewQuantity(evalguard.DefaultMemory, resource.BinarySI).String(), "memory the Jsonnet evaluation may use (a quantity: 512Mi, 4Gi)")
	fl.DurationVar(&e.EvalTimeout, "eval-timeout", evalguard.DefaultTimeout, "how long the Jsonnet evaluation may take")
}

// Options returns the experiment options the flags ask for: the variables, the cap on trials,
// and an evaluation in a bounded child process of this jikken (in this process when the
// executable is unknown).
func (e *Flags) Options(f *cmdutil.Factory) (experiment.Options, error) {
	ext, err := ParseKV("ext-str", e.ExtStr)
	if err != nil {
		return experiment.Options{}, err
	}
	tla, err := ParseKV("tla-str", e.TLAStr)
	if err != nil {
		return experiment.Options{}, err
	}
	if e.MaxTrials < 0 {
		return experiment.Options{}, cmdutil.UsageError("--max-trials %d: want 1 or more", e.MaxTrials)
	}
	memory := resource.NewQuantity(evalguard.DefaultMemory, resource.BinarySI)
	if e.EvalMemory != "" {
		q, err := resource.ParseQuantity(e.EvalMemory)
		if err != nil || q.Value() < 1<<20 {
			return experiment.Options{}, cmdutil.UsageError("--eval-memory %q: want a quantity of at least 1Mi, such as 512Mi or 4Gi", e.EvalMemory)
		}
		memory = &q
	}
	if e.EvalTimeout < 0 {
		return experiment.Options{}, cmdutil.UsageError("--eval-timeout %s: want a positive duration such as 30s or 5m", e.EvalTimeout)
	}
	opts := experiment.Options{ExtStr: ext, TLAStr: tla, MaxTrials: e.MaxTrials}
	if f.Executable != "" {
		g := &evalguard.Guard{Exe: f.Executable, Args: []string{EvalCommand}, Memory: memory.Value(), Timeout: e.EvalTimeout}
		opts.Evaluator = g.Evaluate
	}
	return opts, nil
}

// ParseKV reads repeated KEY=VALUE flags into a map (nil when there are none).
func ParseKV(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, cmdutil.UsageError("--%s %q: want KEY=VALUE", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}

package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/search"
)

// minimalSearch is the form issue 27 requires to work as written.
const minimalSearch = `{ name: "tune", search: { name: "s", cmd: "echo {{x}} {{y}}", space: { x: { low: -5, high: 5 }, y: { low: -5, high: 5 } }, objective: { metric: "loss", direction: "min" }, sampler: "tpe", trials: 60, seed: 1 } }`

func TestSearchMinimalForm(t *testing.T) {
	p := writeFile(t, t.TempDir(), "tune.jsonnet", minimalSearch)
	exp, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := exp.Search
	if s == nil || len(exp.Trials) != 0 {
		t.Fatalf("search %+v, trials %d", s, len(exp.Trials))
	}
	if s.Name != "s" || s.Trials != 60 || s.Seed != 1 || s.Sampler.Name != "tpe" || s.Pruner.Name != "none" || s.Parallel != 0 {
		t.Fatalf("search %+v", s)
	}
	if len(s.Space.Params) != 2 || s.Space.Params[0].Name != "x" || s.Space.Params[0].Low != -5 || s.Space.Params[1].High != 5 {
		t.Fatalf("space %+v", s.Space)
	}
	if len(s.Objectives) != 1 || s.Objectives[0] != (search.Objective{Metric: "loss", Direction: search.Minimize}) {
		t.Fatalf("objectives %+v", s.Objectives)
	}
	tr, err := s.Trial(7, map[string]any{"x": 1.5, "y": int64(-2)})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "s-7" || tr.Group != "s" || tr.Cmd.Shell != "echo 1.5 -2" || tr.Params["x"] != 1.5 {
		t.Fatalf("trial %+v", tr)
	}
	// A value the shell would read as code reaches it through the environment, as in a matrix.
	tr, err = s.Trial(8, map[string]any{"x": "a b", "y": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Cmd.Shell != `echo "${JIKKEN_PARAM_X}" 1` {
		t.Fatalf("cmd %q", tr.Cmd.Shell)
	}
	if n, ok := s.IsTrial("s-12"); !ok || n != 12 {
		t.Fatal("IsTrial(s-12)")
	}
	for _, name := range []string{"s-", "s-01", "t-1", "s-x"} {
		if _, ok := s.IsTrial(name); ok {
			t.Fatalf("IsTrial(%s)", name)
		}
	}
}

func TestSearchFullForm(t *testing.T) {
	p := writeFile(t, t.TempDir(), "tune.jsonnet", `{
  defaults: { timeout: "1m", env: { A: "1" } },
  search: {
    name: "opt", cmd: ["./train", "--lr={{lr}}", "--opt={{opt}}"], image: "busybox", retries: 1,
    resources: { cpu: 1 },
    space: {
      lr: { low: 1e-4, high: 1, log: true },
      layers: { type: "int", low: 1, high: 8 },
      width: { low: 0, high: 1, step: 0.25 },
      opt: ["adam", "sgd"],
      momentum: { low: 0, high: 0.99, when: { opt: "sgd" } },
    },
    objectives: [{ metric: "loss" }, { metric: "acc", direction: "max" }],
    constraints: ["mem_over"],
    sampler: { name: "tpe", options: { n_startup_trials: 5 } },
    pruner: "median",
    trials: 10, parallel: 3, wall: "1h", seed: 9,
  },
}`)
	exp, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := exp.Search
	if s.Parallel != 3 || time.Duration(s.Wall) != time.Hour || s.Pruner.Name != "median" || s.Sampler.Options["n_startup_trials"] != int64(5) {
		t.Fatalf("search %+v", s)
	}
	byName := map[string]search.Param{}
	for _, p := range s.Space.Params {
		byName[p.Name] = p
	}
	if !byName["lr"].Log || byName["layers"].Kind != search.Int || byName["width"].Step != 0.25 || byName["opt"].Kind != search.Categorical ||
		byName["momentum"].When == nil || byName["momentum"].When.Param != "opt" {
		t.Fatalf("space %+v", s.Space)
	}
	if len(s.Objectives) != 2 || s.Objectives[1].Direction != search.Maximize || s.Constraints[0] != "mem_over" {
		t.Fatalf("objectives %+v %v", s.Objectives, s.Constraints)
	}
	tr, err := s.Trial(0, map[string]any{"lr": 0.01, "opt": "adam", "layers": int64(2), "width": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tr.Cmd.Argv, " ") != "./train --lr=0.01 --opt=adam" || tr.Image != "busybox" || tr.Retries != 1 ||
		time.Duration(tr.Timeout) != time.Minute || tr.Env["A"] != "1" || tr.Resources.CPU != 1 {
		t.Fatalf("trial %+v", tr)
	}
}

func TestSearchBadInput(t *testing.T) {
	base := func(change string) string {
		return `{ search: { name: "s", cmd: "echo {{x}}", space: { x: { low: 0, high: 1 } }, objective: { metric: "loss" }, trials: 5 } + ` + change + ` }`
	}
	for _, c := range []struct{ name, src, field, msg string }{
		{"empty space", base(`{ space: {} }`), "search.space", "empty"},
		{"no space", base(`{ space: null }`), "search.space", "missing"},
		{"low above high", base(`{ space: { x: { low: 2, high: 1 } } }`), "search.space.x.low", "greater than high"},
		{"log with low 0", base(`{ space: { x: { low: 0, high: 1, log: true } } }`), "search.space.x.low", "log-scale param needs low > 0"},
		{"unknown sampler", base(`{ sampler: "annealing" }`), "search.sampler", "annealing"},
		{"unknown pruner", base(`{ pruner: "stop-early" }`), "search.pruner", "stop-early"},
		{"no trials", base(`{ trials: 0 }`), "search.trials", ">= 1"},
		{"missing budget", `{ search: { name: "s", cmd: "echo {{x}}", space: { x: { low: 0, high: 1 } }, objective: "loss" } }`, "search.trials", "missing"},
		{"no objective", `{ search: { name: "s", cmd: "echo {{x}}", space: { x: { low: 0, high: 1 } }, trials: 3 } }`, "search.objective", "missing"},
		{"bad direction", base(`{ objective: { metric: "loss", direction: "down" } }`), "search.objective.direction", "down"},
		{"unknown placeholder", base(`{ cmd: "echo {{z}}" }`), "search.cmd", "{{z}}"},
		{"unknown field", base(`{ trails: 3 }`), "search.trails", "unknown"},
		{"depends", base(`{ depends: ["a"] }`), "search.depends", "use after"},
		{"after an unknown trial", base(`{ after: ["build"] }`), "search.after", "unknown trial"},
		{"int with a fraction", base(`{ space: { x: { type: "int", low: 0.5, high: 3 } } }`), "search.space.x.low", "whole"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "bad.jsonnet", c.src)
			_, err := Load(p, Options{})
			var verr *ValidationError
			if err == nil || !asValidation(err, &verr) {
				t.Fatalf("want a validation error, got %v", err)
			}
			for _, pr := range verr.Problems {
				if pr.Field == c.field && strings.Contains(pr.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("want a problem in %s saying %q, got %v", c.field, c.msg, err)
		})
	}
}

func asValidation(err error, dst **ValidationError) bool {
	v, ok := err.(*ValidationError)
	*dst = v
	return ok
}

func TestSearchClashesWithATrial(t *testing.T) {
	p := writeFile(t, t.TempDir(), "clash.jsonnet", `{ trials: [{ name: "s-1", cmd: "true" }],
  search: { name: "s", cmd: "echo {{x}}", space: { x: { low: 0, high: 1 } }, objective: "loss", trials: 5 } }`)
	if _, err := Load(p, Options{}); err == nil || !strings.Contains(err.Error(), "clashes with the search") {
		t.Fatalf("got %v", err)
	}
}

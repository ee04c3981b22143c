package plan_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/runner/plan"
)

// BenchmarkSearch10k runs a whole search of 10,000 instant trials (window 64) through the core
// and the planner, every store write and attempt answered at once: the runner's own cost per
// trial of a search (the sampler is the cheap random one, so its cost is not what is measured).
func BenchmarkSearch10k(b *testing.B) {
	src, _ := json.Marshal(map[string]any{"search": map[string]any{"name": "s", "cmd": "f {{x}}", "objective": "loss",
		"sampler": "random", "trials": 10_000, "parallel": 64,
		"space": map[string]any{"x": map[string]any{"low": 0, "high": 1}}}})
	exp, err := experiment.Parse("bench.jsonnet", src)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Unix(1_700_000_000, 0)
	for b.Loop() {
		p, _ := plan.New(exp.Search, plan.Settings{Jobs: 64, Ahead: plan.Ahead})
		c := core.New(core.Config{RunID: "r", Jobs: 64, Planner: p})
		queue := c.Step(core.Begin{At: at})
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			switch a := a.(type) {
			case core.Persist:
				queue = append(queue, c.Step(core.Persisted{Trial: a.Trial, Version: a.Version, At: at})...)
			case core.StartAttempt:
				queue = append(queue, c.Step(core.Started{Trial: a.Trial, Attempt: a.Attempt, At: at})...)
				x := c.Trial(a.Trial).Params["x"].(float64)
				queue = append(queue, c.Step(core.Exited{Trial: a.Trial, Attempt: a.Attempt, Values: map[string]float64{"loss": x}, At: at})...)
			}
		}
		if !c.Done() || c.Counts().Succeeded != 10_000 {
			b.Fatalf("counts %+v", c.Counts())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/trial")
}

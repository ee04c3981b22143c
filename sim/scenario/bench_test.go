package scenario

import (
	"fmt"
	"testing"
)

func phillyScenario(nodes, jobs int, profile string) *Scenario {
	sc, err := Parse(fmt.Appendf(nil, `
seed: 42
cluster:
  nodeGroups:
    - {name: gpu, count: %d, capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8"}}
workload:
  - preset: {name: philly, jobs: %d, load: 0.9}
scheduler: {profile: %s}
sample: 300
`, nodes, jobs, profile))
	if err != nil {
		panic(err)
	}
	return sc
}

// BenchmarkPhilly runs the philly preset under kube-default. The 1000x8/100k case is the
// issue's target (see bench/sim); run it with -bench 'Philly/1000' -benchtime 1x.
func BenchmarkPhilly(b *testing.B) {
	for _, c := range []struct{ nodes, jobs int }{{100, 10000}, {1000, 100000}} {
		b.Run(fmt.Sprintf("%dx8/%d", c.nodes, c.jobs), func(b *testing.B) {
			for range b.N {
				built, err := Build(phillyScenario(c.nodes, c.jobs, "kube-default"), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := built.Engine.Run(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(c.jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			}
		})
	}
}

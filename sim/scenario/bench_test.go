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

// BenchmarkHosted runs the philly preset under kube-framework: kube-scheduler's default
// plugins as framework plugins, hosted by sim/kubehost (v1 objects, NodeInfo views, CycleState
// and statuses per attempt). Run the 1,000-node case with -bench 'Hosted/1000'
// -benchtime 1x; pods/s counts the pods the simulation scheduled and ran per wall second.
func BenchmarkHosted(b *testing.B) {
	for _, c := range []struct{ nodes, jobs int }{{100, 10000}, {1000, 100000}} {
		b.Run(fmt.Sprintf("%dx8/%d", c.nodes, c.jobs), func(b *testing.B) {
			for range b.N {
				built, err := Build(phillyScenario(c.nodes, c.jobs, KubeFramework), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := built.Engine.Run(); err != nil {
					b.Fatal(err)
				}
				pods := len(built.Engine.Cluster().Pods())
				b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			}
		})
	}
}

// lasGangsScenario is the gang benchmark of bench/sim: gavel's workload, 5,000 jobs at offered
// load 1.3 under las. On 32 nodes x 4 GPUs its 8-GPU jobs are two-node gangs; on 4 nodes x 32
// GPUs (the same GPUs) there are no gangs.
func lasGangsScenario(gangs bool, tick string) *Scenario {
	nodes := `{name: gpu, count: 32, capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "4"}}`
	if !gangs {
		nodes = `{name: gpu, count: 4, capacity: {cpu: "512", memory: 4096Gi, nvidia.com/gpu: "32"}}`
	}
	sc, err := Parse(fmt.Appendf(nil, `
seed: 42
cluster:
  nodeGroups: [%s]
workload:
  - preset: {name: gavel, jobs: 5000, load: 1.3}
scheduler: {profile: las}
tick: %s
`, nodes, tick))
	if err != nil {
		panic(err)
	}
	return sc
}

// BenchmarkLASGangs runs las on 5,000 gavel jobs with and without multi-node gangs, and with
// 1 s ticks (see bench/sim/README.md).
func BenchmarkLASGangs(b *testing.B) {
	for _, c := range []struct {
		name  string
		gangs bool
		tick  string
	}{{"gangs", true, "0"}, {"no-gangs", false, "0"}, {"gangs/tick1s", true, "1"}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				built, err := Build(lasGangsScenario(c.gangs, c.tick), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := built.Engine.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

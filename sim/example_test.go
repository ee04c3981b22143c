package sim_test

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// largestFirst is a whole-queue scheduler: each pass it starts the biggest GPU requests first,
// each on the first node with room.
type largestFirst struct{}

func (largestFirst) Schedule(c *sim.Cluster) error {
	queue := slices.Clone(c.Pending())
	slices.SortStableFunc(queue, func(a, b *sim.Pod) int {
		return cmp.Compare(b.Requests[sim.GPUIndex], a.Requests[sim.GPUIndex])
	})
	for _, p := range queue {
		for _, n := range c.Nodes() {
			if p.Feasible(n) {
				if err := c.Bind(p, n); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// A scheduler is anything with a Schedule method; the engine calls it after each instant's
// events and checks every Bind.
func Example_batchScheduler() {
	var capacity sim.Resources
	capacity[sim.GPUIndex], capacity[sim.PodsIndex] = 4*sim.Milli, 110*sim.Milli
	jobs := []submitter.Job{
		{Name: "small", Duration: 100, GPU: 1 * sim.Milli},
		{Name: "big", Duration: 100, GPU: 4 * sim.Milli},
	}
	e, err := sim.New(sim.Config{Nodes: []sim.NodeSpec{{Name: "n0", Capacity: capacity}}, Scheduler: largestFirst{},
		Submitters: []sim.Submitter{submitter.NewTrace(jobs)}, Rand: sim.NewRand(1, 0)})
	if err != nil {
		panic(err)
	}
	if err := e.Run(); err != nil {
		panic(err)
	}
	for _, p := range e.Cluster().Pods() {
		fmt.Printf("%s: start %v, end %v\n", p.Name, p.FirstStart, p.End)
	}
	// Output:
	// small: start 100s, end 200s
	// big: start 0s, end 100s
}

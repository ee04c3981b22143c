package scheduler_test

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
	"github.com/jikken-dev/jikken/sim/scheduler"
	"github.com/jikken-dev/jikken/sim/submitter"
)

// sameRack is a custom filter plugin: pods labelled with a rack may only run on nodes of
// that rack.
type sameRack struct{}

func (sameRack) Name() string { return "SameRack" }

func (sameRack) Filter(_ *scheduler.State, p *sim.Pod, n *sim.Node) *scheduler.Status {
	if want, ok := p.Labels["rack"]; ok && n.Labels["rack"] != want {
		return &scheduler.Status{Code: scheduler.UnschedulableAndUnresolvable, Reason: "other rack"}
	}
	return nil
}

// A custom plugin joins the default profile by name, next to the stock filters.
func Example_customPlugin() {
	names := sim.NewNames()
	var capacity sim.Resources
	capacity[sim.CPUIndex], capacity[sim.GPUIndex], capacity[sim.PodsIndex] = 32*sim.Milli, 8*sim.Milli, 110*sim.Milli
	nodes := []sim.NodeSpec{
		{Name: "r1-a", Capacity: capacity, Labels: map[string]string{"rack": "r1"}},
		{Name: "r2-a", Capacity: capacity, Labels: map[string]string{"rack": "r2"}},
	}
	profile := scheduler.KubeDefault()
	profile.Custom = map[string]scheduler.Plugin{"SameRack": sameRack{}}
	profile.Filter = append(profile.Filter, "SameRack")
	fw, err := scheduler.New(profile, names, sim.NewRand(1, 1))
	if err != nil {
		panic(err)
	}
	job := submitter.Job{Name: "train", User: "alice", Duration: 60, GPU: 4 * sim.Milli,
		Template: &sim.Pod{Labels: map[string]string{"rack": "r2"}}}
	job.Template.Requests = sim.Resources{sim.GPUIndex: 4 * sim.Milli}
	e, err := sim.New(sim.Config{Names: names, Nodes: nodes, Scheduler: fw, Rand: sim.NewRand(1, 0),
		Submitters: []sim.Submitter{submitter.NewTrace([]submitter.Job{job})}})
	if err != nil {
		panic(err)
	}
	if err := e.Run(); err != nil {
		panic(err)
	}
	for _, p := range e.Cluster().Pods() {
		fmt.Printf("%s ran on %s from %v to %v\n", p.Name, p.LastNode, p.FirstStart, p.End)
	}
	// Output: train ran on r2-a from 0s to 60s
}

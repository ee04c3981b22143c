package docker_test

import (
	"context"
	"testing"

	"github.com/moby/moby/client"

	"github.com/jikken-dev/jikken/backend/docker"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/backendtest"
)

func TestConformance(t *testing.T) {
	if engineErr != nil {
		t.Skip(engineErr)
	}
	var runs []string
	backendtest.Run(t, backendtest.Harness{
		Registered: "docker",
		New:        func(t *testing.T) runner.Backend { return newBackend(t) },
		Trial: func(name, script string) experiment.Trial {
			return experiment.Trial{Name: name, Image: busybox, Cmd: experiment.Command{Shell: script}}
		},
	})
	// Every container the suite started is gone.
	cs, err := api.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", docker.LabelRun)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		if id := c.Labels[docker.LabelRun]; len(id) > 12 && id[:12] == "conformance-" {
			runs = append(runs, id)
			_, _ = api.ContainerRemove(context.Background(), c.ID, client.ContainerRemoveOptions{Force: true})
		}
	}
	if len(runs) > 0 {
		t.Errorf("containers of runs %v left behind", runs)
	}
}

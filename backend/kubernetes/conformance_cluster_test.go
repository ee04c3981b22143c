package kubernetes_test

import (
	"testing"

	"github.com/jikken-dev/jikken/backend/kubernetes/k8stest"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/backendtest"
)

// TestClusterConformance runs the backend contract every backend passes against a real control
// plane. KWOK plays the kubelet: pods never run a process, so the suite's scripts are played by
// KWOK stages (an exit code, a pod that runs for 300 s) and the checks that need a real process
// (logs, outputs, environment, signals, health) are skipped here; they run on the local and
// Docker backends, which share the executor code with the pods.
func TestClusterConformance(t *testing.T) {
	e := setup(t, k8stest.Options{DelayMS: 500}, k8stest.Node{Name: "n0"}, k8stest.Node{Name: "n1"})
	backendtest.Run(t, backendtest.Harness{
		Registered: "kubernetes",
		New:        func(t *testing.T) runner.Backend { return e.backend(t, nil) },
		Trial:      playedByKWOK,
		Cannot: map[backendtest.Capability]string{
			backendtest.Processes: "KWOK fakes the kubelet: no container runs",
			backendtest.Health:    "KWOK fakes the kubelet: no probe runs",
		},
	})
}

// playedByKWOK is a trial whose pod ends as script would, through the labels KWOK's stages match.
func playedByKWOK(name, script string) experiment.Trial {
	labels := map[string]string{}
	switch script {
	case "exit 0", "true":
	case "exit 3":
		labels["jikken-test/outcome"] = "fail"
	case "false":
		labels["jikken-test/outcome"] = "exit-1"
	case "sleep 300":
		labels["jikken-test/delay"] = "300s"
	default:
		// A script no stage plays: the pod never ends, and the check waiting for it fails.
		labels["jikken-test/outcome"] = "hang"
	}
	return fakeTrial(name, labels)
}

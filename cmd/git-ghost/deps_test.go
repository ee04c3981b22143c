package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsLean: git-ghost links what sending a working tree needs, not the rest of jikken
// (the simulator, Kubernetes, Jsonnet): the shared command package carries none of them, so a
// change that makes it import them fails here rather than growing the binary unnoticed.
func TestDepsLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) > 150 {
		t.Errorf("git-ghost links %d packages, want at most 150 (docs/architecture.md)", len(deps))
	}
	for _, d := range deps {
		for _, banned := range []string{"k8s.io/", "github.com/google/go-jsonnet", "github.com/jikken-dev/jikken/sim", "github.com/jikken-dev/jikken/experiment", "github.com/jikken-dev/jikken/runner", "github.com/jikken-dev/jikken/store"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("git-ghost links %s", d)
			}
		}
	}
}

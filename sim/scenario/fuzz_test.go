package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzBuild feeds arbitrary scenario text through parsing and validation: it may be rejected,
// but it must never panic, and whatever builds must run a few steps.
func FuzzBuild(f *testing.F) {
	files, _ := filepath.Glob("../../examples/sim/*.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(randomScenario(1, "drf")))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(data)
		if err != nil {
			return
		}
		sc.Dir = t.TempDir()
		sc.Scheduler.Extenders = nil
		sc.Scheduler.Remote = nil
		for i := range sc.Workload {
			sc.Workload[i].Remote = nil
		}
		b, err := Build(sc, Options{})
		if err != nil {
			return
		}
		for i := 0; i < 50 && !b.Engine.Done(); i++ {
			if err := b.Engine.Step(); err != nil {
				return
			}
		}
	})
}

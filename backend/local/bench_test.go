//go:build unix

package local_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner"
)

// BenchmarkStartWait is the cost of one attempt of `true` on the local backend, without limits
// and with cpu and memory limits (a cgroup made, entered, checked for OOM kills and removed).
func BenchmarkStartWait(b *testing.B) {
	for _, c := range []struct {
		name string
		r    experiment.Resources
	}{{"plain", experiment.Resources{}}, {"limits", experiment.Resources{CPU: 1, Memory: 256 << 20}}} {
		b.Run(c.name, func(b *testing.B) {
			if c.r.CPU > 0 {
				needCgroups(b)
			}
			be := &local.Backend{}
			tr := experiment.Trial{Name: "true", Cmd: experiment.Command{Shell: "true"}, Resources: c.r}
			dir, work := b.TempDir(), b.TempDir()
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				a, err := runner.NewAttempt(filepath.Join(dir, fmt.Sprint(i)), "bench", tr, 1)
				if err != nil {
					b.Fatal(err)
				}
				a.Workdir = work
				p, err := be.Start(ctx, a)
				if err != nil {
					b.Fatal(err)
				}
				if e := p.Wait(); e.Code != 0 {
					b.Fatalf("exit %+v", e)
				}
			}
		})
	}
}

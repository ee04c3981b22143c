package cgroup

import (
	"os/exec"
	"testing"
)

// BenchmarkStart is the cost of starting and waiting for /bin/true in a group, by the limits
// set (on v1 each hierarchy joined is a migration), next to the same without a group.
func BenchmarkStart(b *testing.B) {
	m, err := Detect(Options{})
	if err != nil {
		b.Skip(err)
	}
	for _, c := range []struct {
		name string
		l    *Limits
	}{
		{"none", nil},
		{"memory", &Limits{Memory: 256 << 20}},
		{"cpu", &Limits{CPU: 1}},
		{"both", &Limits{CPU: 1, Memory: 256 << 20}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var g *Group
			if c.l != nil {
				if g, err = m.Create("bench", c.name, 1, *c.l); err != nil {
					b.Fatal(err)
				}
				defer g.Remove()
			}
			for range b.N {
				cmd := exec.Command("/bin/true")
				if g != nil {
					err = g.Start(cmd)
				} else {
					err = cmd.Start()
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreateRemove is the cost of making a group with limits and removing it.
func BenchmarkCreateRemove(b *testing.B) {
	m, err := Detect(Options{})
	if err != nil {
		b.Skip(err)
	}
	for range b.N {
		g, err := m.Create("bench", "t", 1, Limits{CPU: 1, Memory: 256 << 20})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Remove(); err != nil {
			b.Fatal(err)
		}
	}
}

package policy

import (
	"fmt"

	"github.com/jikken-dev/jikken/sim"
)

// Placement picks a node for a pod among the feasible ones, or nil.
type Placement interface {
	// Place returns the best feasible node for p other than skip (which may be nil).
	Place(c *sim.Cluster, p *sim.Pod, skip *sim.Node) *sim.Node
}

// Placement strategies by name.
const (
	Spread       = "spread"
	Pack         = "pack"
	Consolidated = "consolidated"
	FirstFit     = "first-fit"
)

// NewPlacement returns the named strategy: spread (most free of the pod's key resource after
// placement), pack (best fit: least free after placement), consolidated (nodes already running
// the pod's gang first, then best fit), first-fit (the first node in cluster order where the
// pod fits). The key resource is GPU for GPU pods, else CPU.
func NewPlacement(name string) (Placement, error) {
	switch name {
	case Spread:
		return scored{spread}, nil
	case Pack, "", "best-fit":
		return scored{pack}, nil
	case Consolidated:
		return scored{consolidated}, nil
	case FirstFit:
		return firstFit{}, nil
	}
	return nil, fmt.Errorf("placement %q is unknown; use pack, spread, consolidated or first-fit", name)
}

// firstFit takes the first feasible node in cluster order (nodes are numbered in the order
// they were created).
type firstFit struct{}

func (firstFit) Place(c *sim.Cluster, p *sim.Pod, skip *sim.Node) *sim.Node {
	if !p.Requests.Fits(c.MaxFree()) {
		return nil
	}
	for _, n := range c.Nodes() {
		if n != skip && p.Feasible(n) {
			return n
		}
	}
	if skip == nil {
		c.TightenMaxFree()
	}
	return nil
}

type scored struct {
	score func(p *sim.Pod, n *sim.Node) int64
}

func (s scored) Place(c *sim.Cluster, p *sim.Pod, skip *sim.Node) *sim.Node {
	if !p.Requests.Fits(c.MaxFree()) {
		return nil
	}
	var best *sim.Node
	var bestScore int64
	for _, n := range c.Nodes() {
		if n == skip || !p.Feasible(n) {
			continue
		}
		if sc := s.score(p, n); best == nil || sc > bestScore {
			best, bestScore = n, sc
		}
	}
	if best == nil && skip == nil {
		c.TightenMaxFree()
	}
	return best
}

func keyIndex(p *sim.Pod) int {
	if p.Requests[sim.GPUIndex] > 0 {
		return sim.GPUIndex
	}
	return sim.CPUIndex
}

func freeAfter(p *sim.Pod, n *sim.Node) int64 {
	k := keyIndex(p)
	return n.Capacity[k] - n.Allocated[k] - p.Requests[k]
}

func spread(p *sim.Pod, n *sim.Node) int64 { return freeAfter(p, n) }

func pack(p *sim.Pod, n *sim.Node) int64 { return -freeAfter(p, n) }

func consolidated(p *sim.Pod, n *sim.Node) int64 {
	var siblings int64
	if p.Gang != "" {
		for _, q := range n.Pods() {
			if q.Gang == p.Gang {
				siblings++
			}
		}
	}
	// Siblings dominate; the free amount (at most 2^40 milli-units in practice) breaks ties.
	return siblings<<40 - freeAfter(p, n)
}

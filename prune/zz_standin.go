// TEMPORARY STAND-IN, written by helper "searchcore" so its branch builds before helper
// "pruner"'s package prune is merged. It follows /work/wt/CONTRACT.md: "none" and a median
// pruner. The integrator deletes this file when merging the pruner branch.

// Package prune decides when a search's trial should stop early (stand-in; see the pruner branch).
package prune

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Point is an intermediate value of the objective at a step.
type Point struct {
	Step  int64
	Value float64
}

// Curve is a trial's intermediate values.
type Curve struct {
	Number int
	Points []Point
	Done   bool
	Pruned bool
}

// Pruner says whether a trial should stop now.
type Pruner interface {
	Prune(number int, curves []Curve, minimize bool) (stop bool, why string)
}

// Names lists the pruners New knows.
func Names() []string { return []string{"none", "median"} }

// New builds a pruner by name.
func New(name string, options map[string]any) (Pruner, error) {
	switch name {
	case "none":
		return none{}, nil
	case "median":
		return median{}, nil
	}
	return nil, fmt.Errorf("unknown pruner %q; use one of %s", name, strings.Join(Names(), ", "))
}

type none struct{}

func (none) Prune(int, []Curve, bool) (bool, string) { return false, "" }

type median struct{}

func (median) Prune(number int, curves []Curve, minimize bool) (bool, string) {
	i := slices.IndexFunc(curves, func(c Curve) bool { return c.Number == number })
	if i < 0 || len(curves[i].Points) == 0 {
		return false, ""
	}
	last := curves[i].Points[len(curves[i].Points)-1]
	var at []float64
	for _, c := range curves {
		if c.Number == number {
			continue
		}
		for _, p := range c.Points {
			if p.Step == last.Step {
				at = append(at, p.Value)
			}
		}
	}
	if len(at) < 3 {
		return false, ""
	}
	sort.Float64s(at)
	m := at[len(at)/2]
	if (minimize && last.Value > m) || (!minimize && last.Value < m) {
		return true, fmt.Sprintf("pruned at step %d: %g is worse than the median %g of %d trials", last.Step, last.Value, m, len(at))
	}
	return false, ""
}

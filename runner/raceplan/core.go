// This file joins the planner to the runner core's Planner interface (runner/core/plan.go, from
// the searchcore branch). Remove the build constraint above once that branch is merged.

package raceplan

import "github.com/jikken-dev/jikken/runner/core"

// Next implements core.Planner.
func (p *Planner) Next(v core.View) core.Decision {
	ts := make([]Trial, len(v.Trials))
	for i, t := range v.Trials {
		ts[i] = Trial{Index: t.Index, Name: t.Name, Status: t.Status, Values: t.Values}
	}
	d := p.Decide(ts)
	out := core.Decision{Add: d.Add, Complete: d.Complete}
	for _, dr := range d.Drop {
		out.Drop = append(out.Drop, core.Drop{Index: dr.Index, Reason: dr.Reason})
	}
	return out
}

var _ core.Planner = (*Planner)(nil)

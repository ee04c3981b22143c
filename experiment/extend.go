package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/trial"
)

// Growth is what extending a run's plan to a new plan changes: the trials to add and the
// trials of the old plan that wait for them.
type Growth struct {
	// Trials is the grown plan: the old trials, in their order and with their indexes, then
	// the added ones, numbered after them.
	Trials []Trial
	// Added are the names of the added trials, in plan order.
	Added []string
	// Rerun are old trials that must run again once the added trials have: those whose after
	// gained added trials (a step that compares a matrix group), and the trials that wait for
	// them, in plan order.
	Rerun []string
}

// ChangeError says that extending a plan would change a trial that is already in it.
type ChangeError struct {
	Trial string
	// Field is the trial's JSON field that differs; empty when the trial is missing from the
	// new plan.
	Field    string
	Old, New string
}

func (e *ChangeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("trial %s is not in the new plan; extend only adds trials: start a new run to drop one", e.Trial)
	}
	return fmt.Sprintf("trial %s changed: %s was %s, is now %s; extend only adds trials: start a new run to change one", e.Trial, e.Field, e.Old, e.New)
}

// Extend compares a run's plan (old) with the plan a new evaluation of its experiment gives
// (next) and returns the grown plan, or a *ChangeError naming the first old trial that next
// changes or drops. Only additions are allowed: every old trial must be in next with the same
// definition, except that its after may gain trials that next adds (a step that waits for a
// whole matrix group waits for the group's new trials too, and runs again). Indexes do not
// count: the added trials are numbered after the old ones, whatever their place in next.
func Extend(old, next []Trial) (*Growth, error) {
	byName := make(map[string]int, len(next))
	for i := range next {
		byName[next[i].Name] = i
	}
	known := make(map[string]bool, len(old))
	for i := range old {
		known[old[i].Name] = true
	}
	// A dropped trial is the first thing to say: the after of a step over its group changes too.
	for _, o := range old {
		if _, ok := byName[o.Name]; !ok {
			return nil, &ChangeError{Trial: o.Name}
		}
	}
	g := &Growth{Trials: make([]Trial, 0, len(next))}
	grew := map[string]bool{}
	for _, o := range old {
		n := next[byName[o.Name]]
		n.Index = o.Index
		gained, err := afterGained(o, n, known)
		if err != nil {
			return nil, err
		}
		if err := sameTrial(o, n); err != nil {
			return nil, err
		}
		if gained {
			grew[o.Name] = true
		}
		g.Trials = append(g.Trials, n)
	}
	for _, n := range next {
		if known[n.Name] {
			continue
		}
		n.Index = len(g.Trials)
		g.Trials = append(g.Trials, n)
		g.Added = append(g.Added, n.Name)
	}
	g.Rerun = rerun(g.Trials[:len(old)], grew)
	return g, nil
}

// afterGained reports whether n's after is o's plus trials that are not in the old plan; an
// after that lost or reordered old trials is a change.
func afterGained(o, n Trial, known map[string]bool) (bool, error) {
	var kept []string
	for _, a := range n.After {
		if known[a] {
			kept = append(kept, a)
		}
	}
	if !slices.Equal(kept, o.After) {
		return false, &ChangeError{Trial: o.Name, Field: "after", Old: quoteList(o.After), New: quoteList(n.After)}
	}
	return len(kept) < len(n.After), nil
}

// sameTrial compares two definitions of one trial field by field, as JSON, leaving out the
// index and after (see Extend).
func sameTrial(o, n Trial) error {
	of, err := fieldsOf(o)
	if err != nil {
		return err
	}
	nf, err := fieldsOf(n)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(of)+len(nf))
	for k := range of {
		keys = append(keys, k)
	}
	for k := range nf {
		if _, ok := of[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "index" || k == "after" {
			continue
		}
		if !bytes.Equal(of[k], nf[k]) {
			return &ChangeError{Trial: o.Name, Field: k, Old: shown(of[k]), New: shown(nf[k])}
		}
	}
	return nil
}

func fieldsOf(t Trial) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("compare trial %s: %w", t.Name, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("compare trial %s: %w", t.Name, err)
	}
	return m, nil
}

func shown(b json.RawMessage) string {
	if b == nil {
		return "unset"
	}
	return trial.Clip(string(b))
}

func quoteList(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return trial.Clip("[" + strings.Join(q, ", ") + "]")
}

// rerun closes the trials that grew over the trials waiting for them (after and depends),
// in plan order.
func rerun(trials []Trial, grew map[string]bool) []string {
	if len(grew) == 0 {
		return nil
	}
	for changed := true; changed; {
		changed = false
		for _, t := range trials {
			if grew[t.Name] {
				continue
			}
			waits := slices.ContainsFunc(t.After, func(a string) bool { return grew[a] }) ||
				slices.ContainsFunc(t.Depends, func(d Dependency) bool { return grew[d.Trial] })
			if waits {
				grew[t.Name], changed = true, true
			}
		}
	}
	var out []string
	for _, t := range trials {
		if grew[t.Name] {
			out = append(out, t.Name)
		}
	}
	return out
}

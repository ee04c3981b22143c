package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jikken-dev/jikken/experiment"
)

// serverWarnings names the shapes of a plan in which a run may wait, with nothing left to
// start, for a trial to end by itself; the runner stops only declared services, so a server
// that is not marked service: true holds the run until it ends:
//   - a trial others depend on to have started (to use it while it runs) that another trial
//     also waits for with after (or a completed or succeeded condition): if it is a server,
//     that trial never starts;
//   - a trial that needs more trials running beside it (the ones it depends on to have
//     started, and theirs) than jobs slots: each takes a slot, so it starts only once one of
//     them ends.
func serverWarnings(trials []experiment.Trial, jobs int) []string {
	index := make(map[string]int, len(trials))
	for i, t := range trials {
		index[t.Name] = i
	}
	used := make([][]string, len(trials))    // trials that depend on i to have started
	waiting := make([][]string, len(trials)) // trials that wait for i to end
	for _, t := range trials {
		for _, d := range t.Depends {
			i := index[d.Trial]
			if d.Condition == experiment.Started || d.Condition == experiment.Healthy {
				used[i] = append(used[i], t.Name)
			} else {
				waiting[i] = append(waiting[i], t.Name)
			}
		}
		for _, a := range t.After {
			waiting[index[a]] = append(waiting[index[a]], t.Name)
		}
	}
	var out []string
	for i, t := range trials {
		if len(used[i]) > 0 && len(waiting[i]) > 0 && !t.Service {
			out = append(out, fmt.Sprintf("%s: %s use%s it while it runs (depends) and %s wait%s for it to end: if it is a server that does not end by itself, the run waits forever; split the server from the step, or wait for it with depends",
				t.Name, listNames(used[i]), verbS(used[i]), listNames(waiting[i]), verbS(waiting[i])))
		}
	}
	for _, t := range trials {
		beside := besides(trials, index, t)
		if len(beside) > 0 && len(beside)+1 > jobs {
			out = append(out, fmt.Sprintf("%s: runs beside %s (depends), which each take a slot, so it needs -j %d or more; with -j %d it starts only once one of them ends by itself (mark a server service: true to run it outside -j)",
				t.Name, listNames(beside), len(beside)+1, jobs))
		}
	}
	return out
}

// besides lists the trials that are not declared services and that t needs running when it
// starts: those it depends on to have started or be healthy, and theirs.
func besides(trials []experiment.Trial, index map[string]int, t experiment.Trial) []string {
	var out []string
	var visit func(u experiment.Trial)
	visit = func(u experiment.Trial) {
		for _, d := range u.Depends {
			if d.Condition != experiment.Started && d.Condition != experiment.Healthy {
				continue
			}
			dep := trials[index[d.Trial]]
			if dep.DeclaredService() || slices.Contains(out, dep.Name) {
				continue
			}
			out = append(out, dep.Name)
			visit(dep)
		}
	}
	visit(t)
	return out
}

func listNames(ns []string) string {
	if len(ns) > 3 {
		return strings.Join(ns[:3], ", ") + fmt.Sprintf(" and %d more", len(ns)-3)
	}
	return strings.Join(ns, ", ")
}

func verbS(ns []string) string {
	if len(ns) == 1 {
		return "s"
	}
	return ""
}

package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/texttable"
	"github.com/jikken-dev/jikken/runner/plan"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

// searchOf reads the search block of a recorded run from its evaluated experiment (nil: the run
// has none). The manifest keeps the evaluated JSON, so a resume needs no experiment file.
func searchOf(m *store.Manifest) (*experiment.Search, error) {
	s, err := experiment.SearchOf(m.File, m.Evaluated)
	if err != nil {
		return nil, fmt.Errorf("read the search of run %s from its manifest: %w", m.RunID, err)
	}
	return s, nil
}

// withSearchTrial is the plan of run m with trial added when a search suggested it: rebuilt from
// the search's template and the params its record holds, as a resume rebuilds it.
func withSearchTrial(ctx context.Context, runs store.Runs, m *store.Manifest, trial string) ([]experiment.Trial, error) {
	s, err := searchOf(m)
	if err != nil || s == nil {
		return m.Trials, err
	}
	n, ok := s.IsTrial(trial)
	if !ok || slices.ContainsFunc(m.Trials, func(t experiment.Trial) bool { return t.Name == trial }) {
		return m.Trials, nil
	}
	rec, err := runs.Trial(ctx, m.RunID, trial)
	if err != nil {
		return nil, fmt.Errorf("run %s: trial %s: %w", m.RunID, trial, err)
	}
	t, err := s.Trial(n, plan.Coerce(s.Space, rec.Params))
	if err != nil {
		return nil, fmt.Errorf("run %s: rebuild trial %s: %w", m.RunID, trial, err)
	}
	t.Index = len(m.Trials)
	return append(slices.Clip(m.Trials), t), nil
}

// withExample is trials and a trial standing for the search's, for the checks made before
// anything runs (the backend's, the host's fit).
func withExample(trials []experiment.Trial, s *experiment.Search) []experiment.Trial {
	ex, err := s.Example()
	if err != nil {
		return trials // the experiment's validation built the same trial: not reached
	}
	return append(slices.Clip(trials), ex)
}

// checkedTrials are the trials of exp the checks before a run look at.
func checkedTrials(exp *experiment.Experiment) []experiment.Trial {
	if exp.Search == nil {
		return exp.Trials
	}
	return withExample(exp.Trials, exp.Search)
}

func newSearchCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Read the history of a run's search",
	}
	cmd.AddCommand(newSearchShowCmd(f))
	return cmd
}

// searchRow is one trial of a search's history, as 'search show -o json' writes it.
type searchRow struct {
	Number int            `json:"number"`
	Trial  string         `json:"trial"`
	Status store.Status   `json:"status"`
	Params map[string]any `json:"params"`
	// Values are the objectives' values, in the order of the objectives (null: not logged, or
	// NaN, which the search counts as no value); infinities are "Infinity" and "-Infinity".
	Values []*track.Float `json:"values"`
	// Best is the best value of the first objective so far (single objective only).
	Best *track.Float `json:"best_so_far,omitempty"`
	// Front marks the best trial (one objective) or the Pareto front (several).
	Front  bool   `json:"best"`
	Reason string `json:"reason,omitempty"`
}

type searchShowJSON struct {
	Run        string               `json:"run"`
	Search     string               `json:"search"`
	Sampler    string               `json:"sampler"`
	Pruner     string               `json:"pruner"`
	Objectives []string             `json:"objectives"`
	Trials     []searchRow          `json:"trials"`
	Importance []importanceJSON     `json:"importance"`
	Budget     int                  `json:"budget"`
	Counts     map[store.Status]int `json:"counts"`
}

type importanceJSON struct {
	Param string  `json:"param"`
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

func newSearchShowCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Print a search's history, its best trials and the importance of each param",
		Long: `Show prints the trials of RUN's search in the order they were suggested: number, trial,
status, params, the objectives' values, and the best value so far (one objective), then the best
trial (or, with several objectives, the Pareto front) and each param's importance for the first
objective (see docs/search.md for the method).`,
		Example: `  jikken search show latest
  jikken search show latest -o json | jq '.trials[] | select(.best)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			v, err := loadSearch(ctx, f, args[0])
			if err != nil {
				return err
			}
			if output == "json" {
				return cmdutil.WriteJSON(f.IO.Out, v)
			}
			return writeSearch(f.IO.Out, v)
		},
	}
	cmdutil.FormatFlag(cmd, &output, "table", "json")
	return cmd
}

// loadSearch reads the history of RUN's search.
func loadSearch(ctx context.Context, f *cmdutil.Factory, ref string) (*searchShowJSON, error) {
	runs, id, err := resolveRun(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	m, err := runs.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := searchOf(m)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, cmdutil.UsageError("run %s has no search; 'jikken results %s' shows its trials", id, id)
	}
	recs, err := runs.Trials(ctx, id)
	if err != nil {
		return nil, err
	}
	return searchView(id, s, plan.History(s, recs)), nil
}

// searchView is a search's history with its best trials and the importance of its params.
func searchView(run string, s *experiment.Search, hist []plan.Entry) *searchShowJSON {
	v := &searchShowJSON{Run: run, Search: s.Name, Sampler: s.Sampler.Name, Pruner: s.Pruner.Name, Budget: s.Trials,
		Trials: []searchRow{}, Importance: []importanceJSON{}, Counts: map[store.Status]int{}}
	for _, o := range s.Objectives {
		v.Objectives = append(v.Objectives, o.Metric+" ("+o.Direction.String()+")")
	}
	var obs []search.Observation
	for _, e := range hist {
		v.Counts[e.Status]++
		if e.Status.Final() {
			obs = append(obs, e.Observation)
		}
	}
	front := map[int]bool{}
	for _, n := range plan.Best(s, hist) {
		front[n] = true
	}
	var best *track.Float
	for _, e := range hist {
		r := searchRow{Number: e.Number, Trial: e.Name, Status: e.Status, Params: e.Observation.Params, Front: front[e.Number], Reason: e.Reason}
		for i := range s.Objectives {
			if i < len(e.Observation.Values) {
				x := track.Float(e.Observation.Values[i])
				r.Values = append(r.Values, &x)
			} else {
				r.Values = append(r.Values, nil)
			}
		}
		if len(s.Objectives) == 1 && e.Observation.State == search.Complete && r.Values[0] != nil {
			x := *r.Values[0]
			if best == nil || (s.Objectives[0].Direction == search.Maximize) == (x > *best) && x != *best {
				best = &x
			}
		}
		if best != nil {
			b := *best
			r.Best = &b
		}
		v.Trials = append(v.Trials, r)
	}
	for _, pi := range search.Importance(s.Space, s.Objectives, 0, obs, s.Seed) {
		v.Importance = append(v.Importance, importanceJSON{Param: pi.Param, Value: pi.Value, Low: pi.Low, High: pi.High})
	}
	return v
}

func writeSearch(w io.Writer, v *searchShowJSON) error {
	fmt.Fprintf(w, "search %s of run %s: %s sampler, %s pruner, objective %s; %d of %d trials\n",
		v.Search, v.Run, v.Sampler, v.Pruner, strings.Join(v.Objectives, ", "), len(v.Trials), v.Budget)
	var names []string
	seen := map[string]bool{}
	for _, r := range v.Trials {
		for k := range r.Params {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	var tb texttable.Table
	head := []string{"#", "TRIAL", "STATUS"}
	for _, n := range names {
		head = append(head, strings.ToUpper(n))
	}
	head = append(head, "VALUE", "BEST SO FAR", "")
	tb.Row(head...)
	for _, r := range v.Trials {
		row := []string{strconv.Itoa(r.Number), r.Trial, string(r.Status)}
		for _, n := range names {
			row = append(row, cell(r.Params[n]))
		}
		var vals []string
		for _, x := range r.Values {
			if x == nil {
				vals = append(vals, "-")
			} else {
				vals = append(vals, strconv.FormatFloat(float64(*x), 'g', 6, 64))
			}
		}
		best := ""
		if r.Best != nil {
			best = strconv.FormatFloat(float64(*r.Best), 'g', 6, 64)
		}
		mark := ""
		if r.Front {
			mark = "*"
		}
		row = append(row, strings.Join(vals, " "), best, mark)
		tb.Row(row...)
	}
	if err := tb.Write(w); err != nil {
		return err
	}
	writeBest(w, v)
	if len(v.Importance) > 0 {
		fmt.Fprintf(w, "param importance for %s (|Spearman rank correlation|, 95%% bootstrap interval):\n", v.Objectives[0])
		for _, pi := range v.Importance {
			fmt.Fprintf(w, "  %-16s %.3f  [%.3f, %.3f]\n", pi.Param, pi.Value, pi.Low, pi.High)
		}
	}
	return nil
}

// writeBest prints the best trial, or the Pareto front, of a search.
func writeBest(w io.Writer, v *searchShowJSON) {
	var front []searchRow
	for _, r := range v.Trials {
		if r.Front {
			front = append(front, r)
		}
	}
	switch {
	case len(front) == 0:
		fmt.Fprintf(w, "best: none yet (no trial has logged %s)\n", strings.Join(v.Objectives, ", "))
		return
	case len(v.Objectives) > 1:
		fmt.Fprintf(w, "Pareto front (%d trials):\n", len(front))
	default:
		fmt.Fprint(w, "best: ")
	}
	for _, r := range front {
		var vals, ps []string
		for i, x := range r.Values {
			if x != nil {
				vals = append(vals, strings.Fields(v.Objectives[i])[0]+"="+strconv.FormatFloat(float64(*x), 'g', -1, 64))
			}
		}
		keys := make([]string, 0, len(r.Params))
		for k := range r.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ps = append(ps, k+"="+cell(r.Params[k]))
		}
		if len(v.Objectives) > 1 {
			fmt.Fprint(w, "  ")
		}
		fmt.Fprintf(w, "%s %s (%s)\n", r.Trial, strings.Join(vals, " "), strings.Join(ps, " "))
	}
}

// cell renders a param for a table: floats with 6 significant digits.
func cell(v any) string {
	if x, ok := v.(float64); ok && !math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	return experiment.ParamString(v)
}

package experiment

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with an experiment (or, as a warning, risky in it), located by
// file, line and column of the Jsonnet source, trial and field.
type Problem struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"` // 0 when unknown
	Column int    `json:"column,omitempty"`
	Trial  string `json:"trial,omitempty"` // trial name, or "#3" when the trial has no usable name
	Field  string `json:"field,omitempty"`
	Msg    string `json:"message"`
	// origin is the path of the trial's object in the evaluated JSON (["trials", 3]), which
	// Field continues; locate follows it through the source.
	origin []any
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Column)
	}
	if p.Trial != "" {
		fmt.Fprintf(&b, ": trial %s", p.Trial)
	}
	if p.Field != "" {
		fmt.Fprintf(&b, ": %s", p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError lists every problem found in an experiment; nothing may run while there is one.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "invalid experiment: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid experiment: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems, and warnings, for one file.
type problems struct {
	file  string
	list  []Problem
	warns []Problem
	// origin is the path of the trial being read, given to what add records
	origin []any
}

func (ps *problems) add(trial, field, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Trial: trial, Field: field, Msg: fmt.Sprintf(format, args...), origin: ps.origin})
}

func (ps *problems) warn(trial, field, format string, args ...any) {
	ps.warns = append(ps.warns, Problem{File: ps.file, Trial: trial, Field: field, Msg: fmt.Sprintf(format, args...), origin: ps.origin})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps.list}
}

// suggest returns ` (did you mean "x"?)` when a known word is close to the unknown one.
func suggest(unknown string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(unknown), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

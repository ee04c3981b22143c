package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/trial"
)

// ParseSeeds reads a list of seeds as people write it: whole numbers and inclusive ranges,
// separated by commas ("30..59", "5,7,10..12"). A seed listed twice is an error.
func ParseSeeds(s string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "..")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds %q: %q is not a whole number or a range A..B", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("seeds %q: %q is not a range A..B with A <= B", s, part)
			}
			if b-a >= 1_000_000 {
				return nil, fmt.Errorf("seeds %q: %q holds more than 1000000 seeds", s, part)
			}
		}
		for n := a; ; n++ {
			if seen[n] {
				return nil, fmt.Errorf("seeds %q: seed %d is listed twice", s, n)
			}
			seen[n] = true
			out = append(out, n)
			if n == b {
				break
			}
		}
	}
	return out, nil
}

// WithSeeds returns the evaluated experiment (object form) with seeds added to every matrix
// that has seeds (a count n stands for the seeds 0..n-1), so that parsing it again gives the
// plan with more seeds. A seed some matrix already has is an error: a trial runs once per seed.
func WithSeeds(evaluated []byte, seeds []int64) ([]byte, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(evaluated))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("read the evaluated experiment: %w", err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the experiment is an array of trials, which has no matrix seeds; add trials with --file")
	}
	var list []any
	switch x := obj["matrix"].(type) {
	case map[string]any:
		list = []any{x}
	case []any:
		list = x
	}
	n := 0
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok || m["seeds"] == nil {
			continue
		}
		group, _ := m["name"].(string)
		if group == "" {
			group = "trial"
		}
		if _, seq := m["seeds"].(map[string]any); seq {
			return nil, fmt.Errorf("matrix %s has sequential seeds (until), which the run adds by itself; to allow more, raise its max in the file and extend with --file", group)
		}
		had, err := seedList(m["seeds"])
		if err != nil {
			return nil, fmt.Errorf("matrix[%d] (%s).seeds: %w", i, group, err)
		}
		set := make(map[int64]bool, len(had))
		for _, s := range had {
			set[s] = true
		}
		grown := make([]any, 0, len(had)+len(seeds))
		for _, s := range had {
			grown = append(grown, json.Number(strconv.FormatInt(s, 10)))
		}
		for _, s := range seeds {
			if set[s] {
				return nil, fmt.Errorf("seed %d is already a seed of matrix %s (%s); pass seeds it does not have", s, group, seedRange(had))
			}
			grown = append(grown, json.Number(strconv.FormatInt(s, 10)))
		}
		m["seeds"] = grown
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("no matrix of the experiment has seeds; add trials with --file instead")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// seedList reads a matrix's seeds as the parser does: a count or a list.
func seedList(v any) ([]int64, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%v is not a count of seeds", x)
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out, nil
	case []any:
		out := make([]int64, 0, len(x))
		for _, e := range x {
			n, err := toInt(e)
			if err != nil {
				return nil, fmt.Errorf("%v is not a whole number", e)
			}
			out = append(out, n)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a count or a list of seeds")
}

// seedRange describes a seed list briefly: "seeds 0..29" when it is a run of numbers.
func seedRange(s []int64) string {
	if len(s) == 0 {
		return "no seeds"
	}
	run := true
	for i := 1; i < len(s); i++ {
		run = run && s[i] == s[i-1]+1
	}
	if run && len(s) > 2 {
		return fmt.Sprintf("seeds %d..%d", s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return "seeds " + trial.Clip(strings.Join(parts, ","))
}

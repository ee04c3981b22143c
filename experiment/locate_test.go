package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tenMistakes has ten different mistakes, one a line, and one in defaults; each is marked
// with the part of its message and the line it must be reported at.
const tenMistakes = `local svc = { name: "cache", cmd: "redis-server", service: true, health: { tcp: 6379 } };  // 1 bad health
{
  defaults: { timeout: "soon" },  // 2 bad duration, in defaults: once
  trials: [
    svc,
    { name: "prep", cmd: "true", dpends: ["cache"] },  // 6 unknown field
    { name: "train", cmd: 42 },  // 7 bad type
    { name: "eval", cmd: "true", depends: ["trian"] },  // 8 unknown dependency
    { name: "a", cmd: "true", after: ["b"] },  // 9 cycle
    { name: "b", cmd: "true", after: ["a"] },
    { name: "prep", cmd: "true" },  // 11 duplicate name
    { name: "big", cmd: "true", resources: { cpu: "lots" } },  // 12 bad resources
    { name: "web", cmd: "true", ports: ["99999"] },  // 13 bad port
    { name: "flaky", cmd: "true", retries: -1 },  // 14 bad retries
    { name: "slow", cmd: "true", timeout: "10 minutes" },  // 15 bad duration
  ] + [{ name: "t" + i, cmd: "true", timeout: 5 } for i in std.range(1, 3)],
}
`

// TestAllProblemsAtOnce: every mistake of a file is reported in one round, each at the line
// of the field that has it, and a mistake in defaults once, not once per trial.
func TestAllProblemsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ten.jsonnet")
	if err := os.WriteFile(path, []byte(tenMistakes), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{})
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Load: %v; want a ValidationError", err)
	}
	want := []struct {
		line int
		part string
	}{
		{1, "health: tcp must be a host:port"},
		{3, "defaults.timeout: duration"},
		{6, `dpends: unknown field (did you mean "depends"?)`},
		{7, "cmd: must be a string"},
		{8, `unknown trial "trian"`},
		{9, "after: dependency cycle: a -> b -> a"},
		{11, "duplicate name"},
		{12, "resources:"},
		{13, "ports:"},
		{14, "retries: must be a whole number"},
		{15, `timeout: duration "10 minutes"`},
	}
	for _, w := range want {
		n := 0
		for _, p := range verr.Problems {
			if strings.Contains(p.String(), w.part) {
				n++
				if p.Line != w.line || p.Column == 0 {
					t.Errorf("%q reported at %d:%d, want line %d", p, p.Line, p.Column, w.line)
				}
			}
		}
		if n != 1 {
			t.Errorf("%q reported %d times, want once; all:\n%v", w.part, n, err)
		}
	}
	if len(verr.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(verr.Problems), len(want), err)
	}
	for _, p := range verr.Problems {
		if !strings.HasPrefix(p.String(), path+":") || p.Line == 0 {
			t.Errorf("%q has no file:line:column", p)
		}
	}
}

// TestBadMatrixLeavesNoDependencies: the dependencies of a matrix whose template is wrong are
// checked (once for the group) and not given to the trial that comes next.
func TestBadMatrixLeavesNoDependencies(t *testing.T) {
	spec := `{"trials": [{"name": "x", "cmd": "true"}],
	  "matrix": [{"name": "m", "params": {"p": [1, 2]}, "cmd": "true", "retries": -1, "depends": ["nope"]},
	             {"name": "n", "params": {"p": [1, 2]}, "cmd": "true", "depends": ["nada"]}]}`
	_, err := Parse("x.json", []byte(spec))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a ValidationError: %v", err)
	}
	var got []string
	for _, p := range verr.Problems {
		got = append(got, p.String())
	}
	want := []string{
		`x.json: trial "m-1": retries: must be a whole number >= 0`,
		`x.json: trial "m-1": depends: unknown trial "nope"`,
		`x.json: trial "n-1": depends: unknown trial "nada"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

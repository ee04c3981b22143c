package evalguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
)

// childEnv makes this test binary the child: TestMain serves one evaluation and exits.
const childEnv = "JIKKEN_EVALGUARD_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := Serve(os.Stdin, os.Stdout, os.Exit); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func guard(t *testing.T, memory int64, timeout time.Duration) *Guard {
	t.Setenv(childEnv, "1")
	return &Guard{Exe: os.Args[0], Memory: memory, Timeout: timeout}
}

func write(t *testing.T, src string) string {
	p := filepath.Join(t.TempDir(), "exp.jsonnet")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvaluatesInAChild(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lib.libsonnet"), []byte(`{ cmd: "true" }`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "exp.jsonnet")
	if err := os.WriteFile(p, []byte(`local lib = import "lib.libsonnet"; [lib { name: std.extVar("n") }]`), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := guard(t, DefaultMemory, DefaultTimeout).Evaluate(p, experiment.Options{ExtStr: map[string]string{"n": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ev.JSON, `"name": "a"`) || ev.Sources["lib.libsonnet"] == "" || ev.Sources["exp.jsonnet"] == "" {
		t.Fatalf("evaluation %+v", ev)
	}
}

func TestStopsAtTheLimits(t *testing.T) {
	for _, c := range []struct {
		name, src string
		memory    int64
		timeout   time.Duration
		limit     string
	}{
		{"a huge range", `[{ name: "a", cmd: "true", n: std.length(std.range(0, 3e8)) }]`, 256 << 20, time.Minute, "memory"},
		{"a string that doubles", `local f(s, n) = if n == 0 then s else f(s + s, n - 1); [{ name: "a", cmd: f("x", 40) }]`, 256 << 20, time.Minute, "memory"},
		{"an array that doubles", `local f(a, n) = if n == 0 then a else f(a + a, n - 1); [{ name: "a", cmd: "true", n: std.length(f([1], 40)) }]`, 256 << 20, time.Minute, "memory"},
		{"exponential work", `local f(n) = if n == 0 then 0 else 1 + f(n - 1) + f(n - 1); [{ name: "a", cmd: "true", n: f(60) }]`, DefaultMemory, time.Second, "time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := guard(t, c.memory, c.timeout).Evaluate(write(t, c.src), experiment.Options{})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("err = %v, want the %s limit", err, c.limit)
			}
			if !strings.Contains(err.Error(), "--eval-"+map[string]string{"memory": "memory", "time": "timeout"}[c.limit]) {
				t.Errorf("%v does not say how to raise the limit", err)
			}
		})
	}
}

func TestJsonnetErrorsComeThrough(t *testing.T) {
	_, err := guard(t, DefaultMemory, DefaultTimeout).Evaluate(write(t, "[{ name: \"a\" cmd: 1 }]"), experiment.Options{})
	if err == nil || !strings.Contains(err.Error(), "exp.jsonnet:1:") {
		t.Fatalf("err = %v, want the file and line of the syntax error", err)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	p := write(t, `[{ name: "a", cmd: "true", n: std.length(std.range(0, 3e8)) }]`)
	g := guard(t, 256<<20, time.Minute)
	_, err := experiment.Load(p, experiment.Options{Evaluator: g.Evaluate})
	if err == nil || !strings.HasPrefix(err.Error(), "evaluate "+p+": stopped: ") || !strings.Contains(err.Error(), "256Mi") {
		t.Fatalf("err = %v", err)
	}
}

// TestChildStartsNoChild: a child evaluates in its own process, whatever Exe says, so a Guard
// whose Exe is not a serving program (a test binary) cannot make processes multiply.
func TestChildStartsNoChild(t *testing.T) {
	t.Setenv(ChildEnv, "1")
	g := &Guard{Exe: filepath.Join(t.TempDir(), "no-such-program")}
	ev, err := g.Evaluate(write(t, `[{ name: "a", cmd: "true" }]`), experiment.Options{})
	if err != nil || !strings.Contains(ev.JSON, `"a"`) {
		t.Fatalf("%+v, %v", ev, err)
	}
}

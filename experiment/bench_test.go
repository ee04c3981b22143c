package experiment

import "testing"

// BenchmarkMatrix100k parses a 100,000-trial matrix whose cmd has placeholders in several
// quoting spots: the cmd is read once, then expanded per trial.
func BenchmarkMatrix100k(b *testing.B) {
	spec := []byte(`{"matrix": {"name": "m", "params": {"a": [` + nums(100) + `], "b": [` + nums(1000) + `]},
	  "cmd": "./train --a {{a}} --b '{{b}}' --name \"{{trial}}\" && echo \"$(cat '{{a}}')\""}}`)
	for b.Loop() {
		if _, err := Parse("bench.json", spec); err != nil {
			b.Fatal(err)
		}
	}
}

func nums(n int) string {
	out := make([]byte, 0, n*5)
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, []byte(ParamString(int64(i)))...)
	}
	return string(out)
}

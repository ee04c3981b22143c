package search

import "testing"

// FuzzValidate: Validate never panics, and a space it accepts can be sampled, every sampler's
// suggestion lying within it.
func FuzzValidate(f *testing.F) {
	f.Add(uint8(0), -5.0, 5.0, false, 0.0, uint8(0), false)
	f.Add(uint8(1), 1.0, 100.0, true, 0.0, uint8(2), true)
	f.Add(uint8(0), 0.0, 1.0, false, 0.25, uint8(3), false)
	f.Add(uint8(2), 0.0, 0.0, false, 0.0, uint8(0), true)
	f.Add(uint8(0), -1e308, 1e308, false, 0.0, uint8(0), false)
	f.Add(uint8(1), -9e18, 9e18, false, 0.0, uint8(0), false)
	f.Fuzz(func(t *testing.T, kind uint8, low, high float64, log bool, step float64, choices uint8, conditional bool) {
		p := Param{Name: "x", Kind: Kind(kind % 4), Low: low, High: high, Log: log, Step: step}
		if p.Kind == Categorical {
			p.Low, p.High, p.Log, p.Step = 0, 0, false, 0
			for i := range int(choices % 5) {
				p.Choices = append(p.Choices, int64(i))
			}
		}
		ps := []Param{p}
		if conditional {
			ps = append(ps, Param{Name: "c", Kind: Categorical, Choices: []any{"a", "b"}})
			ps[0].When = &Condition{Param: "c", Values: []any{"b"}}
		}
		space := Space{Params: ps}
		if space.Validate() != nil {
			return
		}
		for _, name := range Names() {
			var opts map[string]any
			if name == "grid" {
				opts = map[string]any{"points": 3.0}
			}
			s, err := New(name, opts)
			if err != nil {
				t.Fatal(err)
			}
			for n := range 3 {
				got, err := s.Suggest(Request{Space: space, Seed: 1, Number: n})
				if err != nil {
					continue // grid: a continuous float, or exhausted
				}
				if err := checkWithin(space, got); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	})
}

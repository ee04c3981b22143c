package sequential

import (
	"math"
	"strings"
	"testing"
)

func TestLooksAndValidate(t *testing.T) {
	l, err := Looks(5, 5, 22)
	if err != nil || len(l) != 5 || l[0] != 5 || l[3] != 20 || l[4] != 22 {
		t.Errorf("Looks(5,5,22) = %v, %v", l, err)
	}
	_, err = Looks(5, 0, 4)
	for _, want := range []string{"batch 0", "max 4 is below min 5"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Looks(5,0,4): %v, want %q", err, want)
		}
	}
	for _, a := range []float64{0, 1, -0.1, math.NaN()} {
		if err := (Design{Groups: 3, Looks: []int{5}, Alpha: a}).Validate(); err == nil || !strings.Contains(err.Error(), "alpha") {
			t.Errorf("alpha %v: %v", a, err)
		}
	}
}

// With one look and no futility the boundary is the fixed-sample one: Nemenyi's critical
// value, the studentized range quantile over √2 (3.314/√2 for 3 groups at 0.05).
func TestOneLookIsNemenyi(t *testing.T) {
	b, err := Design{Groups: 3, Looks: []int{30}, Alpha: 0.05}.Boundaries()
	if err != nil {
		t.Fatal(err)
	}
	if want := 3.314 / math.Sqrt2; math.Abs(b.Crit[0]-want) > 0.02 || math.Abs(b.Fixed-want) > 0.001 {
		t.Errorf("boundary %.4f (fixed %.4f), want %.4f", b.Crit[0], b.Fixed, want)
	}
}

func BenchmarkBoundaries(b *testing.B) {
	looks, _ := Looks(5, 5, 100)
	d := Design{Groups: 3, Looks: looks, Alpha: 0.05, Futility: 0.1}
	for b.Loop() {
		if _, err := d.Boundaries(); err != nil {
			b.Fatal(err)
		}
	}
}

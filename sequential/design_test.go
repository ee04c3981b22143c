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

// With one look and no futility the boundaries are the fixed-sample ones at Holm's levels:
// z at 1 - alpha/(2 m), ..., 1 - alpha/2.
func TestOneLookIsFixedHolm(t *testing.T) {
	b, err := Design{Groups: 3, Looks: []int{30}, Alpha: 0.05}.Boundaries()
	if err != nil {
		t.Fatal(err)
	}
	for j, want := range []float64{2.3940, 2.2414, 1.9600} {
		if math.Abs(b.Crit[j][0]-want) > 0.02 || math.Abs(b.Fixed[j]-want) > 0.001 {
			t.Errorf("level %d: boundary %.4f (fixed %.4f), want %.4f", j, b.Crit[j][0], b.Fixed[j], want)
		}
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

package sim

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseQuantity(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"1", 1000}, {"0.5", 500}, {"500m", 500}, {"1.5", 1500}, {"16Gi", 16 << 30 * 1000},
		{"1k", 1_000_000}, {"2M", 2_000_000_000}, {"1e3", 1_000_000}, {"1Ki", 1024 * 1000},
		{"0.0001", 1}, {"100n", 1}, {"0", 0},
	}
	for _, c := range cases {
		got, err := ParseQuantity(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseQuantity(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "abc", "1X", "Gi", "1.2.3", "99999999999999999999Ei"} {
		if _, err := ParseQuantity(bad); err == nil {
			t.Errorf("ParseQuantity(%q) succeeded", bad)
		}
	}
}

func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"1", "500m", "16Gi", "1e3", "-1", "0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseQuantity(s)
		if err != nil {
			return
		}
		// Whatever parses must survive a round trip through FormatQuantity.
		back, err := ParseQuantity(FormatQuantity(v))
		if err != nil || back != v {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, v, FormatQuantity(v), back, err)
		}
	})
}

func TestNamesInternsInSortedOrder(t *testing.T) {
	n := NewNames()
	r, err := n.Parse(map[string]string{"z.io/x": "1", "a.io/y": "2", "cpu": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Name(4) != "a.io/y" || n.Name(5) != "z.io/x" || r[CPUIndex] != 3000 || r[4] != 2000 {
		t.Fatalf("names %v, vector %v", n.names, r)
	}
	for i := range MaxResources {
		n.Index(string(rune('a'+i)) + ".io/r")
	}
	if _, err := n.Index("one-too-many"); err == nil {
		t.Fatal("interning past MaxResources succeeded")
	}
}

func TestTolerationsAndAffinity(t *testing.T) {
	n := &Node{Labels: map[string]string{"zone": "a", "gen": "5"}, Taints: []Taint{{Key: "gpu", Value: "a100", Effect: NoSchedule}}}
	p := &Pod{}
	if p.ToleratesNode(n) {
		t.Error("pod without tolerations tolerates a NoSchedule taint")
	}
	p.Tolerations = []Toleration{{Key: "gpu", Operator: "Exists"}}
	if !p.ToleratesNode(n) {
		t.Error("Exists toleration does not match")
	}
	p.Tolerations = []Toleration{{Key: "gpu", Value: "h100"}}
	if p.ToleratesNode(n) {
		t.Error("Equal toleration with another value matches")
	}
	p.Affinity = &NodeAffinity{Required: []NodeSelectorTerm{
		{MatchExpressions: []NodeSelectorRequirement{{Key: "zone", Operator: "In", Values: []string{"b"}}}},
		{MatchExpressions: []NodeSelectorRequirement{{Key: "gen", Operator: "Gt", Values: []string{"4"}}, {Key: "spot", Operator: "DoesNotExist"}}},
	}}
	if !p.MatchesNode(n) {
		t.Error("second term should match")
	}
	p.NodeSelector = map[string]string{"zone": "b"}
	if p.MatchesNode(n) {
		t.Error("node selector zone=b matches zone a")
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]Time{"90": 90 * Second, "1.5": 1500000, "1h30m": 5400 * Second, "7d": 7 * 86400 * Second, "1d12h": 36 * 3600 * Second} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "soon", "1x", "-1h"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", bad)
		}
	}
}

// FormatQuantity appends without fmt now; it must write what fmt wrote.
func TestFormatQuantityMatchesFmt(t *testing.T) {
	old := func(m int64) string {
		if m%Milli == 0 {
			return fmt.Sprint(m / Milli)
		}
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/Milli), "0"), ".")
	}
	ms := []int64{17179869184 * Milli, 512 << 30 * Milli, 1<<62 - 1, -(1 << 62)}
	for m := int64(-3000); m <= 3000; m++ {
		ms = append(ms, m)
	}
	for _, m := range ms {
		if got, want := FormatQuantity(m), old(m); got != want {
			t.Errorf("FormatQuantity(%d) = %q, fmt gives %q", m, got, want)
		}
		if got := string(AppendQuantity([]byte("x"), m)); got != "x"+old(m) {
			t.Errorf("AppendQuantity(x, %d) = %q", m, got)
		}
	}
}

package texttable

import (
	"strings"
	"testing"
)

func TestWidth(t *testing.T) {
	for s, want := range map[string]int{
		"sgd": 3, "実験的最適化法": 14, "Ａ": 2, "한국어": 6, "é": 1, "e\u0301": 1, "αβ": 2, "": 0, "a\u200db": 2,
	} {
		if got := Width(s); got != want {
			t.Errorf("Width(%q) = %d; want %d", s, got, want)
		}
	}
}

// Every column starts at the same display column in every row, CJK names or not.
func TestColumnsAlignByDisplayWidth(t *testing.T) {
	var tb Table
	tb.Row("group", "n", "median")
	tb.Row("実験的最適化法", "10", "0.14")
	tb.Row("sgd", "9", "0.48")
	tb.Row("한국어", "1", "x")
	var b strings.Builder
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := "group           n   median"
	if lines[0] != want {
		t.Errorf("header = %q; want %q", lines[0], want)
	}
	for _, l := range lines[1:] {
		// The cell before the median ends where the header's "n   " ends.
		i := strings.LastIndex(l, " ")
		if Width(l[:i+1]) != Width("group           n   ") {
			t.Errorf("row %q: its last column starts at display column %d; want %d", l, Width(l[:i+1]), Width("group           n   "))
		}
	}
}

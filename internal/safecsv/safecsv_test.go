package safecsv

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=1+1", "'=1+1"},
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"'quoted", "''quoted"},
		{"a=b", "a=b"},
		// Numbers stay numbers, negative ones included.
		{"-1", "-1"},
		{"-1.5", "-1.5"},
		{"+3", "+3"},
		{"-.5", "-.5"},
		{"-1e-3", "-1e-3"},
		{"1.5E+10", "1.5E+10"},
		{"-Inf", "-Inf"},
		{"+Inf", "+Inf"},
		{"-inf", "-inf"},
		{"-NaN", "-NaN"},
		{"-Infinite", "'-Infinite"},
		{"-0x1p3", "'-0x1p3"},
		{"-", "'-"},
	} {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
		if back := Unescape(Cell(c.in)); back != c.in {
			t.Errorf("Unescape(Cell(%q)) = %q", c.in, back)
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	rows := [][]string{{"trial", "lr", "note"}, {"a", "-0.1", "=cmd()"}, {"b", "1e-3", "'x"}, {"c", "2", "@me"}}
	var buf bytes.Buffer
	if err := NewWriter(&buf).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{",=cmd", ",@me"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("a formula cell reached the file:\n%s", buf.String())
		}
	}
	got, err := ReadAll(csv.NewReader(&buf))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if strings.Join(got[i], "|") != strings.Join(rows[i], "|") {
			t.Errorf("row %d: got %q, want %q", i, got[i], rows[i])
		}
	}
}

func FuzzCell(f *testing.F) {
	for _, s := range []string{"=1", "-1", "'", "''=", "@", "-1e5", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Cell(s)
		if c != "" && trigger(c[0]) && !number.MatchString(c) {
			t.Fatalf("Cell(%q) = %q starts a formula", s, c)
		}
		if Unescape(c) != s {
			t.Fatalf("Unescape(Cell(%q)) = %q", s, Unescape(c))
		}
	})
}

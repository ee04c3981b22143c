package chart

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/vg"
)

func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range (decadeTicks{}).Ticks(3e-57, 4000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "1e-50 1e-40 1e-30 1e-20 1e-10 1" {
		t.Errorf("labels = %q", got)
	}
	var small []string
	for _, tk := range (decadeTicks{}).Ticks(0.005, 2000) {
		if tk.Label != "" {
			small = append(small, tk.Label)
		}
	}
	if got := strings.Join(small, " "); got != "0.001 0.01 0.1 1 10 100 1000 10000" {
		t.Errorf("labels = %q", got)
	}
}

// Names break at spaces and after - _ / . , (the mark stays on the first line), between CJK
// characters, and inside a word only when the word alone is too wide.
func TestWrap(t *testing.T) {
	f, err := newFonts("")
	if err != nil {
		t.Fatal(err)
	}
	h := handler{f}
	w := h.width("population-based-", 10)
	if got := h.wrap("population-based-training-with-restarts", 10, w); got != "population-based-\ntraining-with-\nrestarts" {
		t.Errorf("wrap = %q", got)
	}
	if got := h.wrap("short", 10, w); got != "short" {
		t.Errorf("wrap(short) = %q", got)
	}
	for _, in := range []string{
		"a b c d e f g h i j k l m n o p q r s t u v w",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
		"lr=0.001/batch=128/warmup=10k/schedule=cosine",
	} {
		got := h.wrap(in, 10, w)
		lines := strings.Split(got, "\n")
		if len(lines) < 2 || strings.ReplaceAll(strings.Join(lines, " "), " ", "") != strings.ReplaceAll(in, " ", "") {
			t.Errorf("wrap(%q) = %q: want the same characters on several lines", in, got)
		}
		for _, l := range lines {
			if h.width(l, 10) > w {
				t.Errorf("wrap(%q): line %q is wider than asked", in, l)
			}
		}
	}
	if got := breakable("実験abc"); strings.Join(got, "|") != "実|験|abc" {
		t.Errorf("breakable = %q", got)
	}
}

// FuzzWrap: wrapping never loses or invents a character (spaces at breaks aside) and every line
// fits, unless it is one character wider than the room.
func FuzzWrap(f *testing.F) {
	f.Add("population-based-training-with-restarts", 60.0)
	f.Add("実験的最適化法 and adam", 25.0)
	f.Add("a  b\tc", 1.0)
	fonts, err := newFonts("")
	if err != nil {
		f.Fatal(err)
	}
	h := handler{fonts}
	f.Fuzz(func(t *testing.T, s string, maxW float64) {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\n") || len(s) > 200 || !(maxW > 0 && maxW < 1000) {
			return
		}
		if h.f.fallback == nil {
			for _, r := range s {
				if !drawable(liberationSans(), &sfnt.Buffer{}, r) {
					return // another font would draw it
				}
			}
		}
		got := h.wrap(s, 10, vg.Length(maxW))
		if strings.ReplaceAll(strings.ReplaceAll(got, "\n", ""), " ", "") != strings.ReplaceAll(s, " ", "") {
			t.Fatalf("wrap(%q, %v) = %q changes the text", s, maxW, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if h.width(l, 10) > vg.Length(maxW) && utf8.RuneCountInString(strings.TrimSpace(l)) > 1 {
				t.Fatalf("wrap(%q, %v): line %q is too wide", s, maxW, l)
			}
		}
	})
}

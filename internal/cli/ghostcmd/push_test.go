package ghostcmd

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "10M": 10 << 20, "10MiB": 10 << 20, "1G": 1 << 30, "64k": 64 << 10, "2MB": 2 << 20} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ten", "-1", "1T"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

func TestSplit2(t *testing.T) {
	if a, b := split2([]string{"h"}); a != "" || b != "h" {
		t.Errorf("split2(h) = %q, %q", a, b)
	}
	if a, b := split2([]string{"f", "h"}); a != "f" || b != "h" {
		t.Errorf("split2(f h) = %q, %q", a, b)
	}
}

package host

import "testing"

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {512, "512B"}, {1023, "1023B"}, {1024, "1KiB"}, {64 << 20, "64MiB"}, {3 << 29, "1.5GiB"},
		{8 << 30, "8GiB"}, {1<<20 - 1, "1024KiB"}, {2 << 40, "2TiB"}, {3 << 50, "3072TiB"}, {-5, "-5B"},
	} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

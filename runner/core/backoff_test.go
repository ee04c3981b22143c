package core

import (
	"testing"
	"time"
)

// TestBackoff: the wait doubles from the trial's backoff (1s when unset) up to a minute, and
// stays there however many attempts there are. A base whose doubling overflows used to come
// out as a fraction of a second at the 30th attempt (2^35+1 ns shifted 29 times wraps to
// 2^29 ns), and the cap did not catch it.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		base    time.Duration
		attempt int
		want    time.Duration
	}{
		{0, 1, time.Second},
		{0, 3, 4 * time.Second},
		{500 * time.Millisecond, 2, time.Second},
		{40 * time.Second, 1, 40 * time.Second},
		{40 * time.Second, 2, time.Minute},
		{time.Hour, 1, time.Minute},
		{time.Second, 31, time.Minute},
		{time.Second, 1000, time.Minute},
		{1<<35 + 1, 30, time.Minute},
	} {
		if got := backoff(c.base, c.attempt); got != c.want {
			t.Errorf("backoff(%s, %d) = %s, want %s", c.base, c.attempt, got, c.want)
		}
	}
}

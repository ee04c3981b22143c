package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Time is simulated time in microseconds since the start of the simulation. An integer clock
// makes event order exact: two events are simultaneous or they are not, with no float drift.
type Time int64

// Never is a time later than any event; a submitter returns it when it has nothing more to submit.
const Never Time = math.MaxInt64

// Second is one simulated second.
const Second Time = 1_000_000

// Seconds converts seconds to Time, rounding to the nearest microsecond.
func Seconds(s float64) Time {
	if s >= float64(Never)/float64(Second) {
		return Never
	}
	return Time(math.Round(s * float64(Second)))
}

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

func (t Time) String() string {
	if t == Never {
		return "never"
	}
	return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) + "s"
}

// ParseDuration reads a duration as plain seconds ("90", "1.5") or a Go duration ("2h30m").
func ParseDuration(s string) (Time, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("duration %q must be a finite non-negative number of seconds", s)
		}
		return Seconds(f), nil
	}
	// Go durations stop at hours; simulated workloads span days, so a leading "<n>d" is
	// accepted too ("7d", "1d12h").
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err == nil && n >= 0 {
			days = time.Duration(n * float64(24*time.Hour))
			s = s[i+1:]
			if s == "" {
				s = "0s"
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: write seconds (90), a Go duration (1h30m) or days (7d, 1d12h)", s)
	}
	d += days
	if d < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return Time(d / time.Microsecond), nil
}

// Duration converts t to a time.Duration.
func (t Time) Duration() time.Duration { return time.Duration(t) * time.Microsecond }

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
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: write seconds (90) or a Go duration (1h30m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return Time(d / time.Microsecond), nil
}

// Duration converts t to a time.Duration.
func (t Time) Duration() time.Duration { return time.Duration(t) * time.Microsecond }

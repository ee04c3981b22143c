package scenario

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim/metrics"
)

// podsCSV runs the scenario text and returns its pods.csv.
func podsCSV(t *testing.T, y string) []byte {
	t.Helper()
	_, c := runScenario(t, mustParse(t, y), Options{})
	var buf bytes.Buffer
	if err := metrics.WritePods(&buf, c.Pods()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// How often the time series is sampled must never change the schedule: a preemption frees
// capacity, and the pass that uses it must follow at once, not at the next event of any kind.
func TestSamplingDoesNotChangeSchedule(t *testing.T) {
	for _, profile := range []string{"srtf", "las", "kube-default", "fifo"} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/%d", profile, seed), func(t *testing.T) {
				y := randomScenario(seed, profile)
				a := podsCSV(t, strings.Replace(y, "sample: 100", "sample: 1", 1))
				b := podsCSV(t, strings.Replace(y, "sample: 100", "sample: 60", 1))
				if !bytes.Equal(a, b) {
					t.Fatalf("pods.csv differs between sample: 1 and sample: 60:\n%s", firstDiff(a, b))
				}
			})
		}
	}
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(la), len(lb))
}

// las acts exactly when a job crosses a queue threshold or is due for promotion, so forcing
// extra passes with ticks changes nothing; nor does it for srtf, sjf and fifo.
func TestTicksDoNotChangeExactPolicies(t *testing.T) {
	for _, profile := range []string{"las", "las-time", "srtf", "sjf", "fifo"} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%d", profile, seed), func(t *testing.T) {
				y := strings.Replace(randomScenario(seed, profile), "gangTimeout:", "lasThresholds: [600, 6000], gangTimeout:", 1)
				a := podsCSV(t, y)
				b := podsCSV(t, strings.Replace(y, "sample: 100", "sample: 100\ntick: 7", 1))
				if !bytes.Equal(a, b) {
					t.Fatalf("pods.csv differs with 7 s ticks:\n%s", firstDiff(a, b))
				}
			})
		}
	}
}

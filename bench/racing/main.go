// Command racing races configurations with jikken's F-race (package racing) next to irace on a
// tuning task with a known optimum; see README.md.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/racing"
	"github.com/jikken-dev/jikken/stats"
)

const (
	configs   = 12 // c = 1..12
	optimum   = 7
	instances = 10
)

// quality is a configuration's true expected cost above the optimum's: (c-7)^2/10.
func quality(c int) float64 { return float64((c-optimum)*(c-optimum)) / 10 }

// cost draws one run of configuration c on instance inst: quality + instance + N(0, 1).
func cost(rep uint64, c, block int) float64 {
	r := rand.New(rand.NewPCG(rep, uint64(block)<<8|uint64(c)))
	return quality(c) + float64(block%instances+1) + r.NormFloat64()
}

// race runs jikken's F-race until the budget is spent: once the race is down to two
// configurations (irace's minimum survival for one parameter), the budget left runs them on
// further blocks, and the choice is the survivor with the lowest mean. It returns the choice and
// the experiments used.
func race(rep uint64, budget int) (int, int) {
	rule := racing.Race{Configs: configs, First: 5, Each: 1, Alpha: 0.05, Survivors: 2}
	total := budget // no more blocks than the budget could pay for
	var blocks [][]float64
	used := 0
	for {
		d, err := rule.Decide(blocks, total)
		if err != nil {
			panic(err)
		}
		alive := 0
		for _, a := range d.Alive {
			if a {
				alive++
			}
		}
		want := d.Blocks
		if d.Done {
			want = len(blocks) + 1
		}
		if used+alive*(want-len(blocks)) > budget {
			return best(blocks, d.Alive), used
		}
		for len(blocks) < want {
			b := make([]float64, configs)
			for c := range b {
				b[c] = math.NaN()
				if d.Alive[c] {
					b[c] = cost(rep, c+1, len(blocks))
					used++
				}
			}
			blocks = append(blocks, b)
		}
	}
}

func best(blocks [][]float64, alive []bool) int {
	choice, low := -1, math.Inf(1)
	for c, a := range alive {
		if !a {
			continue
		}
		sum := 0.0
		for _, b := range blocks {
			sum += b[c]
		}
		if m := sum / float64(len(blocks)); m < low {
			choice, low = c, m
		}
	}
	return choice + 1
}

// irace runs the reference (Rscript irace.R) and returns its choice and experiments used.
func irace(script string, rep, budget, iterations int) (int, int, error) {
	out, err := exec.Command("Rscript", script, strconv.Itoa(rep), strconv.Itoa(budget), strconv.Itoa(iterations)).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("irace: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("irace printed %q", out)
	}
	c, err1 := strconv.Atoi(f[len(f)-2])
	n, err2 := strconv.Atoi(f[len(f)-1])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("irace printed %q", out)
	}
	return c, n, nil
}

func main() {
	reps := flag.Int("reps", 20, "repetitions")
	budget := flag.Int("budget", 500, "experiments each tuner may use")
	script := flag.String("irace", "bench/racing/irace.R", "the irace script (empty: jikken only)")
	iterations := flag.Int("irace-iterations", 0, "irace's nbIterations (0: its own choice; 1: one race, as jikken's)")
	flag.Parse()
	var jq, iq []float64
	jused, iused := 0, 0
	fmt.Println("| rep | jikken c | jikken experiments | irace c | irace experiments |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for rep := 1; rep <= *reps; rep++ {
		jc, jn := race(uint64(rep), *budget)
		jq, jused = append(jq, quality(jc)), jused+jn
		ic, in := 0, 0
		if *script != "" {
			var err error
			if ic, in, err = irace(*script, rep, *budget, *iterations); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			iq, iused = append(iq, quality(ic)), iused+in
		}
		fmt.Printf("| %d | %d | %d | %d | %d |\n", rep, jc, jn, ic, in)
	}
	fmt.Printf("\nmean quality above the optimum (0 = c %d): jikken %.3f, irace %.3f; experiments: jikken %d, irace %d\n",
		optimum, stats.Mean(jq), stats.Mean(iq), jused, iused)
	if len(iq) == len(jq) {
		r, err := stats.WilcoxonSignedRank(jq, iq, stats.Greater)
		switch {
		case err != nil:
			fmt.Println("paired signed-rank test:", err)
		default:
			fmt.Printf("paired Wilcoxon signed-rank, jikken worse than irace: V = %g, p = %.3g (%s)\n", r.Statistic, r.PValue,
				map[bool]string{true: "jikken is worse at 0.05", false: "not worse at 0.05"}[r.PValue < 0.05])
		}
	}
}

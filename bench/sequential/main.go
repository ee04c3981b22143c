// Command sequential simulates the error rate and power of jikken's sequential seeding
// (package sequential) and of naive repeated testing; see README.md.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jikken-dev/jikken/sequential"
)

func main() {
	replicates := flag.Int("replicates", 1000, "comparisons simulated per row")
	spendingName := flag.String("spending", "obrien-fleming", "obrien-fleming or pocock")
	futility := flag.Float64("futility", 0.1, "conditional power below which a pair is settled as no difference")
	shift := flag.Float64("shift", -0.5, "shift of group 0 in the power rows (normal: in standard deviations)")
	results := flag.String("results", "", "replay this 'jikken results -o csv' table of a fixed-seed run instead of simulating")
	by := flag.String("by", "algo", "with -results: the column of the groups")
	block := flag.String("blocks", "fn", "with -results: the column of the blocks")
	metric := flag.String("metric", "best", "with -results: the metric, lower is better")
	min, batch, max := flag.Int("min", 5, "seeds at the first look"), flag.Int("batch", 5, "seeds added per look"), flag.Int("max", 100, "seeds at the last look")
	flag.Parse()
	spending, err := sequential.ParseSpending(*spendingName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	looks, err := sequential.Looks(*min, *batch, *max)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *results != "" {
		if err := replay(*results, *by, *block, *metric, looks, 0.05, *futility, spending); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	d := sequential.Design{Groups: 3, Looks: looks, Alpha: 0.05, Spending: spending, Futility: *futility}
	b, err := d.Boundaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("design: 3 groups x 4 blocks, seeds %v, alpha 0.05, %s spending, futility %.2f\n", looks, spending, *futility)
	for j := range b.Crit {
		fmt.Printf("boundaries (|Z|) at level alpha/%d: %.3f (fixed-sample %.3f)\n", len(b.Crit)-j, b.Crit[j], b.Fixed[j])
	}
	fmt.Println()
	fmt.Println("| rows | distribution | shift | any decided (FWER) | both pairs of group 0 decided | mean seeds |")
	fmt.Println("| --- | --- | --- | --- | --- | --- |")
	for i, dist := range distributions {
		for _, row := range []struct {
			name  string
			b     *sequential.Bounds
			shift float64
		}{{"sequential", b, 0}, {"naive", naive(b), 0}, {"sequential", b, *shift}} {
			s := run(setup{bounds: row.b, blocks: 4, shift: row.shift, dist: dist}, *replicates, uint64(i+1))
			fmt.Printf("| %s | %s | %.2f | %.3f | %.3f | %.1f |\n", row.name, dist.name, row.shift, s.anyRate, s.allPower, s.meanSeeds)
		}
	}
}

// Command prune runs the synthetic learning-curve benchmark of package curvesim over many seeds
// for several pruners and curve families, and prints a Markdown table of how often each kept the
// truly best configuration and what share of the grid's steps it ran.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/jikken-dev/jikken/prune"
	"github.com/jikken-dev/jikken/prune/curvesim"
)

func main() {
	seeds := flag.Int("seeds", 100, "seeds per row (1..seeds)")
	dump := flag.String("dump", "", "write the curves and draws of each seed of -family to this file as JSON lines (for optuna_ref.py), and nothing else")
	family := flag.String("family", "default", "with -dump: default, noisier or crossing")
	flag.Parse()
	families := []struct {
		name string
		c    curvesim.Config
	}{
		{"default (tau 5-10, noise 0.01)", curvesim.Default},
		{"noisier (tau 5-10, noise 0.02)", with(func(c *curvesim.Config) { c.Noise = 0.02 })},
		{"crossing (tau 5-20, noise 0.01)", with(func(c *curvesim.Config) { c.TauHigh = 20 })},
	}
	if *dump != "" {
		for _, f := range families {
			if f.name[:len(*family)] == *family {
				if err := write(*dump, f.c, *seeds); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				return
			}
		}
		fmt.Fprintf(os.Stderr, "-family %q: use default, noisier or crossing\n", *family)
		os.Exit(2)
	}
	pruners := []struct {
		name string
		o    map[string]any
	}{
		{"none", nil},
		{"median", nil},
		{"median", map[string]any{"warmup_steps": 10}},
		{"asha", nil},
		{"asha", map[string]any{"min_resource": 10, "reduction_factor": 3}},
		{"hyperband", map[string]any{"max_resource": 100}},
		{"hyperband", map[string]any{"max_resource": 100, "min_resource": 10}},
	}
	fmt.Println("| curves | pruner | options | best kept | steps run | pruned (of 81) |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: |")
	for _, f := range families {
		for _, p := range pruners {
			pr, err := prune.New(p.name, p.o)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			s := f.c.Repeat(pr, *seeds)
			fmt.Printf("| %s | %s | %s | %d %% | %.1f %% | %.1f |\n", f.name, p.name, options(p.o),
				100*s.BestKept/s.Seeds, 100*s.Steps, s.Pruned)
		}
	}
}

// write puts one JSON line per seed: the seed, the best configuration, every configuration's
// loss at steps 1..Steps, the draws that order the events, and the run's slots.
func write(path string, c curvesim.Config, seeds int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for seed := range uint64(seeds) {
		loss, best := c.Curves(seed + 1)
		line := map[string]any{"seed": seed + 1, "best": best, "slots": c.Slots, "loss": loss, "draws": c.Draws(seed + 1)}
		if err := enc.Encode(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func with(change func(*curvesim.Config)) curvesim.Config {
	c := curvesim.Default
	change(&c)
	return c
}

// options writes a pruner's options in a fixed order for the table.
func options(o map[string]any) string {
	s := ""
	for _, k := range []string{"min_resource", "max_resource", "reduction_factor", "warmup_steps"} {
		if v, ok := o[k]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %v", k, v)
		}
	}
	if s == "" {
		return "defaults"
	}
	return s
}

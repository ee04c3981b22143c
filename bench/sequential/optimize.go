package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/jikken-dev/jikken/sequential"
	"github.com/jikken-dev/jikken/stats"
)

// table is a 'jikken results -o csv' table: one trial per row.
type table struct {
	header []string
	rows   [][]string
}

func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	t := &table{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if t.header == nil {
			t.header = rec
			continue
		}
		t.rows = append(t.rows, rec)
	}
}

func (t *table) col(name string) int { return slices.Index(t.header, name) }

// replay feeds a fixed-seed run's results to the design seed by seed, as a sequential run would
// have got them, and compares its verdicts with the fixed-sample verdicts over all seeds
// (pairwise Wilcoxon signed-rank tests with Holm's adjustment, as 'jikken compare' gives them).
func replay(path, by, block, metric string, looks []int, alpha, futility float64, spending sequential.Spending) error {
	t, err := readTable(path)
	if err != nil {
		return err
	}
	cb, cblk, cm, cs := t.col(by), t.col(block), t.col(metric), t.col("seed")
	if cb < 0 || cblk < 0 || cm < 0 || cs < 0 {
		return fmt.Errorf("%s: want columns %s, %s, %s and seed", path, by, block, metric)
	}
	var groups, blocks []string
	var seeds []int
	value := map[[3]string]float64{}
	for _, row := range t.rows {
		if row[cb] == "" {
			continue
		}
		if !slices.Contains(groups, row[cb]) {
			groups = append(groups, row[cb])
		}
		if !slices.Contains(blocks, row[cblk]) {
			blocks = append(blocks, row[cblk])
		}
		s, err := strconv.Atoi(row[cs])
		if err != nil {
			return fmt.Errorf("seed %q: %w", row[cs], err)
		}
		if !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
		v, err := strconv.ParseFloat(row[cm], 64)
		if err != nil {
			v = math.Inf(1)
		}
		value[[3]string{row[cb], row[cblk], row[cs]}] = v
	}
	slices.Sort(seeds)
	data := make([]sequential.Seed, len(seeds))
	for i, s := range seeds {
		data[i] = make(sequential.Seed, len(blocks))
		for b, blk := range blocks {
			data[i][b] = make([]float64, len(groups))
			for g, grp := range groups {
				data[i][b][g] = value[[3]string{grp, blk, strconv.Itoa(s)}]
			}
		}
	}
	bd, err := sequential.Design{Groups: len(groups), Looks: looks, Alpha: alpha, Spending: spending, Futility: futility}.Boundaries()
	if err != nil {
		return err
	}
	var dec sequential.Decision
	for n := 0; ; {
		if dec, err = bd.Decide(data[:n]); err != nil {
			return err
		}
		if dec.Stop || dec.Seeds > len(data) {
			break
		}
		n = dec.Seeds
	}
	fixed := fixedVerdicts(data, len(groups), alpha)
	fmt.Printf("%s: %d groups (%s) x %d blocks (%s), seeds %v\n", path, len(groups), by, len(blocks), block, looks)
	fmt.Printf("sequential: stopped=%v at %d seeds: %d trials of %d (%.0f %%)\n", dec.Stop, dec.Seeds,
		dec.Seeds*len(groups)*len(blocks), len(seeds)*len(groups)*len(blocks), 100*float64(dec.Seeds)/float64(len(seeds)))
	fmt.Println("| a | b | sequential (z, look) | fixed, all seeds (Holm p) | same |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	same := 0
	for j, p := range dec.Pairs {
		v := p.Verdict.String()
		f := fixed[j]
		if v == f.verdict {
			same++
		}
		fmt.Printf("| %s | %s | %s (%.2f, %d seeds) | %s (%.2g) | %v |\n", groups[p.A], groups[p.B], v, p.Z, seedsAt(looks, p.Look), f.verdict, f.p, v == f.verdict)
	}
	fmt.Printf("same verdicts: %d of %d\n", same, len(dec.Pairs))
	return nil
}

func seedsAt(looks []int, l int) int {
	if l < 0 {
		return 0
	}
	return looks[l]
}

type fixedVerdict struct {
	verdict string
	p       float64
}

// fixedVerdicts are the Holm-adjusted pairwise signed-rank verdicts over every block of every
// seed, in the design's pair order.
func fixedVerdicts(data []sequential.Seed, k int, alpha float64) []fixedVerdict {
	var ps []float64
	var dirs []bool
	for a := range k {
		for b := a + 1; b < k; b++ {
			var x, y []float64
			for _, s := range data {
				for _, blk := range s {
					x, y = append(x, blk[a]), append(y, blk[b])
				}
			}
			r, err := stats.WilcoxonSignedRank(x, y, stats.TwoSided)
			if err != nil {
				panic(err)
			}
			ps = append(ps, r.PValue)
			n := 0
			for i := range x {
				if x[i] != y[i] {
					n++
				}
			}
			dirs = append(dirs, r.Statistic < float64(n*(n+1))/4)
		}
	}
	adj := stats.Holm(ps)
	out := make([]fixedVerdict, len(ps))
	for j, p := range adj {
		out[j] = fixedVerdict{verdict: "no-difference", p: p}
		if p < alpha {
			out[j].verdict = "b-better"
			if dirs[j] {
				out[j].verdict = "a-better"
			}
		}
	}
	return out
}

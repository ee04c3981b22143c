package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

// Options say what to compare: the rows of a table are grouped by one column and the groups are
// compared on another.
type Options struct {
	// By names the column whose values are the groups (an algorithm, a configuration).
	By string
	// Metric names the numeric column compared.
	Metric string
	// PairBy, when set, names the column that pairs rows across groups (a seed, a dataset), or
	// several separated by commas ("fn,seed"): each distinct value (combination) is a block
	// holding exactly one row per group.
	PairBy string
	// LowerIsBetter says that smaller metric values are better (a loss, a runtime).
	LowerIsBetter bool
	// Alpha is the significance level; 0 means 0.05.
	Alpha float64
}

// Comparison is the outcome of Compare. Its JSON form is the documented contract of
// `jikken compare -o json`; fields tagged "-" are for the text forms only.
type Comparison struct {
	Metric   string   `json:"metric"`
	Groups   []Group  `json:"groups"`
	Omnibus  *Omnibus `json:"omnibus"`
	Pairwise []Pair   `json:"pairwise"`
	// CriticalDifference is Nemenyi's critical difference of mean ranks (Friedman designs with
	// three or more groups), or nil.
	CriticalDifference *float64 `json:"critical_difference"`

	By            string  `json:"-"`
	PairBy        string  `json:"-"`
	LowerIsBetter bool    `json:"-"`
	Alpha         float64 `json:"-"`
	// Blocks is the number of blocks used in a paired design.
	Blocks int `json:"-"`
	// Dropped lists the rows left out because the metric was missing or NaN.
	Dropped []Dropped `json:"-"`
}

// Group summarises one group's metric values.
type Group struct {
	Name   string  `json:"name"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	IQR    float64 `json:"iqr"`

	// MeanRank is the group's mean rank, 1 being best: within blocks for paired designs, in the
	// pooled sample otherwise.
	MeanRank float64 `json:"-"`
	// MedianCI is the distribution-free 95% confidence interval of the median (order statistics;
	// a bootstrap would cost thousands of sorts of a million-trial group).
	MedianCI stats.Interval `json:"-"`
	// Values are the observations, in input order (block order for paired designs).
	Values []float64 `json:"-"`
}

// Omnibus is the test of all groups at once.
type Omnibus struct {
	Test      string  `json:"test"`
	Statistic float64 `json:"statistic"`
	DF        int     `json:"df"`
	PValue    float64 `json:"p_value"`
}

// Pair is the comparison of groups A and B, A being the first sample of the test.
type Pair struct {
	A          string  `json:"a"`
	B          string  `json:"b"`
	Test       string  `json:"test"`
	Statistic  float64 `json:"statistic"`
	PValue     float64 `json:"p_value"`
	PAdjusted  float64 `json:"p_adjusted"`
	EffectSize Effect  `json:"effect_size"`
}

// Effect is a named effect size.
type Effect struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Dropped is a row left out of the comparison.
type Dropped struct {
	Row    int    // 1-based data row (the header is not counted)
	Trial  string // the row's trial name when the table has a trial column
	Reason string
}

// Test and effect-size names used in Comparison.
const (
	TestKruskalWallis = "kruskal-wallis"
	TestFriedman      = "friedman"
	TestMannWhitney   = "mann-whitney-u"
	TestSignedRank    = "wilcoxon-signed-rank"
	EffectA12         = "vargha-delaney-a12"
	EffectRankBiser   = "rank-biserial"
)

// Compare groups the rows of t by opts.By and compares the groups on opts.Metric: two groups with
// a Mann-Whitney U test (or a Wilcoxon signed-rank test when opts.PairBy pairs the rows), three or
// more with Kruskal-Wallis (or Friedman) followed by pairwise tests with Holm's adjustment.
// Groups keep the order of their first appearance in t. When t has a status column (as `jikken
// results` writes it), rows whose status is set and is not "succeeded" are left out and listed
// in Dropped: a failed trial's last logged value is not a result.
func Compare(t *results.Table, opts Options) (*Comparison, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Alpha <= 0 || opts.Alpha >= 1 {
		return nil, fmt.Errorf("alpha %v is outside (0, 1); use e.g. 0.05", opts.Alpha)
	}
	d, err := extract(t, opts)
	if err != nil {
		return nil, err
	}
	c := &Comparison{
		Metric: opts.Metric, By: opts.By, PairBy: opts.PairBy,
		LowerIsBetter: opts.LowerIsBetter, Alpha: opts.Alpha, Dropped: d.dropped,
		Pairwise: []Pair{},
	}
	if opts.PairBy != "" {
		err = c.comparePaired(d)
	} else {
		err = c.compareUnpaired(d)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// data is a table reduced to what the tests need.
type data struct {
	names []string
	// values[g] holds group g's observations; for paired designs values[g][b] is block b's.
	values  [][]float64
	blocks  []string
	dropped []Dropped
}

func column(t *results.Table, flag, name string) (int, error) {
	i := t.Col(name)
	if i < 0 {
		return 0, fmt.Errorf("no column %q (%s); the table has columns %s", name, flag, strings.Join(t.Columns, ", "))
	}
	return i, nil
}

// extract reads groups (and blocks) out of t. It drops rows without a group, rows of unsuccessful
// trials and rows whose metric is empty, NaN or infinite (with their whole block in a paired
// design), and refuses any other non-numeric value.
func extract(t *results.Table, opts Options) (*data, error) {
	if opts.By == "" || opts.Metric == "" {
		return nil, fmt.Errorf("say which column holds the groups (--by) and which the metric (--metric)")
	}
	by, err := column(t, "--by", opts.By)
	if err != nil {
		return nil, err
	}
	metric, err := column(t, "--metric", opts.Metric)
	if err != nil {
		return nil, err
	}
	// A block may be named by several columns ("fn,seed"): its key joins their values.
	var pairCols []int
	if opts.PairBy != "" {
		for _, name := range strings.Split(opts.PairBy, ",") {
			i, err := column(t, "--pair-by", strings.TrimSpace(name))
			if err != nil {
				return nil, err
			}
			pairCols = append(pairCols, i)
		}
	}
	paired := len(pairCols) > 0
	trial, status := t.Col("trial"), t.Col("status")
	d := &data{}
	groupIdx := map[string]int{}
	blockIdx := map[string]int{}
	type cell struct {
		g, b int
		v    float64
	}
	var cells []cell
	badBlocks := map[int]bool{}
	for r, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("row %d has %d fields, the header %d", r+1, len(row), len(t.Columns))
		}
		v, reason, err := metricOf(row, by, metric, status, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rowName(r, row, trial), err)
		}
		if row[by] == "" {
			d.dropped = append(d.dropped, Dropped{Row: r + 1, Trial: trialOf(row, trial), Reason: reason})
			continue
		}
		g, ok := groupIdx[row[by]]
		if !ok {
			g = len(d.names)
			groupIdx[row[by]] = g
			d.names = append(d.names, row[by])
			d.values = append(d.values, nil)
		}
		b := -1
		var block string
		if paired {
			vals := make([]string, len(pairCols))
			for i, c := range pairCols {
				vals[i] = row[c]
			}
			block = strings.Join(vals, ",")
			if b, ok = blockIdx[block]; !ok {
				b = len(d.blocks)
				blockIdx[block] = b
				d.blocks = append(d.blocks, block)
			}
		}
		if reason != "" {
			if paired {
				reason += fmt.Sprintf("; block %s=%s dropped for every group", opts.PairBy, block)
				badBlocks[b] = true
			}
			d.dropped = append(d.dropped, Dropped{Row: r + 1, Trial: trialOf(row, trial), Reason: reason})
			continue
		}
		cells = append(cells, cell{g, b, v})
	}
	if len(d.names) < 2 {
		return nil, fmt.Errorf("column %q has %d distinct value(s); comparing needs at least 2 groups", opts.By, len(d.names))
	}
	if !paired {
		for _, c := range cells {
			d.values[c.g] = append(d.values[c.g], c.v)
		}
		return d, checkSizes(d, opts)
	}
	// grid[{block, group}] keeps every value, so a repeated (block, group) can be reported.
	grid := map[[2]int][]float64{}
	for _, c := range cells {
		grid[[2]int{c.b, c.g}] = append(grid[[2]int{c.b, c.g}], c.v)
	}
	return d, pairUp(d, grid, badBlocks, opts)
}

// metricOf returns the row's metric value, or the reason the row is left out of the comparison;
// a metric that is not a number at all is an error rather than a reason.
func metricOf(row []string, by, metric, status int, opts Options) (float64, string, error) {
	raw := strings.TrimSpace(row[metric])
	v, err := strconv.ParseFloat(raw, 64)
	switch {
	case row[by] == "":
		// Steps of the experiment that are not in the comparison (a build, a summary).
		return 0, fmt.Sprintf("no value for %s", opts.By), nil
	case status >= 0 && row[status] != "" && row[status] != "succeeded":
		return 0, "trial " + row[status], nil
	case raw == "":
		return 0, fmt.Sprintf("%s is empty", opts.Metric), nil
	case err != nil:
		return 0, "", fmt.Errorf("column %q holds %q, which is not a number; fix the value or drop the row", opts.Metric, row[metric])
	case math.IsNaN(v) || math.IsInf(v, 0):
		// Infinite values would rank fine but leave means and IQRs that JSON cannot carry.
		return 0, fmt.Sprintf("%s is %v", opts.Metric, v), nil
	}
	return v, "", nil
}

// pairUp fills d.values with one value per group per complete block and rejects unbalanced
// designs, naming the first block that is incomplete or repeated.
func pairUp(d *data, grid map[[2]int][]float64, badBlocks map[int]bool, opts Options) error {
	var kept []string
	for b, name := range d.blocks {
		if badBlocks[b] {
			continue
		}
		for g, gname := range d.names {
			vs := grid[[2]int{b, g}]
			switch {
			case len(vs) == 0:
				return fmt.Errorf("unbalanced blocks: %s=%s has no row for %s=%s; a paired comparison needs exactly one row per group in every block (or drop --pair-by)", opts.PairBy, name, opts.By, gname)
			case len(vs) > 1:
				return fmt.Errorf("unbalanced blocks: %s=%s has %d rows for %s=%s; a paired comparison needs exactly one row per group in every block", opts.PairBy, name, len(vs), opts.By, gname)
			}
			d.values[g] = append(d.values[g], vs[0])
		}
		kept = append(kept, name)
	}
	d.blocks = kept
	if len(kept) < 2 {
		return fmt.Errorf("%d complete block(s) of %s; a paired comparison needs at least 2", len(kept), opts.PairBy)
	}
	return nil
}

func checkSizes(d *data, opts Options) error {
	for g, vs := range d.values {
		if len(vs) < 2 {
			return fmt.Errorf("group %s=%s has %d usable observation(s) of %s; each group needs at least 2", opts.By, d.names[g], len(vs), opts.Metric)
		}
	}
	return nil
}

func rowName(r int, row []string, trial int) string {
	if t := trialOf(row, trial); t != "" {
		return fmt.Sprintf("row %d (trial %s)", r+1, t)
	}
	return fmt.Sprintf("row %d", r+1)
}

func trialOf(row []string, trial int) string {
	if trial < 0 {
		return ""
	}
	return row[trial]
}

func (c *Comparison) addGroups(d *data) error {
	for g, vs := range d.values {
		ci, err := stats.MedianCI(vs, 0.95)
		if err != nil {
			return fmt.Errorf("group %s: %w", d.names[g], err)
		}
		c.Groups = append(c.Groups, Group{
			Name: d.names[g], N: len(vs), Median: stats.Median(vs), Mean: stats.Mean(vs),
			IQR: stats.IQR(vs), MedianCI: ci, Values: vs,
		})
	}
	return nil
}

func (c *Comparison) compareUnpaired(d *data) error {
	if err := c.addGroups(d); err != nil {
		return err
	}
	// Mean ranks in the pooled sample, turned so that rank 1 is the best observation.
	var pooled []float64
	for _, vs := range d.values {
		pooled = append(pooled, vs...)
	}
	ranks := stats.Rank(pooled)
	n := float64(len(pooled))
	off := 0
	for g, vs := range d.values {
		sum := 0.0
		for _, r := range ranks[off : off+len(vs)] {
			if !c.LowerIsBetter {
				r = n + 1 - r
			}
			sum += r
		}
		c.Groups[g].MeanRank = sum / float64(len(vs))
		off += len(vs)
	}
	if len(d.values) > 2 {
		kw, err := stats.KruskalWallis(d.values)
		if err != nil {
			return err
		}
		c.Omnibus = &Omnibus{Test: TestKruskalWallis, Statistic: kw.Statistic, DF: kw.DF, PValue: kw.PValue}
	}
	return c.pairwise(d, func(x, y []float64) (Pair, error) {
		r, err := stats.MannWhitney(x, y, stats.TwoSided)
		if err != nil {
			return Pair{}, err
		}
		a12 := r.Statistic / (float64(len(x)) * float64(len(y)))
		return Pair{Test: TestMannWhitney, Statistic: r.Statistic, PValue: r.PValue,
			EffectSize: Effect{Name: EffectA12, Value: a12}}, nil
	})
}

func (c *Comparison) comparePaired(d *data) error {
	if err := c.addGroups(d); err != nil {
		return err
	}
	c.Blocks = len(d.blocks)
	k := len(d.values)
	blocks := make([][]float64, len(d.blocks))
	for b := range blocks {
		blocks[b] = make([]float64, k)
		for g := range d.values {
			blocks[b][g] = d.values[g][b]
		}
	}
	fr, err := stats.Friedman(blocks)
	if err != nil {
		return err
	}
	for g, r := range fr.MeanRanks {
		if !c.LowerIsBetter {
			r = float64(k) + 1 - r
		}
		c.Groups[g].MeanRank = r
	}
	if k > 2 {
		c.Omnibus = &Omnibus{Test: TestFriedman, Statistic: fr.Statistic, DF: fr.DF, PValue: fr.PValue}
		cd, err := stats.NemenyiCD(k, len(blocks), c.Alpha)
		if err != nil {
			return err
		}
		c.CriticalDifference = &cd
	}
	return c.pairwise(d, func(x, y []float64) (Pair, error) {
		r, err := stats.WilcoxonSignedRank(x, y, stats.TwoSided)
		if err != nil {
			return Pair{}, err
		}
		rb, err := stats.RankBiserial(x, y)
		if err != nil {
			return Pair{}, err
		}
		return Pair{Test: TestSignedRank, Statistic: r.Statistic, PValue: r.PValue,
			EffectSize: Effect{Name: EffectRankBiser, Value: rb}}, nil
	})
}

// pairwise runs test on every pair (a, b) with a before b in group order and adjusts the p-values
// with Holm's method over all pairs.
func (c *Comparison) pairwise(d *data, test func(x, y []float64) (Pair, error)) error {
	var ps []float64
	for a := range d.values {
		for b := a + 1; b < len(d.values); b++ {
			p, err := test(d.values[a], d.values[b])
			if err != nil {
				return fmt.Errorf("%s vs %s: %w", d.names[a], d.names[b], err)
			}
			p.A, p.B = d.names[a], d.names[b]
			c.Pairwise = append(c.Pairwise, p)
			ps = append(ps, p.PValue)
		}
	}
	for i, adj := range stats.Holm(ps) {
		c.Pairwise[i].PAdjusted = adj
	}
	return nil
}

package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

// Direction says which values of a metric are better.
type Direction int

const (
	// DirectionUnknown: nothing was said; mean rank 1 is the smallest value, verdicts say which
	// group tends to be larger, and failed trials cannot be ranked worst.
	DirectionUnknown Direction = iota
	// LowerIsBetter: a loss, a runtime.
	LowerIsBetter
	// HigherIsBetter: an accuracy, a reward.
	HigherIsBetter
)

// String returns the direction as the JSON contract writes it.
func (d Direction) String() string {
	switch d {
	case LowerIsBetter:
		return "lower-is-better"
	case HigherIsBetter:
		return "higher-is-better"
	}
	return "unknown"
}

// Failed-trial policies (Options.Failed).
const (
	// FailedWorst ranks failed trials and non-finite values below every real value (they tie with
	// each other); it needs the metric's direction.
	FailedWorst = "worst"
	// FailedDrop leaves them out, listed.
	FailedDrop = "drop"
)

// Incomplete-block policies (Options.Incomplete).
const (
	// IncompleteDrop leaves out a block that lacks a usable row for some group, as R's
	// friedman.test does with a block holding NA, and lists it.
	IncompleteDrop = "drop"
	// IncompleteError refuses the comparison instead.
	IncompleteError = "error"
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
	// Direction says whether smaller or larger values are better, or neither is known.
	Direction Direction
	// Alternative is the alternative hypothesis of the pairwise tests, for a pair (a, b) about a
	// (Greater: a tends to be larger). The omnibus test has none.
	Alternative stats.Alternative
	// Failed is FailedWorst or FailedDrop; empty means worst when the direction is known and drop
	// otherwise.
	Failed string
	// Incomplete is IncompleteDrop (the default when empty) or IncompleteError.
	Incomplete string
	// Alpha is the significance level; 0 means 0.05.
	Alpha float64
}

// Comparison is the outcome of Compare. Its JSON form (MarshalJSON) is the documented contract of
// `jikken compare -o json`.
type Comparison struct {
	Metric   string
	Groups   []Group
	Omnibus  *Omnibus
	Pairwise []Pair
	// CriticalDifference is Nemenyi's critical difference of mean ranks (Friedman designs with
	// three or more groups), or nil.
	CriticalDifference *float64

	By          string
	PairBy      string
	Direction   Direction
	Alternative stats.Alternative
	// Failed is the failed-trial policy applied (the default resolved).
	Failed string
	Alpha  float64
	// Blocks is the number of blocks used in a paired design.
	Blocks int
	// Dropped lists the rows left out: not a result (a trial that did not finish, an empty
	// metric, a step without a group), failed under FailedDrop, or in an incomplete block.
	Dropped []Dropped
	// Worst lists the rows counted as the worst value under FailedWorst.
	Worst []Dropped
	// DroppedBlocks lists the incomplete blocks left out of a paired design.
	DroppedBlocks []DroppedBlock
}

// Group summarises one group's metric values.
type Group struct {
	Name string
	// N is the number of observations in the tests, failed ones ranked worst included.
	N int
	// Failed is how many of them are failures ranked worst.
	Failed int
	// Median, Mean, IQR and MedianCI describe the finite values only (NaN when there are none):
	// a failure has no value to average. The ranks and tests count failures as worst.
	Median, Mean, IQR float64
	// MedianCI is the distribution-free 95% confidence interval of the median (order statistics;
	// a bootstrap would cost thousands of sorts of a million-trial group).
	MedianCI stats.Interval
	// MeanRank is the group's mean rank: within blocks for paired designs, in the pooled sample
	// otherwise. Rank 1 is the best value when the direction is known, the smallest otherwise.
	MeanRank float64
	// Values are the observations in the tests, in input order (block order for paired designs);
	// failures are +Inf when lower is better and -Inf when higher is better.
	Values []float64
}

// Omnibus is the test of all groups at once.
type Omnibus struct {
	Test      string
	Statistic float64
	DF        int
	PValue    float64
}

// Pair is the comparison of groups A and B, A being the first sample of the test.
type Pair struct {
	A, B       string
	Test       string
	Statistic  float64
	PValue     float64
	PAdjusted  float64
	EffectSize Effect
}

// Effect is a named effect size.
type Effect struct {
	Name  string
	Value float64
}

// Dropped is a row left out of the comparison, or counted as worst.
type Dropped struct {
	Row    int    // 1-based data row (the header is not counted)
	Trial  string // the row's trial name when the table has a trial column
	Reason string
}

// DroppedBlock is an incomplete block left out of a paired design.
type DroppedBlock struct {
	Block  string `json:"block"` // COLUMN=VALUE[,VALUE...]
	Reason string `json:"reason"`
}

// Test and effect-size names used in Comparison.
const (
	TestKruskalWallis = "kruskal-wallis"
	TestFriedman      = "friedman"
	TestMannWhitney   = "mann-whitney-u"
	TestSignedRank    = "wilcoxon-signed-rank"
	EffectA12         = "vargha-delaney-a12"
	EffectCliffsDelta = "cliffs-delta"
	EffectRankBiser   = "rank-biserial"
)

// Compare groups the rows of t by opts.By and compares the groups on opts.Metric: two groups with
// a Mann-Whitney U test (or a Wilcoxon signed-rank test when opts.PairBy pairs the rows), three or
// more with Kruskal-Wallis (or Friedman) followed by pairwise tests with Holm's adjustment.
// Groups keep the order of their first appearance in t.
//
// When t has a status column (as `jikken results` writes it), a failed trial is a failure, as is
// a non-finite metric value; opts.Failed decides whether failures rank worst or are left out.
// Trials that did not finish (pending, running, skipped, killed) and empty metric values are not
// results and are left out. Everything left out or ranked worst is listed in the comparison.
func Compare(t *results.Table, opts Options) (*Comparison, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	d, err := extract(t, opts, true)
	if err != nil {
		return nil, err
	}
	c := &Comparison{
		Metric: opts.Metric, By: opts.By, PairBy: opts.PairBy, Direction: opts.Direction,
		Alternative: opts.Alternative, Failed: opts.Failed, Alpha: opts.Alpha,
		Dropped: d.dropped, Worst: d.worst, DroppedBlocks: d.droppedBlocks,
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

// resolve checks the options and fills in their defaults.
func (o Options) resolve() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		return o, fmt.Errorf("alpha %v is outside (0, 1); use e.g. 0.05", o.Alpha)
	}
	if o.By == "" || o.Metric == "" {
		return o, fmt.Errorf("say which column holds the groups (--by) and which the metric (--metric)")
	}
	switch o.Failed {
	case "":
		o.Failed = FailedDrop
		if o.Direction != DirectionUnknown {
			o.Failed = FailedWorst
		}
	case FailedDrop:
	case FailedWorst:
		if o.Direction == DirectionUnknown {
			return o, fmt.Errorf("failed trials can only rank worst when the metric's direction is known; say --lower-is-better or --higher-is-better, or --failed drop")
		}
	default:
		return o, fmt.Errorf("failed-trial policy %q: use worst or drop", o.Failed)
	}
	switch o.Incomplete {
	case "":
		o.Incomplete = IncompleteDrop
	case IncompleteDrop, IncompleteError:
	default:
		return o, fmt.Errorf("incomplete-block policy %q: use drop or error", o.Incomplete)
	}
	return o, nil
}

// worstValue is what a failure is ranked as: beyond every finite value on the bad side.
func (o Options) worstValue() float64 {
	if o.Direction == HigherIsBetter {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// data is a table reduced to what the tests need.
type data struct {
	names []string
	// values[g] holds group g's observations; for paired designs values[g][b] is block b's.
	values [][]float64
	// failed[g] counts group g's failures ranked worst.
	failed        []int
	blocks        []string
	dropped       []Dropped
	worst         []Dropped
	droppedBlocks []DroppedBlock
}

func column(t *results.Table, flag, name string) (int, error) {
	i := t.Col(name)
	if i < 0 {
		return 0, fmt.Errorf("no column %q (%s); the table has columns %s", name, flag, strings.Join(t.Columns, ", "))
	}
	return i, nil
}

// kind says what a row contributes.
type kind int

const (
	kindValue   kind = iota // a finite value
	kindFailure             // a failed trial or a non-finite value
	kindNone                // not a result: left out whatever the policy
)

// obs is one row of the table as the comparison sees it.
type obs struct {
	row    int // 0-based
	trial  string
	g, b   int
	v      float64
	kind   kind
	reason string
}

func (o obs) note(reason string) Dropped {
	return Dropped{Row: o.row + 1, Trial: o.trial, Reason: reason}
}

// extract reads groups (and blocks) out of t, applying the failed-trial and incomplete-block
// policies, and refuses any metric value that is not a number. When testable is set it also
// refuses what no test can take: fewer than 2 groups, a group without a value, too few blocks.
func extract(t *results.Table, opts Options, testable bool) (*data, error) {
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
	trial, status := t.Col("trial"), t.Col("status")
	d := &data{}
	groupIdx := map[string]int{}
	blockIdx := map[string]int{}
	var rows []obs
	for r, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("row %d has %d fields, the header %d", r+1, len(row), len(t.Columns))
		}
		o := obs{row: r, trial: trialOf(row, trial), b: -1}
		if row[by] == "" {
			// Steps of the experiment that are not in the comparison (a build, a summary).
			d.dropped = append(d.dropped, o.note(fmt.Sprintf("no value for %s", opts.By)))
			continue
		}
		o.v, o.kind, o.reason, err = metricOf(row, metric, status, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rowName(r, row, trial), err)
		}
		g, ok := groupIdx[row[by]]
		if !ok {
			g = len(d.names)
			groupIdx[row[by]] = g
			d.names = append(d.names, row[by])
		}
		o.g = g
		if len(pairCols) > 0 {
			vals := make([]string, len(pairCols))
			for i, c := range pairCols {
				vals[i] = row[c]
			}
			block := strings.Join(vals, ",")
			if o.b, ok = blockIdx[block]; !ok {
				o.b = len(d.blocks)
				blockIdx[block] = o.b
				d.blocks = append(d.blocks, block)
			}
		}
		if o.kind == kindFailure {
			if opts.Failed == FailedWorst {
				o.v, o.kind = opts.worstValue(), kindValue
				d.worst = append(d.worst, o.note(o.reason))
			} else {
				o.kind = kindNone
			}
		}
		if o.kind == kindNone {
			d.dropped = append(d.dropped, o.note(o.reason))
		}
		rows = append(rows, o)
	}
	if testable && len(d.names) < 2 {
		return nil, fmt.Errorf("column %q has %d distinct value(s); comparing needs at least 2 groups", opts.By, len(d.names))
	}
	d.values = make([][]float64, len(d.names))
	d.failed = make([]int, len(d.names))
	if len(pairCols) == 0 {
		for _, o := range rows {
			if o.kind == kindValue {
				d.values[o.g] = append(d.values[o.g], o.v)
				if math.IsInf(o.v, 0) {
					d.failed[o.g]++
				}
			}
		}
		if testable {
			return d, checkSizes(d, rows, opts)
		}
		return d, nil
	}
	err = pairUp(d, rows, opts)
	slices.SortStableFunc(d.dropped, func(a, b Dropped) int { return cmp.Compare(a.Row, b.Row) })
	if err == nil && testable {
		err = checkBlocks(d, opts)
	}
	return d, err
}

// metricOf classifies the row's metric value; a metric that is not a number at all is an error.
func metricOf(row []string, metric, status int, opts Options) (float64, kind, string, error) {
	if status >= 0 {
		switch st := row[status]; st {
		case "", "succeeded":
		case "failed":
			return 0, kindFailure, "trial failed", nil
		case "pruned":
			// Its search stopped it early on purpose: not a failure to rank worst, and its last
			// value, taken from an unfinished curve, is not a result to rank either.
			return 0, kindNone, "trial pruned early by its search, not a result", nil
		case "eliminated":
			// A race dropped it before it ran: it has no value, and is not a failure either.
			return 0, kindNone, "trial eliminated by its race before it ran, not a result", nil
		default:
			return 0, kindNone, fmt.Sprintf("trial %s, not a result", st), nil
		}
	}
	raw := strings.TrimSpace(row[metric])
	v, err := strconv.ParseFloat(raw, 64)
	switch {
	case raw == "":
		return 0, kindNone, fmt.Sprintf("%s is empty", opts.Metric), nil
	case err != nil && !isRange(err):
		return 0, 0, "", fmt.Errorf("column %q holds %q, which is not a number; fix the value or drop the row", opts.Metric, row[metric])
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, kindFailure, fmt.Sprintf("%s is %v", opts.Metric, v), nil
	}
	return v, kindValue, "", nil
}

// isRange reports a number too large for a float64 ("1e999"), which ParseFloat turns into ±Inf
// with an error: it is a non-finite value, not text.
func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// pairUp fills d.values with one value per group per complete block. A repeated (block, group)
// is always an error; a block lacking a usable row for some group is left out (IncompleteDrop,
// R's friedman.test rule) with its rows, or refused (IncompleteError).
func pairUp(d *data, rows []obs, opts Options) error {
	cells := make([][][]obs, len(d.blocks))
	for b := range cells {
		cells[b] = make([][]obs, len(d.names))
	}
	for _, o := range rows {
		cells[o.b][o.g] = append(cells[o.b][o.g], o)
	}
	var kept []string
	for b, name := range d.blocks {
		var missing []string
		for g, gname := range d.names {
			usable := 0
			for _, o := range cells[b][g] {
				if o.kind == kindValue {
					usable++
				}
			}
			switch {
			case usable > 1 || len(cells[b][g]) > 1:
				return fmt.Errorf("unbalanced blocks: %s=%s has %d rows for %s=%s; a paired comparison needs exactly one row per group in every block (pair by more columns, e.g. --pair-by fn,seed)",
					opts.PairBy, name, len(cells[b][g]), opts.By, gname)
			case usable == 0 && len(cells[b][g]) == 0:
				missing = append(missing, fmt.Sprintf("no row for %s=%s", opts.By, gname))
			case usable == 0:
				missing = append(missing, fmt.Sprintf("%s=%s left out (%s)", opts.By, gname, cells[b][g][0].reason))
			}
		}
		if len(missing) > 0 {
			reason := "incomplete: " + strings.Join(missing, "; ")
			if opts.Incomplete == IncompleteError {
				return fmt.Errorf("block %s=%s is %s; a paired comparison needs one usable row per group in every block (--incomplete drop leaves such blocks out, as R's friedman.test does)", opts.PairBy, name, reason)
			}
			d.droppedBlocks = append(d.droppedBlocks, DroppedBlock{Block: opts.PairBy + "=" + name, Reason: reason})
			for g := range d.names {
				for _, o := range cells[b][g] {
					if o.kind == kindValue {
						d.dropped = append(d.dropped, o.note(fmt.Sprintf("block %s=%s left out, %s", opts.PairBy, name, reason)))
					}
				}
			}
			continue
		}
		for g := range d.names {
			v := cells[b][g][0].v
			d.values[g] = append(d.values[g], v)
			if math.IsInf(v, 0) {
				d.failed[g]++
			}
		}
		kept = append(kept, name)
	}
	d.blocks = kept
	return nil
}

// checkBlocks refuses a paired design with too few complete blocks for its test.
func checkBlocks(d *data, opts Options) error {
	// One block is enough for a paired test of two groups, as in R; R's friedman.test refuses a
	// single block, so three or more groups need two.
	need := 1
	if len(d.names) > 2 {
		need = 2
	}
	if len(d.blocks) < need {
		return fmt.Errorf("%d complete block(s) of %s; a paired comparison of %d groups needs at least %d (blocks lacking a usable row for some group are left out)", len(d.blocks), opts.PairBy, len(d.names), need)
	}
	return nil
}

// checkSizes refuses a group without any usable observation; one is enough for R's tests.
func checkSizes(d *data, rows []obs, opts Options) error {
	for g, vs := range d.values {
		if len(vs) > 0 {
			continue
		}
		reason := "no rows"
		for _, o := range rows {
			if o.g == g {
				reason = fmt.Sprintf("row %d: %s", o.row+1, o.reason)
				break
			}
		}
		return fmt.Errorf("group %s=%s has no usable observation of %s (%s); each group needs at least 1", opts.By, d.names[g], opts.Metric, reason)
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

func (c *Comparison) addGroups(d *data) {
	for g, vs := range d.values {
		finite := slices.DeleteFunc(slices.Clone(vs), func(v float64) bool { return math.IsInf(v, 0) })
		gr := Group{Name: d.names[g], N: len(vs), Failed: d.failed[g], Values: vs,
			Median: math.NaN(), Mean: math.NaN(), IQR: math.NaN(), MedianCI: stats.Interval{Lo: math.NaN(), Hi: math.NaN()}}
		if len(finite) > 0 {
			gr.Median, gr.Mean, gr.IQR = stats.Median(finite), stats.Mean(finite), stats.IQR(finite)
			// MedianCI fails only on an empty or NaN sample, which finite cannot be.
			gr.MedianCI, _ = stats.MedianCI(finite, 0.95)
		}
		c.Groups = append(c.Groups, gr)
	}
}

// turnRank maps an ascending rank (1 = smallest of n) to the comparison's scale: 1 = best when
// higher is better.
func (c *Comparison) turnRank(r, n float64) float64 {
	if c.Direction == HigherIsBetter {
		return n + 1 - r
	}
	return r
}

func (c *Comparison) compareUnpaired(d *data) error {
	c.addGroups(d)
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
			sum += c.turnRank(r, n)
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
		r, err := stats.MannWhitney(x, y, c.Alternative)
		if err != nil {
			return Pair{}, err
		}
		a12 := r.Statistic / (float64(len(x)) * float64(len(y)))
		return Pair{Test: TestMannWhitney, Statistic: r.Statistic, PValue: r.PValue,
			EffectSize: Effect{Name: EffectA12, Value: a12}}, nil
	})
}

func (c *Comparison) comparePaired(d *data) error {
	c.addGroups(d)
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
		c.Groups[g].MeanRank = c.turnRank(r, float64(k))
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
		r, err := stats.WilcoxonSignedRank(x, y, c.Alternative)
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

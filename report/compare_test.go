package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/stats"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the actual output")

func table(t *testing.T, csv string) *results.Table {
	t.Helper()
	tb, err := results.ReadCSV(strings.NewReader(csv), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func readTable(t *testing.T, name string) *results.Table {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb, err := results.ReadCSV(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestCompareOutputs(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"paired-loss", Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter}},
		{"unpaired-accuracy", Options{By: "algo", Metric: "accuracy", Direction: HigherIsBetter}},
		{"paired-loss-less", Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter, Alternative: stats.Less}},
		{"failed-worst", Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter}},
	} {
		file := "three-algos.csv"
		if strings.HasPrefix(c.name, "failed") {
			file = "failed.csv"
		}
		cmp, err := Compare(readTable(t, file), c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var text, md, csv bytes.Buffer
		if err := cmp.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := cmp.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := cmp.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		golden(t, c.name+".txt", text.Bytes())
		golden(t, c.name+".md", md.Bytes())
		golden(t, c.name+".csv", csv.Bytes())
	}
}

// The JSON document is a contract: exactly these keys, in this order, full-precision numbers.
func TestCompareJSONContract(t *testing.T) {
	cmp, err := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss", PairBy: "seed", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cmp)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m any) []string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		return sorted(ks)
	}
	check := func(what string, got, want []string) {
		if !reflect.DeepEqual(got, sorted(want)) {
			t.Errorf("%s keys = %v; want %v", what, got, sorted(want))
		}
	}
	check("top", keys(doc), []string{"metric", "by", "pair_by", "blocks", "direction", "alternative", "failed", "alpha",
		"groups", "omnibus", "pairwise", "critical_difference", "nemenyi_applies", "ranked_worst", "left_out", "left_out_blocks", "notes"})
	group := doc["groups"].([]any)[0].(map[string]any)
	check("group", keys(group), []string{"name", "n", "failed", "median", "median_ci", "mean", "iqr", "mean_rank"})
	check("median_ci", keys(group["median_ci"]), []string{"level", "lo", "hi"})
	check("omnibus", keys(doc["omnibus"]), []string{"test", "statistic", "df", "p_value", "significant"})
	pair := doc["pairwise"].([]any)[0]
	check("pair", keys(pair), []string{"a", "b", "test", "statistic", "p_value", "p_adjusted", "significant", "effect_size",
		"better", "mean_rank_difference", "nemenyi_differs"})
	check("effect", keys(pair.(map[string]any)["effect_size"]), []string{"name", "value", "magnitude"})
	// sgd: mean rank 2.9 and the order-statistic CI [0.2512, 0.3176] that the text output prints.
	if group["mean_rank"] != 2.9 || group["median_ci"].(map[string]any)["lo"] != 0.2512 || group["median_ci"].(map[string]any)["hi"] != 0.3176 {
		t.Errorf("group sgd = %v; want mean rank 2.9 and median CI [0.2512, 0.3176]", group)
	}
	if pair.(map[string]any)["better"] != "adam" || doc["direction"] != "lower-is-better" || doc["alternative"] != "two-sided" {
		t.Errorf("pair = %v, direction %v, alternative %v", pair, doc["direction"], doc["alternative"])
	}
	if doc["omnibus"].(map[string]any)["test"] != "friedman" || pair.(map[string]any)["test"] != "wilcoxon-signed-rank" {
		t.Errorf("paired design should use friedman and wilcoxon-signed-rank: %s", b)
	}
	// R: friedman.test p = 0.001836305 (printed to 7 digits); the JSON must not round it.
	p := doc["omnibus"].(map[string]any)["p_value"].(float64)
	if math.Abs(p-0.001836305) > 1e-9 || p == 0.001836305 {
		t.Errorf("friedman p in JSON = %v; want R's 0.001836305 at full precision", p)
	}

	two, err := Compare(table(t, "g,v\na,1\na,2\nb,3\nb,4\n"), Options{By: "g", Metric: "v"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(two)
	if !strings.Contains(string(b), `"omnibus":null`) || !strings.Contains(string(b), `"critical_difference":null`) ||
		!strings.Contains(string(b), `"pair_by":null`) || !strings.Contains(string(b), `"direction":"unknown"`) {
		t.Errorf("two groups, unpaired, no direction: omnibus, critical_difference and pair_by should be null: %s", b)
	}
	// A group whose every trial failed has no median: null, not a number JSON cannot hold.
	allFailed, err := Compare(table(t, "trial,status,g,v\nt1,failed,a,\nt2,failed,a,\nt3,succeeded,b,1\n"), Options{By: "g", Metric: "v", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	b, err = json.Marshal(allFailed)
	if err != nil || !strings.Contains(string(b), `{"name":"a","n":2,"failed":2,"median":null,"median_ci":null,"mean":null,"iqr":null,"mean_rank":2.5}`) {
		t.Errorf("all-failed group in JSON: %s, %v", b, err)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Pairs follow first appearance and the first group is the test's first sample.
func TestComparePairOrientation(t *testing.T) {
	cmp, err := Compare(table(t, "algo,loss\nslow,9\nfast,1\nslow,8\nfast,2\nslow,7\nfast,3\n"),
		Options{By: "algo", Metric: "loss", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	p := cmp.Pairwise[0]
	if p.A != "slow" || p.B != "fast" || p.Statistic != 9 || p.EffectSize.Value != 1 {
		t.Fatalf("pair = %+v; want slow vs fast with W = 9, A12 = 1", p)
	}
	want, _ := stats.MannWhitney([]float64{9, 8, 7}, []float64{1, 2, 3}, stats.TwoSided)
	if p.PValue != want.PValue {
		t.Errorf("p = %v; want %v", p.PValue, want.PValue)
	}
	// p = 0.1 with n = 3: not significant, and the verdict says so.
	if v := cmp.Verdict(p); !strings.HasPrefix(v, "no significant difference between slow and fast") {
		t.Errorf("verdict = %q", v)
	}
	big := "algo,loss\n"
	for i := 0; i < 10; i++ {
		big += "slow," + strconv.Itoa(20+i) + "\nfast," + strconv.Itoa(i) + "\n"
	}
	cmp, _ = Compare(table(t, big), Options{By: "algo", Metric: "loss", Direction: LowerIsBetter})
	if v := cmp.Verdict(cmp.Pairwise[0]); !strings.HasPrefix(v, "fast is better than slow on loss") {
		t.Errorf("verdict = %q", v)
	}
	cmp, _ = Compare(table(t, big), Options{By: "algo", Metric: "loss", Direction: HigherIsBetter})
	if v := cmp.Verdict(cmp.Pairwise[0]); !strings.HasPrefix(v, "slow is better than fast on loss") {
		t.Errorf("higher-is-better verdict = %q", v)
	}
	cmp, _ = Compare(table(t, big), Options{By: "algo", Metric: "loss"})
	if v := cmp.Verdict(cmp.Pairwise[0]); !strings.HasPrefix(v, "slow tends to be larger than fast on loss (p = ") {
		t.Errorf("verdict without a direction = %q", v)
	}
}

func TestCompareErrors(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		opts      Options
		want      string
	}{
		{"missing by", "g,v\na,1\n", Options{By: "algo", Metric: "v"}, `no column "algo" (--by); the table has columns g, v`},
		{"missing metric", "g,v\na,1\n", Options{By: "g", Metric: "loss"}, `no column "loss" (--metric)`},
		{"missing pair", "g,v\na,1\n", Options{By: "g", Metric: "v", PairBy: "seed"}, `no column "seed" (--pair-by)`},
		{"non-numeric", "trial,g,v\nt1,a,1\nt2,b,fast\n", Options{By: "g", Metric: "v"}, `row 2 (trial t2): column "v" holds "fast", which is not a number`},
		{"one group", "g,v\na,1\na,2\n", Options{By: "g", Metric: "v"}, `column "g" has 1 distinct value(s); comparing needs at least 2 groups`},
		{"no observation", "trial,status,g,v\nt1,succeeded,a,1\nt2,running,b,\n", Options{By: "g", Metric: "v"}, `group g=b has no usable observation of v (row 2: trial running, not a result)`},
		{"incomplete", "g,s,v\na,1,1\nb,1,2\na,2,3\n", Options{By: "g", Metric: "v", PairBy: "s", Incomplete: IncompleteError}, `block s=2 is incomplete: no row for g=b`},
		{"repeated", "g,s,v\na,1,1\nb,1,2\na,1,3\n", Options{By: "g", Metric: "v", PairBy: "s"}, `s=1 has 2 rows for g=a`},
		{"one block of three", "g,s,v\na,1,1\nb,1,2\nc,1,3\n", Options{By: "g", Metric: "v", PairBy: "s"}, `1 complete block(s) of s; a paired comparison of 3 groups needs at least 2`},
		{"no complete block", "g,s,v\na,1,1\nb,2,2\n", Options{By: "g", Metric: "v", PairBy: "s"}, `0 complete block(s) of s`},
		{"worst without direction", "g,v\na,1\nb,2\n", Options{By: "g", Metric: "v", Failed: FailedWorst}, `say --lower-is-better or --higher-is-better, or --failed drop`},
		{"bad policy", "g,v\na,1\nb,2\n", Options{By: "g", Metric: "v", Failed: "ignore"}, `failed-trial policy "ignore": use worst or drop`},
		{"alpha", "g,v\na,1\n", Options{By: "g", Metric: "v", Alpha: 2}, `alpha 2 is outside (0, 1)`},
	} {
		_, err := Compare(table(t, c.csv), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want it to contain %q", c.name, err, c.want)
		}
	}
}

// Without a direction, failures cannot rank worst: they are left out and listed, whatever made
// them (a NaN, an infinite value, a failed trial).
func TestCompareReportsNaNRows(t *testing.T) {
	cmp, err := Compare(table(t, "trial,g,v\nt1,a,1\nt2,a,NaN\nt3,a,2\nt4,b,3\nt5,b,\nt6,b,4\nt7,b,+Inf\n"), Options{By: "g", Metric: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Dropped) != 3 || cmp.Dropped[2].Reason != "v is +Inf" || cmp.Groups[0].N != 2 || cmp.Groups[1].N != 2 {
		t.Fatalf("dropped = %v, groups = %+v; want 3 rows left out and 2 observations per group", cmp.Dropped, cmp.Groups)
	}
	var buf bytes.Buffer
	_ = cmp.WriteText(&buf)
	for _, want := range []string{"3 row(s) left out", "row 2 (trial t2): v is NaN", "row 5 (trial t5): v is empty"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, buf.String())
		}
	}
}

// A failed trial or a non-finite value ranks worst once the direction is known, and keeps its
// block in a paired design (it used to take the whole block out, the other rows unlisted).
func TestCompareRanksFailuresWorst(t *testing.T) {
	csv := "trial,status,g,s,v\nt1,succeeded,a,1,1\nt2,succeeded,b,1,2\nt3,succeeded,a,2,NaN\nt4,succeeded,b,2,5\n" +
		"t5,failed,a,3,0.1\nt6,succeeded,b,3,4\nt7,succeeded,a,4,0\nt8,succeeded,b,4,9\n"
	c, err := Compare(table(t, csv), Options{By: "g", Metric: "v", PairBy: "s", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	if c.Blocks != 4 || c.Groups[0].N != 4 || c.Groups[0].Failed != 2 || len(c.Dropped) != 0 || len(c.Worst) != 2 {
		t.Fatalf("blocks %d, group a %+v, dropped %v, worst %v; want all 4 blocks with a's NaN and failure ranked worst",
			c.Blocks, c.Groups[0], c.Dropped, c.Worst)
	}
	// The failure's last logged value (0.1, the best of all) must not count.
	if !math.IsInf(c.Groups[0].Values[2], 1) || c.Groups[0].Median != 0.5 {
		t.Errorf("group a values %v, median %v; want +Inf for the failure and the median of 1 and 0", c.Groups[0].Values, c.Groups[0].Median)
	}
	var buf bytes.Buffer
	_ = c.WriteText(&buf)
	for _, want := range []string{"2 failure(s) ranked worst", "2 row(s) ranked worst", "row 3 (trial t3): v is NaN", "row 5 (trial t5): trial failed", "rank  group  n  failed"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, buf.String())
		}
	}
	// Higher is better: failures are -Inf, still the worst.
	c, _ = Compare(table(t, csv), Options{By: "g", Metric: "v", PairBy: "s", Direction: HigherIsBetter})
	if !math.IsInf(c.Groups[0].Values[1], -1) {
		t.Errorf("higher is better: failure = %v; want -Inf", c.Groups[0].Values[1])
	}
	// --failed drop: the rows go, and with them their blocks, every row of which is listed.
	c, err = Compare(table(t, csv), Options{By: "g", Metric: "v", PairBy: "s", Direction: LowerIsBetter, Failed: FailedDrop})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, d := range c.Dropped {
		rows = append(rows, d.String())
	}
	want := []string{
		"row 3 (trial t3): v is NaN",
		"row 4 (trial t4): block s=2 left out, incomplete: g=a left out (v is NaN)",
		"row 5 (trial t5): trial failed",
		"row 6 (trial t6): block s=3 left out, incomplete: g=a left out (trial failed)",
	}
	if c.Blocks != 2 || !reflect.DeepEqual(rows, want) || len(c.DroppedBlocks) != 2 {
		t.Errorf("blocks %d, dropped blocks %v, rows left out:\n%s\nwant:\n%s", c.Blocks, c.DroppedBlocks, strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// Trials that did not finish are not results: never ranked, always listed.
func TestCompareLeavesOutUnfinishedTrials(t *testing.T) {
	c, err := Compare(table(t, "trial,status,g,v\nt1,succeeded,a,1\nt2,killed,a,100\nt3,succeeded,a,2\nt4,succeeded,b,3\nt5,skipped,b,\nt6,succeeded,b,4\n"),
		Options{By: "g", Metric: "v", Direction: LowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Dropped) != 2 || c.Dropped[0].String() != "row 2 (trial t2): trial killed, not a result" || c.Groups[0].N != 2 || c.failures() != 0 {
		t.Errorf("dropped = %v, groups = %+v", c.Dropped, c.Groups)
	}
}

// A pruned trial is neither a failure ranked worst nor a result: left out and listed, whatever
// the failure policy, though its metric has a value.
func TestCompareLeavesOutPrunedTrials(t *testing.T) {
	for _, failed := range []string{FailedWorst, FailedDrop} {
		c, err := Compare(table(t, "trial,status,g,v\nt1,succeeded,a,1\nt2,pruned,a,0.5\nt3,succeeded,a,2\nt4,succeeded,b,3\nt5,pruned,b,9\nt6,succeeded,b,4\n"),
			Options{By: "g", Metric: "v", Direction: LowerIsBetter, Failed: failed})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Dropped) != 2 || c.Dropped[0].String() != "row 2 (trial t2): trial pruned early by its search, not a result" || len(c.Worst) != 0 ||
			c.Groups[0].N != 2 || c.Groups[1].N != 2 || c.failures() != 0 {
			t.Errorf("--failed %s: dropped = %v, worst = %v, groups = %+v", failed, c.Dropped, c.Worst, c.Groups)
		}
	}
}

// An eliminated trial (a race dropped it before it ran) is left out and listed, not ranked worst.
func TestCompareLeavesOutEliminatedTrials(t *testing.T) {
	for _, failed := range []string{FailedWorst, FailedDrop} {
		c, err := Compare(table(t, "trial,status,g,v\nt1,succeeded,a,1\nt2,succeeded,a,2\nt3,succeeded,b,3\nt4,eliminated,b,\nt5,succeeded,b,4\n"),
			Options{By: "g", Metric: "v", Direction: LowerIsBetter, Failed: failed})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Dropped) != 1 || c.Dropped[0].String() != "row 4 (trial t4): trial eliminated by its race before it ran, not a result" || len(c.Worst) != 0 ||
			c.Groups[0].N != 2 || c.Groups[1].N != 2 || c.failures() != 0 {
			t.Errorf("--failed %s: dropped = %v, worst = %v, groups = %+v", failed, c.Dropped, c.Worst, c.Groups)
		}
	}
}

// R computes with a group of one observation; so does compare.
func TestCompareSingleObservation(t *testing.T) {
	c, err := Compare(table(t, "g,v\na,1\nb,3\nb,4\n"), Options{By: "g", Metric: "v"})
	if err != nil {
		t.Fatal(err)
	}
	// R: wilcox.test(1, c(3, 4)): W = 0, p-value = 0.6667.
	if p := c.Pairwise[0]; p.Statistic != 0 || math.Abs(p.PValue-2.0/3) > 1e-15 || c.Groups[0].N != 1 {
		t.Errorf("pair = %+v", p)
	}
}

func TestComparePairByColumns(t *testing.T) {
	csv := "algo,fn,seed,v\n"
	for _, fn := range []string{"f", "g"} {
		for seed := 1; seed <= 3; seed++ {
			for i, algo := range []string{"a", "b", "c"} {
				csv += algo + "," + fn + "," + strconv.Itoa(seed) + "," + strconv.Itoa(seed*10+i) + "\n"
			}
		}
	}
	c, err := Compare(table(t, csv), Options{By: "algo", Metric: "v", PairBy: "fn,seed"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Blocks != 6 || c.Omnibus.Test != TestFriedman {
		t.Errorf("blocks = %d, omnibus = %+v; want 6 blocks of (fn, seed) and Friedman", c.Blocks, c.Omnibus)
	}
	if _, err := Compare(table(t, csv), Options{By: "algo", Metric: "v", PairBy: "seed"}); err == nil ||
		!strings.Contains(err.Error(), "seed=1 has 2 rows for algo=a") {
		t.Errorf("pairing by seed alone must be refused as unbalanced, got %v", err)
	}
}

// Steps of an experiment that are not part of the comparison (a build) have no group value.
func TestCompareLeavesOutRowsWithoutGroup(t *testing.T) {
	cmp, err := Compare(table(t, "trial,status,g,v\nbuild,succeeded,,\nt1,succeeded,a,1\nt2,succeeded,a,2\nt3,succeeded,b,3\nt4,succeeded,b,4\n"), Options{By: "g", Metric: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Groups) != 2 || len(cmp.Dropped) != 1 || cmp.Dropped[0].String() != "row 1 (trial build): no value for g" {
		t.Errorf("groups = %d, dropped = %v", len(cmp.Groups), cmp.Dropped)
	}
}

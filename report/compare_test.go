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
	tb := readTable(t, "three-algos.csv")
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"paired-loss", Options{By: "algo", Metric: "loss", PairBy: "seed", LowerIsBetter: true}},
		{"unpaired-accuracy", Options{By: "algo", Metric: "accuracy"}},
	} {
		cmp, err := Compare(tb, c.opts)
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
	cmp, err := Compare(readTable(t, "three-algos.csv"), Options{By: "algo", Metric: "loss", PairBy: "seed", LowerIsBetter: true})
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
	check("top", keys(doc), []string{"metric", "groups", "omnibus", "pairwise", "critical_difference"})
	check("group", keys(doc["groups"].([]any)[0]), []string{"name", "n", "median", "mean", "iqr"})
	check("omnibus", keys(doc["omnibus"]), []string{"test", "statistic", "df", "p_value"})
	pair := doc["pairwise"].([]any)[0]
	check("pair", keys(pair), []string{"a", "b", "test", "statistic", "p_value", "p_adjusted", "effect_size"})
	check("effect", keys(pair.(map[string]any)["effect_size"]), []string{"name", "value"})
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
	if !strings.Contains(string(b), `"omnibus":null`) || !strings.Contains(string(b), `"critical_difference":null`) {
		t.Errorf("two groups: omnibus and critical_difference should be null: %s", b)
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
		Options{By: "algo", Metric: "loss", LowerIsBetter: true})
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
	cmp, _ = Compare(table(t, big), Options{By: "algo", Metric: "loss", LowerIsBetter: true})
	if v := cmp.Verdict(cmp.Pairwise[0]); !strings.HasPrefix(v, "fast is better than slow on loss") {
		t.Errorf("verdict = %q", v)
	}
	cmp, _ = Compare(table(t, big), Options{By: "algo", Metric: "loss"})
	if v := cmp.Verdict(cmp.Pairwise[0]); !strings.HasPrefix(v, "slow is better than fast on loss") {
		t.Errorf("higher-is-better verdict = %q", v)
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
		{"one observation", "g,v\na,1\na,2\nb,3\n", Options{By: "g", Metric: "v"}, `group g=b has 1 usable observation(s) of v; each group needs at least 2`},
		{"unbalanced", "g,s,v\na,1,1\nb,1,2\na,2,3\n", Options{By: "g", Metric: "v", PairBy: "s"}, `unbalanced blocks: s=2 has no row for g=b`},
		{"repeated", "g,s,v\na,1,1\nb,1,2\na,1,3\n", Options{By: "g", Metric: "v", PairBy: "s"}, `s=1 has 2 rows for g=a`},
		{"one block", "g,s,v\na,1,1\nb,1,2\n", Options{By: "g", Metric: "v", PairBy: "s"}, `1 complete block(s) of s; a paired comparison needs at least 2`},
		{"alpha", "g,v\na,1\n", Options{By: "g", Metric: "v", Alpha: 2}, `alpha 2 is outside (0, 1)`},
	} {
		_, err := Compare(table(t, c.csv), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want it to contain %q", c.name, err, c.want)
		}
	}
}

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
	// In a paired design a NaN takes its whole block out.
	cmp, err = Compare(table(t, "g,s,v\na,1,1\nb,1,2\na,2,NaN\nb,2,5\na,3,3\nb,3,4\na,4,0\nb,4,9\n"), Options{By: "g", Metric: "v", PairBy: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Blocks != 3 || !strings.Contains(cmp.Dropped[0].Reason, "block s=2 dropped") {
		t.Errorf("blocks = %d, dropped = %v; want block 2 dropped", cmp.Blocks, cmp.Dropped)
	}
}

func TestCompareLeavesOutFailedTrials(t *testing.T) {
	cmp, err := Compare(table(t, "trial,status,g,v\nt1,succeeded,a,1\nt2,failed,a,100\nt3,succeeded,a,2\nt4,succeeded,b,3\nt5,succeeded,b,4\n"), Options{By: "g", Metric: "v"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Dropped) != 1 || cmp.Dropped[0].String() != "row 2 (trial t2): trial failed" || cmp.Groups[0].N != 2 {
		t.Errorf("dropped = %v, groups = %+v; want the failed trial left out and listed", cmp.Dropped, cmp.Groups)
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

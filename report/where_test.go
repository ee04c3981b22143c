package report

import (
	"strings"
	"testing"
)

func TestWhere(t *testing.T) {
	tb := table(t, "fn,algo,v\nsphere,a,1\nackley,a,2\nsphere,b,3\n")
	got, err := Where(tb, []string{"fn=sphere"})
	if err != nil || len(got.Rows) != 2 || got.Rows[1][1] != "b" {
		t.Fatalf("Where fn=sphere = %v, %v", got, err)
	}
	got, err = Where(tb, []string{"fn=sphere", "algo=b"})
	if err != nil || len(got.Rows) != 1 {
		t.Fatalf("Where fn=sphere algo=b = %v, %v", got, err)
	}
	if got, err := Where(tb, nil); err != nil || len(got.Rows) != 3 {
		t.Errorf("no conditions must keep every row: %v, %v", got, err)
	}
	for cond, want := range map[string]string{
		"fn":       `write COLUMN=VALUE`,
		"dim=3":    `no column "dim" (--where)`,
		"fn=rosen": `no row has fn=rosen`,
		"=sphere":  `write COLUMN=VALUE`,
		"v<a":      `< compares numbers; "a" is not one`,
		"v!3":      `write != for 'is not'`,
		"v>9":      `no row has v>9`,
	} {
		if _, err := Where(tb, []string{cond}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Where %q: err = %v; want %q", cond, err, want)
		}
	}
}

func TestWhereComparesNumbers(t *testing.T) {
	tb := table(t, "fn,lr,loss\nsphere,0.1,1\nackley,0.01,NaN\nsphere,0.001,\nrosen,1e-4,0.25\n")
	for cond, want := range map[string]string{
		"lr<0.01":     "0.001 1e-4",
		"lr <= 0.01":  "0.01 0.001 1e-4",
		"lr>0.01":     "0.1",
		"lr>=1e-3":    "0.1 0.01 0.001",
		"lr=0.10":     "0.1",
		"lr==0.1":     "0.1",
		"fn!=sphere":  "0.01 1e-4",
		"loss<2":      "0.1 1e-4", // NaN and empty cells meet no comparison
		"loss!=1":     "0.01 0.001 1e-4",
		"fn=sphere":   "0.1 0.001",
		"loss>-1e999": "0.1 1e-4",
	} {
		got, err := Where(tb, []string{cond})
		if err != nil {
			t.Errorf("%s: %v", cond, err)
			continue
		}
		var lrs []string
		for _, r := range got.Rows {
			lrs = append(lrs, r[1])
		}
		if s := strings.Join(lrs, " "); s != want {
			t.Errorf("%s keeps lr %s; want %s", cond, s, want)
		}
	}
}

func FuzzParseCond(f *testing.F) {
	for _, s := range []string{"fn=sphere", "lr<0.01", "loss >= 0.5", "a==b", "x!=", "=1", "<", "a<=>b"} {
		f.Add(s, "0.5")
	}
	f.Fuzz(func(t *testing.T, s, cell string) {
		c, err := ParseCond(s)
		if err != nil {
			return
		}
		if c.Column == "" || !strings.Contains("= != < <= > >=", c.Op) {
			t.Fatalf("ParseCond(%q) = %+v", s, c)
		}
		if c.Op == "!=" && c.Holds(cell) == (Cond{Column: c.Column, Op: "=", Value: c.Value, num: c.num}).Holds(cell) {
			t.Fatalf("%q: != is not the negation of = for %q", s, cell)
		}
	})
}

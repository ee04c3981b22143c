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
	} {
		if _, err := Where(tb, []string{cond}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Where %q: err = %v; want %q", cond, err, want)
		}
	}
}

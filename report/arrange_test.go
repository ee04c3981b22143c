package report

import (
	"strings"
	"testing"
)

func TestArrangeOrdersAndRenamesGroups(t *testing.T) {
	tb := table(t, "trial,algo,loss\nt1,sgd,1\nt2,adam,2\nt3,rms,3\nt4,sgd,4\n")
	got, err := Arrange(tb, "algo", []string{"rms", "adam"}, map[string]string{"sgd": "SGD", "rms": "sgd"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range got.Rows {
		order = append(order, r[0]+"="+r[1])
	}
	if s := strings.Join(order, " "); s != "t3=sgd t2=adam t1=SGD t4=SGD" {
		t.Errorf("rows = %s", s)
	}
	if tb.Rows[0][1] != "sgd" {
		t.Errorf("the input table changed")
	}
	c, err := Compare(got, Options{By: "algo", Metric: "loss"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Groups[0].Name != "sgd" || c.Groups[2].Name != "SGD" {
		t.Errorf("compare's groups = %+v", c.Groups)
	}
	for _, bad := range []struct {
		order  []string
		rename map[string]string
		want   string
	}{
		{[]string{"lbfgs"}, nil, `--order names algo="lbfgs", which is not a group`},
		{nil, map[string]string{"x": "y"}, `--rename names algo="x"`},
		{nil, map[string]string{"sgd": "adam"}, "adam is another group already"},
	} {
		if _, err := Arrange(tb, "algo", bad.order, bad.rename); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v %v: err = %v; want %q", bad.order, bad.rename, err, bad.want)
		}
	}
}

package parquetout

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/jikken-dev/jikken/results"
	"github.com/jikken-dev/jikken/store"
)

// The Parquet file holds one row per trial in the table's column order, each param with the type
// its values share (lr: a whole number among fractions is a double), metrics as doubles, and null where a trial has no value.
func TestWriteReadsBack(t *testing.T) {
	rows := fixture()
	rows[0].Group = "a"
	rows[0].Params["mixed"] = "x"
	rows[1].Params = map[string]any{"mixed": 2.5, "run": "r-param", "lr": float64(1)}
	rows[1].Metrics = map[string]float64{"loss": math.NaN()}
	var buf bytes.Buffer
	if err := Write(&buf, "r1", rows); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names, types []string
	for _, c := range f.Schema().Fields() {
		names = append(names, c.Name())
		opt := ""
		if c.Optional() {
			opt = "?"
		}
		types = append(types, c.Type().String()+opt)
	}
	if got, want := strings.Join(names, ","), "run,trial,group,status,algo,bn,code,layers,lr,mixed,param.run,seed,loss,metric.trial,wall"; got != want {
		t.Errorf("columns = %s\nwant      %s", got, want)
	}
	if got, want := strings.Join(types, ","), "STRING,STRING,STRING?,STRING,STRING?,BOOLEAN?,STRING?,INT(64,true)?,DOUBLE?,STRING?,STRING?,INT(64,true)?,DOUBLE?,DOUBLE?,DOUBLE?"; got != want {
		t.Errorf("types = %s\nwant    %s", got, want)
	}
	got := make([]parquet.Row, 2)
	r := parquet.NewReader(bytes.NewReader(buf.Bytes()))
	if n, err := r.ReadRows(got); n != 2 {
		t.Fatalf("read %d rows (%v), want 2", n, err)
	}
	cells := func(row parquet.Row) string {
		s := make([]string, len(row))
		for i, v := range row {
			if v.IsNull() {
				s[i] = "null"
			} else {
				s[i] = v.String()
			}
		}
		return strings.Join(s, ",")
	}
	if got, want := cells(got[0]), "r1,t1,a,succeeded,sgd,true,007,3,0.1,x,null,7,0.25,1,+Inf"; got != want {
		t.Errorf("row 1 = %s\nwant    %s", got, want)
	}
	if got, want := cells(got[1]), "r1,build,null,failed,null,null,null,null,1,2.5,r-param,null,NaN,null,null"; got != want {
		t.Errorf("row 2 = %s\nwant    %s", got, want)
	}
}

// A metric that would take a fixed column's name is renamed, so no two columns share a name.
func TestWriteRenamesClashes(t *testing.T) {
	rows := []results.Row{{Trial: "t", Status: store.Succeeded, Metrics: map[string]float64{"group": 1, "run": 2}}}
	cols, err := parquetColumns(rows)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.name)
	}
	if got, want := strings.Join(names, ","), "run,trial,group,status,metric.group,metric.run"; got != want {
		t.Errorf("columns = %s, want %s", got, want)
	}
}

func fixture() []results.Row {
	seed := int64(7)
	return []results.Row{
		{Trial: "t1", Status: store.Succeeded, Params: map[string]any{"algo": "sgd", "lr": 0.1, "layers": float64(3), "bn": true, "code": "007"},
			Seed: &seed, Metrics: map[string]float64{"loss": 0.25, "trial": 1, "wall": math.Inf(1)}},
		{Trial: "build", Status: store.Failed},
	}
}

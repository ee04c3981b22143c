package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/track"
)

func rowsFixture() []Row {
	seed := int64(7)
	return []Row{
		{Trial: "t1", Status: store.Succeeded, Params: map[string]any{"algo": "sgd", "lr": 0.1, "layers": float64(3), "bn": true, "code": "007"},
			Seed: &seed, Metrics: map[string]float64{"loss": 0.25, "trial": 1, "wall": math.Inf(1)}},
		{Trial: "build", Status: store.Failed},
	}
}

// JSON records keep the types the experiment gave: numbers are numbers, a string that looks
// like a number stays a string, non-finite values are the strings of metrics.jsonl.
func TestRecordsAreTyped(t *testing.T) {
	b, err := json.Marshal(Records(rowsFixture()))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"algo":"sgd","bn":true,"code":"007","layers":3,"loss":0.25,"lr":0.1,"metric.trial":1,"seed":7,"status":"succeeded","trial":"t1","wall":"Infinity"},{"status":"failed","trial":"build"}]`
	if string(b) != want {
		t.Errorf("records = %s\nwant      %s", b, want)
	}
	tb := ToTable(rowsFixture())
	if got := strings.Join(tb.Columns, ","); got != "trial,status,algo,bn,code,layers,lr,seed,loss,metric.trial,wall" {
		t.Errorf("columns = %s", got)
	}
	if got := strings.Join(tb.Rows[0], ","); got != "t1,succeeded,sgd,true,007,3,0.1,7,0.25,1,+Inf" {
		t.Errorf("row = %s", got)
	}
}

// Lines without a step count 0, 1, 2 per metric; time is seconds since the trial's first
// timestamped line of any metric.
func TestPoints(t *testing.T) {
	step := int64(10)
	ms := []track.Metric{
		{Name: "acc", Value: 0.1, TS: 1_000_500},
		{Name: "loss", Value: 3, TS: 1_000_000},
		{Name: "loss", Value: 2},
		{Name: "loss", Value: 1, Step: &step, TS: 1_002_250},
		{Name: "acc", Value: 0.2},
	}
	got := points(ms)
	nan := math.NaN()
	want := []Point{{"acc", 0, 0.1, 0.5}, {"loss", 0, 3, 0}, {"loss", 1, 2, nan}, {"loss", 10, 1, 2.25}, {"acc", 1, 0.2, nan}}
	for i := range want {
		g, w := got[i], want[i]
		if g.Metric != w.Metric || g.Step != w.Step || g.Value != w.Value || !(g.Time == w.Time || math.IsNaN(g.Time) && math.IsNaN(w.Time)) {
			t.Errorf("point %d = %+v; want %+v", i, g, w)
		}
	}
	cs := []Curve{{Row: rowsFixture()[0], Points: got}}
	tb := CurvesTable(cs, []string{"loss"})
	if len(tb.Rows) != 3 || strings.Join(tb.Rows[1][len(tb.Rows[1])-4:], ",") != "loss,1,2," {
		t.Errorf("curves table = %v", tb.Rows)
	}
	recs := CurveRecords(cs, nil)
	if len(recs) != 5 || recs[2]["time"] != nil || recs[3]["time"] != 2.25 || !reflect.DeepEqual(recs[3]["value"], record.EncodeFloat(1)) {
		t.Errorf("curve records = %v", recs)
	}
}

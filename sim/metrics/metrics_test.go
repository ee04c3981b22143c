package metrics

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/jikken-dev/jikken/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSummarise(t *testing.T) {
	d := summarise([]float64{4, 1, 3, 2})
	if d.Mean != 2.5 || d.P50 != 2.5 || d.Max != 4 || d.P95 != 3.85 {
		t.Errorf("summarise = %+v", d)
	}
	if (summarise(nil) != Dist{}) {
		t.Error("empty sample")
	}
}

func samples() []sim.Sample {
	var out []sim.Sample
	for i := range 10 {
		s := sim.Sample{Time: sim.Time(i) * 60 * sim.Second, Pending: i, Running: 10 - i, NodesUp: 2}
		s.Allocated[sim.GPUIndex] = int64(i) * sim.Milli
		s.Capacity[sim.GPUIndex] = 16 * sim.Milli
		s.FreeGPU = int64(16-i) * sim.Milli
		out = append(out, s)
	}
	return out
}

func TestDownsample(t *testing.T) {
	rows := Downsample(samples(), 4)
	if len(rows) != 4 {
		t.Fatalf("%d rows", len(rows))
	}
	// Groups of three: samples 0-2 average 1 GPU allocated, stamped with sample 2's time.
	if rows[0].Alloc[sim.GPUIndex] != 1 || rows[0].Time != 120 || rows[3].Alloc[sim.GPUIndex] != 9 {
		t.Errorf("rows %+v", rows)
	}
	if len(Downsample(samples(), 0)) != 10 {
		t.Error("maxRows 0 must keep every sample")
	}
}

func TestTimelineGolden(t *testing.T) {
	var buf bytes.Buffer
	names := sim.NewNames()
	if err := WriteTimelineCSV(&buf, Downsample(samples(), 5), names); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("--- jsonl\n")
	if err := WriteTimelineJSONL(&buf, Downsample(samples(), 2), names); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "timeline.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("timeline differs from %s (run with -update to accept):\n%s", golden, buf.String())
	}
}

func TestCompareTable(t *testing.T) {
	var buf bytes.Buffer
	tb := Compare([]string{"a", "b"}, []Summary{{Jobs: 3, Makespan: 200}, {Jobs: 3, Makespan: 150.5}})
	if err := WriteTable(&buf, tb); err != nil {
		t.Fatal(err)
	}
	want := "metric                 a       b\njobs                   3       3\n"
	if got := buf.String(); got[:len(want)] != want {
		t.Errorf("table starts\n%q\nwant\n%q", got[:len(want)], want)
	}
}

// Each user's share of the GPUs, averaged like the timeline; users appearing later are
// missing from earlier samples and count as zero there.
func TestUserShares(t *testing.T) {
	var s []sim.Sample
	for i, users := range [][]int64{{4}, {4, 8}, {0, 8}, {2, 2}} {
		x := sim.Sample{Time: sim.Time(i) * 60 * sim.Second, UserGPU: users}
		for j := range users {
			users[j] *= sim.Milli
		}
		x.Capacity[sim.GPUIndex] = 16 * sim.Milli
		s = append(s, x)
	}
	var buf bytes.Buffer
	if err := WriteUserShares(&buf, s, []string{"zed", "amy"}, 2); err != nil {
		t.Fatal(err)
	}
	want := "time_s,gpu_amy,gpu_zed\n60.000,0.2500,0.2500\n180.000,0.3125,0.0625\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

package submitter

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/sim"
)

func TestCSVRoundTrip(t *testing.T) {
	in := "name,user,submit_s,duration_s,cpu,memory,gpu,priority,gang\n" +
		"a,alice,0,100,4,16Gi,2,0,\nb,bob,5.5,10,500m,1Gi,0.5,3,g\nc,bob,5.5,10,1,1Gi,1,3,g\n"
	jobs, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if jobs[1].GPU != 500 || jobs[1].CPU != 500 || jobs[1].GangSize != 2 || jobs[1].Priority != 3 {
		t.Fatalf("job b %+v", jobs[1])
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	again, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		if jobs[i] != again[i] {
			t.Errorf("row %d: %+v became %+v", i, jobs[i], again[i])
		}
	}
	var jl bytes.Buffer
	WriteJSONL(&jl, jobs)
	fromJSON, err := ReadJSONL(&jl)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		if jobs[i] != fromJSON[i] {
			t.Errorf("jsonl row %d: %+v became %+v", i, jobs[i], fromJSON[i])
		}
	}
}

func TestCSVErrors(t *testing.T) {
	for _, in := range []string{
		"name,user\n",
		"name,user,submit_s,duration_s,cpu,memory,gpu\na,u,-1,10,1,1,1\n",
		"name,user,submit_s,duration_s,cpu,memory,gpu\na,u,0,10,1,1,lots\n",
	} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

// The presets must reproduce their published size mix and hit the requested offered load.
func TestPresets(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes map[int64]float64
	}{
		{"philly", map[int64]float64{1: .9317, 2: .0221, 4: .0227, 8: .0200}},
		{"gavel", map[int64]float64{1: .70, 2: .10, 4: .15, 8: .05}},
	} {
		p, err := Preset(c.name, PresetConfig{Jobs: 40000, ClusterGPUs: 800, Load: 0.8}, sim.NewRand(1, 100))
		if err != nil {
			t.Fatal(err)
		}
		jobs := p.Jobs()
		count := map[int64]float64{}
		var gpuSeconds, last float64
		jobsSeen := map[string]bool{}
		for _, j := range jobs {
			key := j.Name
			if j.Gang != "" {
				key = j.Gang
			}
			if !jobsSeen[key] && j.Gang == "" {
				count[j.GPU/sim.Milli]++
			}
			jobsSeen[key] = true
			gpuSeconds += float64(j.GPU) / sim.Milli * j.Duration
			last = max(last, j.Submit)
		}
		if len(jobsSeen) != 40000 {
			t.Errorf("%s: %d jobs, want 40000", c.name, len(jobsSeen))
		}
		for g, want := range c.sizes {
			got := count[g] / 40000
			if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/40000)+0.002 {
				t.Errorf("%s: share of %d-GPU jobs %.4f, want %.4f", c.name, g, got, want)
			}
		}
		// Heavy tails make the realised load noisy; it must still be near the target.
		if load := gpuSeconds / (800 * last); load < 0.5 || load > 1.3 {
			t.Errorf("%s: offered load %.2f, want about 0.8", c.name, load)
		}
	}
}

// Bad rows are refused with their line: short rows (which used to read as zero memory and
// GPUs), empty required cells, duplicate names, inconsistent gangs.
func TestTraceRowErrorsNameTheLine(t *testing.T) {
	head := "name,user,submit_s,duration_s,cpu,memory,gpu,gang,gang_min\n"
	for _, c := range []struct{ in, want string }{
		{head + "a,u,0,10,1,1Gi,1,,\nb,u,0,10,1\n", "line 3: 5 fields, but the header names 9 columns"},
		{head + "a,u,0,10,1,,1,,\n", "line 2: memory is missing; write 0 for none"},
		{head + "a,u,0,10,1,1Gi,1,,\nb,u,0,10,1,1Gi,1,,\na,u,0,10,1,1Gi,1,,\n", `line 4: pod name "a" is already used on line 2`},
		{head + "a,u,0,10,1,1Gi,1,g,2\nb,u,0,10,1,1Gi,1,g,1\n", `line 3: gang "g": gang_min and gang_timeout_s differ from line 2`},
		{head + "a,u,0,10,1,1Gi,1,g,3\nb,u,0,10,1,1Gi,1,g,3\n", `line 2: gang "g": gang_min 3 exceeds its 2 members`},
		{head + "a,u,0,10,1,1Gi,1,,2\n", "line 2: gang_min and gang_timeout_s need a gang name"},
		{"name,user,submit_s,duration_s,cpu,memory,gpu\n\"a,u,0\n", "line 2"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"name":"a","submit_s":0,"duration_s":1,"cpu":1,"memory":"1Gi","gpu":1}` + "\n" + `{"name":"b","submit_s":0,"cpu":1,"memory":1,"gpu":1}`, "line 2: duration_s is missing"},
		{`{"name":"a","submit_s":0,"duration_s":1,"cpu":1,"gpu":1}`, "line 1: memory is missing"},
		{`{"name":"a","submit_s":0,"duration_s":1,"cpu":1,"memory":1,"gpu":1,"gpus":2}`, `line 1: json: unknown field "gpus"`},
		{`{"name":"a","submit_s":0,"duration_s":1,"cpu":1,"memory":1,"gpu":1}` + "\n\n" + `{"name":"a","submit_s":0,"duration_s":1,"cpu":1,"memory":1,"gpu":1}`, `line 3: pod name "a" is already used on line 1`},
	} {
		_, err := ReadJSONL(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestGangColumnsRoundTrip(t *testing.T) {
	in := "name,user,submit_s,duration_s,cpu,memory,gpu,priority,gang,gang_min,gang_timeout_s\n" +
		"a,u,0.000,10.000,1,1Gi,4,0,g,1,30.000\nb,u,0.000,10.000,1,1Gi,4,0,g,1,30.000\n"
	jobs, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p := jobs[1].Pod(); p.GangMin != 1 || p.GangTimeout != 30*sim.Second || p.GangSize != 2 {
		t.Fatalf("pod %+v", p)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	if buf.String() != in {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), in)
	}
	var jl bytes.Buffer
	WriteJSONL(&jl, jobs)
	again, err := ReadJSONL(&jl)
	if err != nil || again[0] != jobs[0] {
		t.Fatalf("jsonl: %v %+v", err, again)
	}
}

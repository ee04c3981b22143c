package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadCombuArray(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "combu.jsonnet", `
local uuid = "UUID";
local modes = ["fast", "slow"];
[
  { name: "cache", image: "redis", cmd: "redis-server", ports: ["6379"], networks: ["net-" + uuid] },
] + [
  {
    name: "sim-%d-%s" % [i, m],
    image: "sim:" + uuid,
    cmd: "make simulation ID=%d MODE=%s" % [i, m],
    depends: ["cache"],
    volumes: ["/tmp/data:/data:ro"],
  }
  for i in std.range(1, 3) for m in modes
]`)
	exp, err := Load(p, Options{RunID: "run-123"})
	if err != nil {
		t.Fatal(err)
	}
	if exp.Form != "combu" || len(exp.Trials) != 7 {
		t.Fatalf("form %s, %d trials; want combu, 7", exp.Form, len(exp.Trials))
	}
	sim := exp.Trials[1]
	if sim.Name != "sim-1-fast" || sim.Cmd.Shell != "make simulation ID=1 MODE=fast" || sim.Image != "sim:run-123" {
		t.Fatalf("trial 1 = %+v", sim)
	}
	if len(sim.Depends) != 1 || sim.Depends[0] != (Dependency{Trial: "cache", Condition: Started}) {
		t.Fatalf("depends = %+v", sim.Depends)
	}
	if exp.Trials[0].Networks[0] != "net-run-123" {
		t.Fatalf("UUID literal not replaced: %v", exp.Trials[0].Networks)
	}
	if _, ok := exp.Sources["combu.jsonnet"]; !ok {
		t.Fatalf("sources = %v", exp.SourceNames())
	}
}

func TestLoadMatrixWithDefaultsImportAndVars(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "algos.libsonnet", `["ga", "pso"]`)
	p := writeFile(t, dir, "exp.jsonnet", `
local algos = import "algos.libsonnet";
function(budget="100") {
  name: "opt",
  defaults: { env: { BUDGET: budget, MODE: std.extVar("mode") }, timeout: "1m", retries: 1 },
  trials: [
    { name: "build", cmd: ["go", "build", "-o", "opt", "."] },
    { name: "summary", cmd: "echo done", after: ["run"] },
  ],
  matrix: {
    name: "run",
    params: { algo: algos, fn: ["sphere", "rastrigin"] },
    seeds: 3,
    exclude: [{ algo: "pso", fn: "rastrigin" }],
    cmd: "./opt --algo {{algo}} --fn {{fn}} --seed {{seed}}",
    env: { TAG: "{{trial}}" },
    after: ["build"],
  },
}`)
	exp, err := Load(p, Options{ExtStr: map[string]string{"mode": "quick"}, TLAStr: map[string]string{"budget": "7"}})
	if err != nil {
		t.Fatal(err)
	}
	// build, summary, then 3 combos x 3 seeds.
	if got := len(exp.Trials); got != 2+9 {
		t.Fatalf("%d trials, want 11", got)
	}
	r := exp.Trials[2]
	if r.Name != "run-ga-sphere-s0" || r.Cmd.Shell != "./opt --algo ga --fn sphere --seed 0" || *r.Seed != 0 {
		t.Fatalf("first matrix trial = %+v", r)
	}
	if r.Env["BUDGET"] != "7" || r.Env["MODE"] != "quick" || r.Env["TAG"] != r.Name || r.Retries != 1 {
		t.Fatalf("env/defaults not applied: %+v", r)
	}
	if r.Params["algo"] != "ga" || r.Group != "run" || len(r.After) != 1 || r.After[0] != "build" {
		t.Fatalf("params/group/after = %v %q %v", r.Params, r.Group, r.After)
	}
	for _, tr := range exp.Trials {
		if tr.Params["algo"] == "pso" && tr.Params["fn"] == "rastrigin" {
			t.Fatalf("excluded combination present: %s", tr.Name)
		}
	}
	// summary waits for the whole group.
	if got := len(exp.Trials[1].After); got != 9 {
		t.Fatalf("summary waits for %d trials, want 9", got)
	}
	if lv := Levels(exp.Trials); len(lv) != 3 || len(lv[1]) != 9 {
		t.Fatalf("levels = %v", lv)
	}
	if _, ok := exp.Sources["algos.libsonnet"]; !ok {
		t.Fatalf("import not recorded: %v", exp.SourceNames())
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the error
	}{
		{"syntax", `[{name: "a", cmd: "x"`, []string{"bad.jsonnet:1:", "Expected"}},
		{"runtime", `[{name: "a", cmd: error "boom"}]`, []string{"bad.jsonnet:1:", "boom"}},
		{"unknown field", `[{name: "a", cmd: "x", dpends: ["b"]}]`, []string{`trial "a": dpends: unknown field (did you mean "depends"?)`}},
		{"unknown top", `{trails: []}`, []string{`trails: unknown top-level field (did you mean "trials"?)`}},
		{"missing name", `[{cmd: "x"}]`, []string{"trial #0: name: missing"}},
		{"duplicate", `[{name: "a", cmd: "x"}, {name: "a", cmd: "y"}]`, []string{`duplicate name: trials #0 and #1 are both called "a"`}},
		{"missing dep", `[{name: "a", cmd: "x", depends: ["cach"]}, {name: "cache", cmd: "y"}]`, []string{`trial "a": depends: unknown trial "cach" (did you mean "cache"?)`}},
		{"missing after", `[{name: "a", cmd: "x", after: ["zzz"]}]`, []string{`trial "a": after: unknown trial "zzz"`}},
		{"cycle", `[{name: "a", cmd: "x", after: ["b"]}, {name: "b", cmd: "y", after: ["c"]}, {name: "c", cmd: "z", depends: ["a"]}]`, []string{"dependency cycle: a -> b -> c -> a"}},
		{"self cycle", `[{name: "a", cmd: "x", after: ["a"]}]`, []string{"dependency cycle: a -> a"}},
		{"bad name", `[{name: "sim 1/../x", cmd: "x"}]`, []string{`"sim 1/../x" is not a valid name`}},
		{"bad cmd", `[{name: "a", cmd: 3}]`, []string{`trial "a": cmd: must be a string`}},
		{"bad port", `[{name: "a", cmd: "x", ports: ["99999:80"]}]`, []string{"99999 is above 65535"}},
		{"bad volume", `[{name: "a", cmd: "x", volumes: ["/data"]}]`, []string{`volume "/data": use source:target`}},
		{"bad timeout", `[{name: "a", cmd: "x", timeout: "soon"}]`, []string{`timeout: duration "soon"`}},
		{"bad resource", `[{name: "a", cmd: "x", resources: {gpus: 1}}]`, []string{`unknown resource "gpus" (did you mean "gpu"?)`}},
		{"after service", `[{name: "s", cmd: "x", service: true}, {name: "a", cmd: "y", after: ["s"]}]`, []string{`"s" is a service`}},
		{"healthy without check", `[{name: "s", cmd: "x", service: true}, {name: "a", cmd: "y", depends: [{trial: "s", condition: "healthy"}]}]`, []string{"has no health check"}},
		{"bad toleration effect", `[{name: "a", cmd: "x", tolerations: [{key: "k", effect: "NoScheduled"}]}]`, []string{`trial "a": tolerations: [0].effect: "NoScheduled"; use NoSchedule`}},
		{"bad toleration field", `[{name: "a", cmd: "x", tolerations: [{kye: "k"}]}]`, []string{`tolerations: [0]: unknown field "kye" (did you mean "key"?)`}},
		{"toleration seconds", `[{name: "a", cmd: "x", tolerations: [{key: "k", effect: "NoSchedule", toleration_seconds: 5}]}]`, []string{"toleration_seconds applies to effect NoExecute only"}},
		{"toleration exists value", `[{name: "a", cmd: "x", tolerations: [{key: "k", operator: "Exists", value: "v"}]}]`, []string{"operator Exists takes no value"}},
		{"not a list", `"hello"`, []string{"evaluates to a string"}},
		{"empty", `[]`, []string{"no trials"}},
		{"matrix placeholder", `{matrix: {params: {a: [1]}, cmd: "run {{b}}"}}`, []string{"{{b}} is not a param of this matrix"}},
		{"matrix seeds", `{matrix: {seeds: 0, cmd: "x"}}`, []string{"matrix[0].seeds: a count must be"}},
		{"group clash", `{trials: [{name: "run", cmd: "x"}], matrix: {name: "run", params: {a: [1]}, cmd: "x"}}`, []string{`both called "run"`}},
		{"restart value", `[{name: "s", cmd: "x", service: true, restart: "sometimes"}]`, []string{`trial "s": restart: "sometimes" is not a restart policy`}},
		{"restart on a step", `[{name: "a", cmd: "x", restart: "always"}]`, []string{`trial "a": restart: only services restart`}},
		{"combu port object", `[{name: "a", cmd: "x", ports: [{host: 8080, contaner: 80}]}]`, []string{`ports: element 0: unknown field "contaner" (did you mean "container"?)`}},
		{"combu volume without host", `[{name: "a", cmd: "x", volumes: [{container: "/data"}]}]`, []string{`volumes: element 0: host is missing`}},
		{"requeues without preemptible", `[{name: "a", cmd: "x", requeues: 3}]`, []string{`trial "a": requeues: only a preemptible trial is requeued`}},
		{"bad requeues", `[{name: "a", cmd: "x", preemptible: true, requeues: -1}]`, []string{`requeues: must be a whole number >= 0`}},
		{"bad preemptible", `[{name: "a", cmd: "x", preemptible: "yes"}]`, []string{`preemptible: must be true or false`}},
		{"bad checkpoint signal", `[{name: "a", cmd: "x", checkpoint: {signal: "KILL"}}]`, []string{`checkpoint: signal: KILL is not one of TERM, USR1`}},
		{"bad checkpoint field", `[{name: "a", cmd: "x", checkpoint: {evry: "5m"}}]`, []string{`checkpoint: unknown field "evry" (did you mean "every"?)`}},
		{"checkpoint before timeout", `[{name: "a", cmd: "x", timeout: "1m", checkpoint: {before: "2m"}}]`, []string{`checkpoint: before (2m0s) must be shorter than the timeout (1m0s)`}},
		{"checkpoint size", `[{name: "a", cmd: "x", checkpoint: {max_size: "lots"}}]`, []string{`checkpoint: max_size: "lots" is not a quantity`}},
		{"several problems", `[{name: "a", cmd: "x", foo: 1}, {name: "b", cmd: "x", bar: 2}]`, []string{"2 problems", "foo", "bar"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "bad.jsonnet", c.src)
			_, err := Load(p, Options{})
			if err == nil {
				t.Fatalf("no error for %s", c.src)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "bad.jsonnet") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestValidationErrorType(t *testing.T) {
	_, err := Parse("x.json", []byte(`[{"name":"a","cmd":"x","after":["nope"]}]`))
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "after" {
		t.Fatalf("err = %#v", err)
	}
}

func TestMatrixNamesFallBackToIndex(t *testing.T) {
	exp, err := Parse("m.json", []byte(`{"matrix":{"name":"g","params":{"x":["a b","a/b"]},"cmd":"echo {{x}}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	// "a b" and "a/b" both sanitise to "a-b": names must fall back to indices.
	if exp.Trials[0].Name != "g-0" || exp.Trials[1].Name != "g-1" {
		t.Fatalf("names = %s, %s", exp.Trials[0].Name, exp.Trials[1].Name)
	}
	if exp.Trials[1].Cmd.Shell != "echo a/b" {
		t.Fatalf("cmd = %q", exp.Trials[1].Cmd.Shell)
	}
}

func TestDependsHealthyByDefaultWhenChecked(t *testing.T) {
	exp, err := Parse("h.json", []byte(`[{"name":"db","cmd":"x","service":true,"health":{"tcp":"127.0.0.1:5432"}},{"name":"a","cmd":"y","depends":["db"]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := exp.Trials[1].Depends[0].Condition; got != Healthy {
		t.Fatalf("condition = %s, want healthy", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"name":"a","cmd":"x","depends":["b"]},{"name":"b","cmd":["y"],"after":[]}]`))
	f.Add([]byte(`{"name":"e","defaults":{"env":{"A":"1"}},"matrix":{"params":{"a":[1,2]},"seeds":[1,2],"cmd":"{{a}}"}}`))
	f.Add([]byte(`[{"name":"s","service":true,"health":{"cmd":"true"}},{"name":"t","depends":[{"trial":"s","condition":"healthy"}],"resources":{"cpu":"500m","memory":"1Gi","gpu":1},"ports":["127.0.0.1:80:80/tcp"]}]`))
	f.Add([]byte(`[{"name":"g","cmd":"x","node_selector":{"pool":"gpu"},"tolerations":[{"key":"k","operator":"Equal","value":"v","effect":"NoExecute","toleration_seconds":30},{"operator":"Exists"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		exp, err := Parse("fuzz.json", data)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error is not a ValidationError with problems: %v", err)
			}
			return
		}
		// A valid plan has unique, valid names, resolvable edges and no cycle.
		seen := map[string]bool{}
		for i, tr := range exp.Trials {
			if !validName.MatchString(tr.Name) || seen[tr.Name] || tr.Index != i {
				t.Fatalf("bad trial %d: %+v", i, tr)
			}
			seen[tr.Name] = true
		}
		for _, tr := range exp.Trials {
			for _, d := range tr.Depends {
				if !seen[d.Trial] {
					t.Fatalf("dangling depends %q", d.Trial)
				}
			}
			for _, a := range tr.After {
				if !seen[a] {
					t.Fatalf("dangling after %q", a)
				}
			}
		}
		if findCycle(exp.Trials) != nil {
			t.Fatal("cycle in a valid plan")
		}
	})
}

func TestTolerationsMergeFromDefaults(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "tol.jsonnet", `{
  defaults: { tolerations: [{ key: "pool", value: "spot", effect: "NoSchedule" }] },
  trials: [
    { name: "a", cmd: "x" },
    { name: "b", cmd: "x", tolerations: [{ operator: "Exists", effect: "NoExecute", toleration_seconds: 30 }] },
  ],
}`)
	exp, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := exp.Trials[0].Tolerations, exp.Trials[1].Tolerations
	if len(a) != 1 || a[0] != (Toleration{Key: "pool", Value: "spot", Effect: "NoSchedule"}) {
		t.Errorf("a: %+v", a)
	}
	// A trial's own list replaces the defaults' (as any list field does).
	if len(b) != 1 || b[0].Operator != "Exists" || b[0].Seconds == nil || *b[0].Seconds != 30 {
		t.Errorf("b: %+v", b)
	}
}

// TestTrialCap: a run's trials are capped (DefaultMaxTrials unless raised); a matrix over the cap
// is refused before it is expanded, with the count and what to do.
func TestTrialCap(t *testing.T) {
	huge := `{"matrix":{"name":"m","params":{"a":` + seq(1000) + `,"b":` + seq(1000) + `},"seeds":1000,"cmd":"x"}}`
	for _, c := range []struct {
		name, json string
		max        int
		want       string // "" when it must load
	}{
		{"a billion-trial matrix", huge, 0, "the experiment would have 1,000,000,000 trials, more than the cap of 100,000 trials per run"},
		{"one over the cap", `{"matrix":{"params":{"a":` + seq(11) + `},"cmd":"x"}}`, 10, "would have 11 trials, more than the cap of 10"},
		{"at the cap", `{"matrix":{"params":{"a":` + seq(10) + `},"cmd":"x"}}`, 10, ""},
		{"two matrices together", `{"matrix":[{"name":"p","seeds":6,"cmd":"x"},{"name":"q","seeds":5,"cmd":"x"}]}`, 10, "would have 11 trials"},
		{"trials and a matrix", `{"trials":[{"name":"t","cmd":"x"}],"matrix":{"seeds":10,"cmd":"x"}}`, 10, "would have 11 trials"},
		{"a combu array", `[{"name":"a","cmd":"x"},{"name":"b","cmd":"x"},{"name":"c","cmd":"x"}]`, 2, "would have 3 trials, more than the cap of 2"},
		{"raised cap", `{"matrix":{"params":{"a":` + seq(11) + `},"cmd":"x"}}`, 11, ""},
		{"no cap", `{"matrix":{"params":{"a":` + seq(200) + `},"seeds":1000,"cmd":"x"}}`, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp, err := ParseMax("cap.json", []byte(c.json), c.max)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(exp.Trials) == 0 {
					t.Fatal("no trials")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--max-trials") {
				t.Fatalf("err = %v, want it to say %q and how to raise the cap", err, c.want)
			}
		})
	}
}

func seq(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.Itoa(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestResourceQuantities: cpu and memory are Kubernetes quantities, read by Kubernetes' own
// parser, so what a trial asks for is what a pod gets.
func TestResourceQuantities(t *testing.T) {
	for _, c := range []struct {
		res    string
		cpu    float64
		memory int64
		err    string
	}{
		{`{"cpu": "500m", "memory": "512Mi"}`, 0.5, 512 << 20, ""},
		{`{"cpu": 2, "memory": "1Pi"}`, 2, 1 << 50, ""},
		{`{"cpu": "0.25", "memory": "0.5"}`, 0.25, 1, ""}, // half a byte rounds up, as Kubernetes does
		{`{"memory": "2e3"}`, 0, 2000, ""},
		{`{"memory": "1.5Gi"}`, 0, 3 << 29, ""},
		{`{"memory": 1073741824}`, 0, 1 << 30, ""},
		{`{"memory": "2K"}`, 0, 0, `memory: "2K" is not a quantity`},
		{`{"memory": "-1Gi"}`, 0, 0, "memory: want a positive amount"},
		{`{"cpu": 0}`, 0, 0, "cpu: want a positive number of cores"},
		{`{"cpu": "fast"}`, 0, 0, `cpu: "fast" is not a quantity`},
		{`{"memory": true}`, 0, 0, "memory: want bytes or a quantity"},
	} {
		exp, err := Parse("r.json", []byte(`[{"name":"a","cmd":"x","resources":`+c.res+`}]`))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want %q", c.res, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.res, err)
			continue
		}
		if r := exp.Trials[0].Resources; r.CPU != c.cpu || r.Memory != c.memory {
			t.Errorf("%s: cpu %v memory %d, want %v and %d", c.res, r.CPU, r.Memory, c.cpu, c.memory)
		}
	}
}

// combu's {host, container} objects for ports and volumes become docker's strings.
func TestCombuPortAndVolumeObjects(t *testing.T) {
	exp, err := Parse("combu.json", []byte(`[{"name":"db","image":"postgres","cmd":"postgres",
	  "ports":[{"host":5432,"container":5432},{"host":"8080","container":"80","ip":"127.0.0.1","protocol":"udp"},{"container":9000}],
	  "volumes":[{"host":"/srv/data","container":"/data"},{"host":"cache","container":"/cache","mode":"ro"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	tr := exp.Trials[0]
	if got := strings.Join(tr.Ports, " "); got != "5432:5432 127.0.0.1:8080:80/udp 9000" {
		t.Errorf("ports = %s", got)
	}
	if got := strings.Join(tr.Volumes, " "); got != "/srv/data:/data cache:/cache:ro" {
		t.Errorf("volumes = %s", got)
	}
}

// combu's README writes ports with the protocol on each side ({host: "2222/tcp", container:
// "80/tcp"}); they become docker's "2222:80/tcp", and sides that disagree are refused.
func TestCombuPortsWithProtocolOnEachSide(t *testing.T) {
	exp, err := Parse("combu.json", []byte(`[{"name": "a", "image": "busybox", "networks": ["sample"],
	  "ports": [{"host": "2222/tcp", "container": "80/tcp"}, {"host": "5353", "container": "53/udp"}, {"container": "9000/tcp"}],
	  "volumes": [{"host": "data", "container": "/data"}]},
	  {"name": "b", "image": "busybox", "depends": ["a"], "networks": ["sample"], "cmd": "echo combu"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(exp.Trials[0].Ports, " "); got != "2222:80/tcp 5353:53/udp 9000/tcp" {
		t.Errorf("ports = %s", got)
	}
	if got := strings.Join(exp.Trials[0].Volumes, " "); got != "data:/data" {
		t.Errorf("volumes = %s", got)
	}
	_, err = Parse("combu.json", []byte(`[{"name": "a", "image": "busybox", "ports": [{"host": "2222/udp", "container": "80/tcp"}]}]`))
	if err == nil || !strings.Contains(err.Error(), `says udp, but the port is tcp`) {
		t.Errorf("disagreeing protocols: %v", err)
	}
}

// A trial others depend on to have started, and that none waits for to end, is a service (as
// in combu and compose); defaults.timeout does not reach services; a trial someone waits for
// stays a step.
func TestImpliedServicesAndTheirTimeout(t *testing.T) {
	exp, err := Parse("x.json", []byte(`{"defaults":{"timeout":"1m"},"trials":[
	  {"name":"loader","cmd":"serve"},
	  {"name":"cache","cmd":"redis","service":true},
	  {"name":"own","cmd":"serve","service":true,"timeout":"2h"},
	  {"name":"build","cmd":"make"},
	  {"name":"sim","cmd":"run","depends":["loader","cache","own",{"trial":"build","condition":"started"}]},
	  {"name":"report","cmd":"plot","after":["build"]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Trial{}
	for _, tr := range exp.Trials {
		byName[tr.Name] = tr
	}
	if l := byName["loader"]; !l.Service || !l.ServiceImplied || l.Timeout != 0 {
		t.Errorf("loader = service %v implied %v timeout %s", l.Service, l.ServiceImplied, time.Duration(l.Timeout))
	}
	if c := byName["cache"]; !c.Service || c.ServiceImplied || c.Timeout != 0 {
		t.Errorf("cache = service %v implied %v timeout %s", c.Service, c.ServiceImplied, time.Duration(c.Timeout))
	}
	if o := byName["own"]; time.Duration(o.Timeout) != 2*time.Hour {
		t.Errorf("own timeout = %s", time.Duration(o.Timeout))
	}
	if b := byName["build"]; b.Service || time.Duration(b.Timeout) != time.Minute {
		t.Errorf("build = service %v timeout %s", b.Service, time.Duration(b.Timeout))
	}
	if s := byName["sim"]; s.Service || time.Duration(s.Timeout) != time.Minute {
		t.Errorf("sim = service %v timeout %s", s.Service, time.Duration(s.Timeout))
	}
}

func TestPreemptibleAndCheckpoint(t *testing.T) {
	exp, err := Parse("p.json", []byte(`[{"name":"a","cmd":"x","preemptible":true,"timeout":"1h","checkpoint":{"signal":"SIGUSR1","before":"2m","every":600,"max_size":"2Gi"}},
		{"name":"b","cmd":"x","preemptible":true,"requeues":0},{"name":"c","cmd":"x"}]`))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := exp.Trials[0], exp.Trials[1], exp.Trials[2]
	want := Checkpoint{Signal: "USR1", Before: Duration(2 * time.Minute), Every: Duration(10 * time.Minute), MaxSize: 2 << 30}
	if !a.Preemptible || a.Requeues != DefaultRequeues || a.Checkpoint == nil || *a.Checkpoint != want || !a.Checkpointed() {
		t.Fatalf("a = %+v %+v", a, a.Checkpoint)
	}
	if !b.Preemptible || b.Requeues != 0 || !b.Checkpointed() || b.CheckpointSettings().Signal != "TERM" || b.CheckpointSettings().MaxSize != DefaultCheckpointMax {
		t.Fatalf("b = %+v %+v", b, b.CheckpointSettings())
	}
	if c.Preemptible || c.Checkpointed() {
		t.Fatalf("c = %+v", c)
	}
}

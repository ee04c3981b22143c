package core_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/scenarios/*.txt")

// TestScenarios runs the scripts of testdata/scenarios: each is one behaviour of the core told
// as events at simulated times and the actions the core answers with, in the manner of etcd
// raft's interaction tests. A script is a list of blocks, each a command (with input lines for
// some), a line "----" and the output expected, ended by a blank line; lines starting with #
// between blocks say what the script shows. -update writes the output the core gives now in
// place of the expected one.
//
// The commands:
//
//	experiment            input: an experiment as jikken reads it (JSON, any form); prints the
//	                      trials as the parser understood them
//	run [jobs=N] [fail-fast] [cpu=C] [memory=Q] [gpus=N] [mig=PROFILE:N]
//	    [store=manual] [reports] [prune=METRIC>VALUE] [adopt=NAME:N,...] [hold]
//	                      refuses a plan the host can never run, as the runner does, or builds
//	                      the core (from the store's records after a crash: a resume) and
//	                      sends Begin (with hold, the begin command does)
//	started NAME...       the current attempt of each trial started (NAME#N: attempt N);
//	                      [health-check] the engine has one of its own, [checkpoint=N],
//	                      [digest=D] the image the engine resolved (exit takes it too)
//	exit NAME [code=N] [reason=S] [err=S] [interrupted=preempted|node-lost|time-limit]
//	    [checkpoint=N]    the attempt ended (after saving checkpoint N, now)
//	healthy NAME, unhealthy NAME reason=S, queued NAME [reason=S], busy NAME devices=ID,...
//	metrics NAME METRIC=VALUE    a live point of the current attempt, for a pruning planner
//	stop [reason=S]       the user asks the run to stop
//	persisted [NAME]      with store=manual: the store acknowledges the records asked for
//	persisted again       the last acknowledgement comes a second time
//	persist-failed NAME err=S    the store refuses trial NAME's oldest record asked for
//	advance DURATION      time passes; the timers due fire in order (after a crash, a negative
//	                      one makes the next runner's clock behind the last one's)
//	begin                 sends Begin again, or after run hold
//	crash                 the runner dies: its core and timers are gone, the store stays
//	records [NAME...]     the records as the core holds them; state: counts and the run's status
//
// Unless store=manual, the store acknowledges each record as soon as it is asked for. Times
// print as durations from the scenario's start.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			blocks, trailing, err := parseScript(string(data))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			s := &scriptRun{t: t, file: file, stored: map[string]*store.TrialRecord{},
				points: map[string][]core.MetricPoint{}, pointsOf: map[string]int{}}
			for i := range blocks {
				b := &blocks[i]
				s.line = b.line
				s.out = nil
				s.do(b.cmd, b.input)
				got := s.out
				if *update {
					b.want = got
					continue
				}
				if !slices.Equal(got, b.want) {
					t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, b.line, b.cmd, strings.Join(got, "\n"), strings.Join(b.want, "\n"))
				}
			}
			if *update {
				if err := os.WriteFile(file, []byte(formatScript(blocks, trailing)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// block is one command of a script with its input and expected output; pre holds the comment
// and blank lines before it.
type block struct {
	pre   []string
	line  int
	cmd   string
	input []string
	want  []string
}

func parseScript(data string) (blocks []block, trailing []string, err error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	i := 0
	for {
		var b block
		for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(lines[i], "#")) {
			b.pre = append(b.pre, lines[i])
			i++
		}
		if i == len(lines) {
			return blocks, b.pre, nil
		}
		b.line, b.cmd = i+1, lines[i]
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			b.input = append(b.input, lines[i])
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("line %d: %q has no ---- line", b.line, b.cmd)
		}
		for i++; i < len(lines) && lines[i] != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		blocks = append(blocks, b)
	}
}

func formatScript(blocks []block, trailing []string) string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.pre...)
		out = append(out, b.cmd)
		out = append(out, b.input...)
		out = append(out, "----")
		out = append(out, b.want...)
	}
	out = append(out, trailing...)
	return strings.Join(out, "\n") + "\n"
}

// scriptRun is the world of one script: the plan, the core, its timers and the store.
type scriptRun struct {
	t    *testing.T
	file string
	line int
	out  []string

	trials []experiment.Trial
	index  map[string]int
	c      *core.Core
	now    time.Duration
	seq    int
	timers []scriptTimer
	// attempt is each trial's latest attempt asked to start.
	attempt map[int]int
	manual  bool
	reports bool
	// asked are the records asked for and not yet acknowledged (store=manual); stored is the
	// store: each trial's latest acknowledged record, by name.
	asked  []core.Persist
	stored map[string]*store.TrialRecord
	// lastAck is the last acknowledgement sent, for a driver that sends one twice.
	lastAck core.Persisted
	// points are the live points of each trial's latest attempt that reported any (pointsOf),
	// by name: the curves a resumed pruning planner judges against.
	points   map[string][]core.MetricPoint
	pointsOf map[string]int
}

type scriptTimer struct {
	at  time.Duration
	seq int
	tm  core.Timer
}

func (s *scriptRun) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s:%d: %s", s.file, s.line, fmt.Sprintf(format, args...))
}

func (s *scriptRun) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

func (s *scriptRun) at() time.Time { return epoch.Add(s.now) }

func (s *scriptRun) do(line string, input []string) {
	words := splitWords(line)
	if len(words) == 0 {
		s.fatalf("empty command")
	}
	cmd, pos, kv := words[0], []string{}, map[string]string{}
	for _, w := range words[1:] {
		if k, v, ok := strings.Cut(w, "="); ok {
			kv[k] = v
		} else {
			pos = append(pos, w)
		}
	}
	if s.c == nil && !slices.Contains([]string{"experiment", "run", "records", "advance"}, cmd) {
		s.fatalf("%s before run", cmd)
	}
	if known, ok := scriptKeys[cmd]; ok {
		for k := range kv {
			if !slices.Contains(known, k) {
				s.fatalf("%s takes no %s= (it takes %s)", cmd, k, strings.Join(known, "=, ")+"=")
			}
		}
	}
	switch cmd {
	case "experiment":
		s.experiment(strings.Join(input, "\n"))
	case "run":
		s.run(pos, kv)
	case "begin":
		s.step(core.Begin{At: s.at()})
	case "started":
		for _, name := range pos {
			if name == "health-check" {
				continue
			}
			i, n := s.target(name)
			s.step(core.Started{Trial: i, Attempt: n, Handle: "h", HealthCheck: slices.Contains(pos, "health-check"),
				Checkpoint: s.intArg(kv, "checkpoint", 0), ImageDigest: kv["digest"], At: s.at()})
		}
	case "exit":
		i, n := s.target(s.one(pos))
		e := core.Exited{Trial: i, Attempt: n, Code: s.intArg(kv, "code", 0), Reason: kv["reason"], Err: kv["err"],
			Checkpoint: s.intArg(kv, "checkpoint", 0), ImageDigest: kv["digest"], At: s.at()}
		if e.Checkpoint > 0 {
			e.CheckpointAt = s.at()
		}
		switch kv["interrupted"] {
		case "":
		case "preempted":
			e.Interrupted = core.Preempted
		case "node-lost":
			e.Interrupted = core.NodeLost
		case "time-limit":
			e.Interrupted = core.TimeLimit
		default:
			s.fatalf("interrupted=%s: preempted, node-lost or time-limit", kv["interrupted"])
		}
		s.step(e)
	case "healthy":
		i, n := s.target(s.one(pos))
		s.step(core.Healthy{Trial: i, Attempt: n, At: s.at()})
	case "unhealthy":
		i, n := s.target(s.one(pos))
		s.step(core.Unhealthy{Trial: i, Attempt: n, Reason: kv["reason"], At: s.at()})
	case "queued":
		i, n := s.target(s.one(pos))
		s.step(core.Queued{Trial: i, Attempt: n, Reason: kv["reason"], At: s.at()})
	case "busy":
		i, n := s.target(s.one(pos))
		s.step(core.DevicesBusy{Trial: i, Attempt: n, Devices: strings.Split(kv["devices"], ","), At: s.at()})
	case "metrics":
		i, n := s.target(s.one(pos))
		var pts []core.MetricPoint
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			v := kv[k]
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				s.fatalf("%s=%s: %v", k, v, err)
			}
			pts = append(pts, core.MetricPoint{Metric: k, Step: s.c.Metrics(i).UpTo + 1, Value: f})
		}
		name := s.trials[i].Name
		if s.pointsOf[name] != n {
			s.points[name], s.pointsOf[name] = nil, n
		}
		s.points[name] = append(s.points[name], pts...)
		s.step(core.MetricsReported{Trial: i, Attempt: n, UpTo: s.c.Metrics(i).UpTo + int64(len(pts)), Points: pts, At: s.at()})
	case "stop":
		s.step(core.StopRequested{Reason: kv["reason"], At: s.at()})
	case "persisted":
		if slices.Equal(pos, []string{"again"}) {
			s.step(s.lastAck)
			break
		}
		s.acknowledge(pos)
	case "persist-failed":
		i, _ := s.target(s.one(pos))
		k := slices.IndexFunc(s.asked, func(p core.Persist) bool { return p.Trial == i })
		if k < 0 {
			s.fatalf("no record of %s is waiting for the store", pos[0])
		}
		p := s.asked[k]
		s.asked = slices.Delete(s.asked, k, k+1)
		s.step(core.PersistFailed{Trial: i, Version: p.Version, Err: kv["err"], At: s.at()})
	case "advance":
		d, err := time.ParseDuration(s.one(pos))
		if err != nil {
			s.fatalf("advance: %v", err)
		}
		s.advance(s.now + d)
	case "crash":
		s.c, s.timers, s.asked = nil, nil, nil
	case "records":
		s.records(pos)
	case "state":
		s.state()
	default:
		s.fatalf("unknown command %q", cmd)
	}
}

// scriptKeys are the key=value arguments each command takes (metrics takes any: the metrics).
var scriptKeys = map[string][]string{
	"run":     {"jobs", "cpu", "memory", "gpus", "mig", "store", "prune", "adopt"},
	"started": {"checkpoint", "digest"},
	"exit":    {"code", "reason", "err", "interrupted", "checkpoint", "digest"},
	"healthy": {}, "unhealthy": {"reason"}, "queued": {"reason"}, "busy": {"devices"},
	"stop": {"reason"}, "persisted": {}, "persist-failed": {"err"}, "advance": {}, "begin": {},
	"crash": {}, "records": {}, "state": {}, "experiment": {},
}

func (s *scriptRun) one(pos []string) string {
	if len(pos) != 1 {
		s.fatalf("want one trial, got %v", pos)
	}
	return pos[0]
}

func (s *scriptRun) intArg(kv map[string]string, key string, def int) int {
	v, ok := kv[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		s.fatalf("%s=%s: %v", key, v, err)
	}
	return n
}

// target resolves NAME (the trial's latest attempt) or NAME#N.
func (s *scriptRun) target(word string) (trial, attempt int) {
	name, n, explicit := strings.Cut(word, "#")
	i, ok := s.index[name]
	if !ok {
		s.fatalf("no trial %q", name)
	}
	if !explicit {
		return i, s.attempt[i]
	}
	a, err := strconv.Atoi(n)
	if err != nil {
		s.fatalf("%s: %v", word, err)
	}
	return i, a
}

func (s *scriptRun) experiment(src string) {
	exp, err := experiment.Parse("scenario.json", []byte(src))
	if err != nil {
		s.fatalf("experiment: %v", err)
	}
	s.trials = exp.Trials
	s.index = map[string]int{}
	for i, t := range s.trials {
		s.index[t.Name] = i
		s.printf("%s", describeTrial(t))
	}
}

func (s *scriptRun) run(pos []string, kv map[string]string) {
	for _, p := range pos {
		if !slices.Contains([]string{"fail-fast", "reports", "hold"}, p) {
			s.fatalf("run takes no %s (it takes fail-fast, reports, hold)", p)
		}
	}
	cfg := core.Config{RunID: "run", Backend: "script", Host: "host", Trials: s.trials, Jobs: s.intArg(kv, "jobs", 1),
		FailFast: slices.Contains(pos, "fail-fast")}
	s.manual = kv["store"] == "manual"
	s.reports = slices.Contains(pos, "reports")
	if len(s.stored) > 0 {
		cfg.Journal = map[string]*store.TrialRecord{}
		for name, r := range s.stored {
			rec := *r
			cfg.Journal[name] = &rec
		}
	}
	if a := kv["adopt"]; a != "" {
		cfg.Adopted = map[string]int{}
		for _, p := range strings.Split(a, ",") {
			name, n, _ := strings.Cut(p, ":")
			cfg.Adopted[name], _ = strconv.Atoi(n)
		}
	}
	if c := s.capacity(kv); c != nil {
		cfg.Capacity = c
		if unfit := core.Unfit(s.trials, c); len(unfit) > 0 {
			for _, u := range unfit {
				s.printf("refused: %s", u)
			}
			return
		}
	}
	if p := kv["prune"]; p != "" {
		metric, v, ok := strings.Cut(p, ">")
		limit, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			s.fatalf("prune=%s: want METRIC>VALUE", p)
		}
		cfg.Planner = pruneAbove{metric: metric, limit: limit}
		cfg.Curves = maps.Clone(s.points)
	}
	s.attempt = map[int]int{}
	for name, r := range cfg.Journal {
		if n := len(r.Attempts); n > 0 {
			s.attempt[s.index[name]] = r.Attempts[n-1].N
		}
	}
	s.c = core.New(cfg)
	if !slices.Contains(pos, "hold") {
		s.step(core.Begin{At: s.at()})
	}
}

func (s *scriptRun) capacity(kv map[string]string) *core.Capacity {
	var c core.Capacity
	set := false
	if v, ok := kv["cpu"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			s.fatalf("cpu=%s: %v", v, err)
		}
		c.CPU, set = f, true
	}
	if v, ok := kv["memory"]; ok {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			s.fatalf("memory=%s: %v", v, err)
		}
		c.Memory, set = q.Value(), true
	}
	for k := range s.intArg(kv, "gpus", 0) {
		c.GPUs, set = append(c.GPUs, core.Device{ID: fmt.Sprintf("GPU-%d", k)}), true
	}
	if v, ok := kv["mig"]; ok {
		profile, n, _ := strings.Cut(v, ":")
		count, _ := strconv.Atoi(n)
		for k := range count {
			c.GPUs, set = append(c.GPUs, core.Device{ID: fmt.Sprintf("MIG-%d", k), MIG: profile}), true
		}
	}
	if !set {
		return nil
	}
	return &c
}

// step feeds ev to the core and prints the actions that follow; unless the store is manual,
// each record asked for is acknowledged at once, and what follows is printed too.
func (s *scriptRun) step(ev core.Event) {
	var writes []core.Persist
	for _, a := range s.c.Step(ev) {
		s.print(a)
		if p, ok := a.(core.Persist); ok {
			if s.manual {
				s.asked = append(s.asked, p)
			} else {
				writes = append(writes, p)
			}
		}
	}
	for _, p := range writes {
		s.store(p)
		s.step(core.Persisted{Trial: p.Trial, Version: p.Version, At: s.at()})
	}
}

func (s *scriptRun) store(p core.Persist) {
	rec := *p.Record
	s.stored[p.Record.Name] = &rec
}

// acknowledge stores the records asked for (of the trials named, or all), as a driver that
// writes only the latest of each trial does.
func (s *scriptRun) acknowledge(names []string) {
	latest := map[int]core.Persist{}
	var order []int
	rest := s.asked[:0]
	for _, p := range s.asked {
		if len(names) > 0 && !slices.Contains(names, s.trials[p.Trial].Name) {
			rest = append(rest, p)
			continue
		}
		if _, ok := latest[p.Trial]; !ok {
			order = append(order, p.Trial)
		}
		latest[p.Trial] = p
	}
	s.asked = rest
	for _, i := range order {
		p := latest[i]
		s.store(p)
		s.lastAck = core.Persisted{Trial: i, Version: p.Version, At: s.at()}
		s.step(s.lastAck)
	}
}

// advance moves the clock to until, firing the timers due on the way in the order of their
// times (ties: the order they were set).
func (s *scriptRun) advance(until time.Duration) {
	for {
		k := -1
		for i, tm := range s.timers {
			if tm.at <= until && (k < 0 || tm.at < s.timers[k].at || tm.at == s.timers[k].at && tm.seq < s.timers[k].seq) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		tm := s.timers[k]
		s.timers = slices.Delete(s.timers, k, k+1)
		s.now = max(s.now, tm.at)
		s.printf("%s: %s fired", s.now, timerName(s, tm.tm))
		s.step(core.TimerFired{Timer: tm.tm, At: s.at()})
	}
	s.now = until
}

func (s *scriptRun) name(trial, attempt int) string {
	return fmt.Sprintf("%s#%d", s.c.Trial(trial).Name, attempt)
}

func timerName(s *scriptRun, tm core.Timer) string {
	kind := map[core.TimerKind]string{core.Timeout: "timeout", core.HealthDeadline: "health deadline", core.Retry: "retry", core.Recheck: "device recheck"}[tm.Kind]
	if tm.Trial < 0 {
		return kind
	}
	return kind + " of " + s.name(tm.Trial, tm.Attempt)
}

func (s *scriptRun) print(a core.Action) {
	switch a := a.(type) {
	case core.StartAttempt:
		s.attempt[a.Trial] = a.Attempt
		line := "start " + s.name(a.Trial, a.Attempt)
		if a.Clear {
			line += " clear"
		}
		if a.Keep > 0 {
			line += fmt.Sprintf(" keep=%d", a.Keep)
		}
		if a.Adopted {
			line += " adopted"
		}
		for k, d := range a.Devices {
			line += fmt.Sprintf(" %s:%d", d, a.Shares[k])
		}
		s.printf("%s", line)
	case core.StopAttempt:
		s.printf("stop %s %q", s.name(a.Trial, a.Attempt), a.Reason)
	case core.WatchHealth:
		s.printf("watch health of %s until %s", s.name(a.Trial, a.Attempt), a.Deadline.Sub(epoch))
	case core.SetTimer:
		s.seq++
		s.timers = append(s.timers, scriptTimer{at: a.At.Sub(epoch), seq: s.seq, tm: a.Timer})
		s.printf("set %s at %s", timerName(s, a.Timer), a.At.Sub(epoch))
	case core.Persist:
		r := a.Record
		line := fmt.Sprintf("record %s: %s", r.Name, r.Status)
		if r.Reason != "" {
			line += fmt.Sprintf(" %q", r.Reason)
		}
		if r.Eliminated != "" {
			line += fmt.Sprintf(" (eliminated %q)", r.Eliminated)
		}
		if r.Live != nil && r.Live.Queued != "" {
			line += fmt.Sprintf(" (queued %q)", r.Live.Queued)
		}
		s.printf("%s", line)
	case core.Report:
		if !s.reports {
			return
		}
		if a.Trial < 0 {
			s.printf("report: %s", describeCounts(a.Counts))
			return
		}
		s.printf("report %s: %s", a.Name, a.Status)
	default:
		s.fatalf("unknown action %T", a)
	}
}

func (s *scriptRun) records(names []string) {
	for i, t := range s.trials {
		if len(names) > 0 && !slices.Contains(names, t.Name) {
			continue
		}
		var r store.TrialRecord
		switch st := s.stored[t.Name]; {
		case s.c != nil:
			r = s.c.Record(i)
		case st != nil:
			r = *st
		default:
			s.printf("%s: no record", t.Name)
			continue
		}
		line := fmt.Sprintf("%s: %s", t.Name, r.Status)
		if r.Reason != "" {
			line += fmt.Sprintf(" %q", r.Reason)
		}
		if r.ExitCode != nil {
			line += fmt.Sprintf(" (exit %d)", *r.ExitCode)
		}
		if r.ImageDigest != "" {
			line += " image " + r.ImageDigest
		}
		s.printf("%s", line)
		if c := r.Compute; c != nil && c.Lost > 0 {
			s.printf("  compute: %gs spent, %gs lost", c.Spent, c.Lost)
		}
		for _, a := range r.Attempts {
			l := fmt.Sprintf("  attempt %d: %s-", a.N, a.Started.Sub(epoch))
			if !a.Finished.IsZero() {
				l += a.Finished.Sub(epoch).String()
			}
			if a.ExitCode != nil {
				l += fmt.Sprintf(" exit %d", *a.ExitCode)
			}
			if a.Reason != "" {
				l += fmt.Sprintf(" %q", a.Reason)
			}
			if a.Interrupted != "" {
				l += " [" + a.Interrupted + "]"
			}
			if a.Requeued {
				l += " [requeued]"
			}
			if len(a.Devices) > 0 {
				l += " devices " + strings.Join(a.Devices, ",")
			}
			s.printf("%s", l)
		}
	}
}

func (s *scriptRun) state() {
	s.printf("%s", describeCounts(s.c.Counts()))
	line := fmt.Sprintf("run %s", s.c.Status())
	if s.c.Done() {
		line += ", done"
	} else {
		line += ", not done"
	}
	if s.c.Interrupted() {
		line += ", interrupted"
	}
	if f := s.c.Fault(); f != "" {
		line += ", fault: " + f
	}
	s.printf("%s", line)
}

func describeCounts(n core.Counts) string {
	parts := []string{fmt.Sprintf("%d trials", n.Total)}
	for _, c := range []struct {
		n    int
		name string
	}{{n.Pending, "pending"}, {n.Running, "running"}, {n.Succeeded, "succeeded"}, {n.Failed, "failed"}, {n.Skipped, "skipped"},
		{n.Killed, "killed"}, {n.Stopped, "stopped"}, {n.Pruned, "pruned"}, {n.Eliminated, "eliminated"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	return strings.Join(parts, ", ")
}

// describeTrial is a trial as the core sees it, on one line.
func describeTrial(t experiment.Trial) string {
	parts := []string{t.Name + ":"}
	add := func(format string, args ...any) { parts = append(parts, fmt.Sprintf(format, args...)) }
	switch {
	case t.DeclaredService():
		add("service")
	case t.ServiceImplied:
		add("service (implied)")
	}
	if t.Restart != "" {
		add("restart=%s", t.Restart)
	}
	if t.Retries > 0 {
		add("retries=%d", t.Retries)
	}
	if t.Backoff > 0 {
		add("backoff=%s", time.Duration(t.Backoff))
	}
	if t.Timeout > 0 {
		add("timeout=%s", time.Duration(t.Timeout))
	}
	if t.Preemptible {
		add("preemptible requeues=%d", t.Requeues)
	}
	if cp := t.Checkpoint; cp != nil && cp.Before > 0 {
		add("checkpoint-before=%s", time.Duration(cp.Before))
	}
	if h := t.Health; h != nil {
		switch {
		case h.TCP != "":
			add("health=tcp:%s", h.TCP)
		case h.HTTP != "":
			add("health=%s", h.HTTP)
		default:
			add("health=cmd")
		}
		if h.Timeout > 0 {
			add("health-timeout=%s", time.Duration(h.Timeout))
		}
	}
	r := t.Resources
	if r.CPU > 0 {
		add("cpu=%g", r.CPU)
	}
	if r.Memory > 0 {
		add("memory=%s", resource.NewQuantity(r.Memory, resource.BinarySI))
	}
	if r.GPU > 0 {
		add("gpu=%g", r.GPU)
	}
	if r.MIG != "" {
		add("mig=%s", r.MIG)
	}
	var deps []string
	for _, d := range t.Depends {
		deps = append(deps, d.Trial+":"+string(d.Condition))
	}
	if len(deps) > 0 {
		add("depends=%s", strings.Join(deps, ","))
	}
	if len(t.After) > 0 {
		add("after=%s", strings.Join(t.After, ","))
	}
	return strings.Join(parts, " ")
}

// splitWords splits a command line at spaces, keeping a double-quoted value (key="a b") whole
// and unquoted.
func splitWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, has := false, false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '"':
			in, has = !in, true
		case ch == '\\' && in && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case ch == ' ' && !in:
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteByte(ch)
			has = true
		}
	}
	if has {
		words = append(words, cur.String())
	}
	return words
}

// pruneAbove is a planner that adds nothing and prunes a trial once a point of metric goes
// above limit.
type pruneAbove struct {
	metric string
	limit  float64
}

func (pruneAbove) Next(core.View) core.Decision { return core.Decision{Complete: true} }

func (p pruneAbove) Prune(_ core.View, trial int, curves map[int][]core.MetricPoint) (bool, string) {
	pts := curves[trial]
	last := pts[len(pts)-1]
	if last.Metric != p.metric || last.Value <= p.limit {
		return false, ""
	}
	// The other curves it was given, so that a script shows what a resumed planner knows.
	others := 0
	for i, c := range curves {
		if i != trial && len(c) > 0 {
			others++
		}
	}
	return true, fmt.Sprintf("%s %g above %g (%d other curves)", p.metric, last.Value, p.limit, others)
}

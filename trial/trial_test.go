package trial_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jikken-dev/jikken/trial"
)

// TestJSONAsManifestsStoreIt: a trial's command, durations and resources read back from the
// JSON a run's manifest holds as they were written, in both forms a command takes.
func TestJSONAsManifestsStoreIt(t *testing.T) {
	in := []trial.Trial{
		{Name: "shell", Cmd: trial.Command{Shell: "train --lr 0.1"}, Timeout: trial.Duration(90 * time.Second),
			Resources: trial.Resources{CPU: 2, Memory: 1 << 30, GPU: 0.5},
			Depends:   []trial.Dependency{{Trial: "db", Condition: trial.Healthy}}, Restart: trial.RestartOnFailure},
		{Name: "argv", Index: 1, Cmd: trial.Command{Argv: []string{"python", "train.py", "--seed", "1"}},
			Health: &trial.Health{TCP: "localhost:5432", Interval: trial.Duration(time.Second)}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cmd":"train --lr 0.1"`) || !strings.Contains(string(b), `"cmd":["python","train.py","--seed","1"]`) || !strings.Contains(string(b), `"timeout":"1m30s"`) {
		t.Errorf("encoded: %s", b)
	}
	var out []trial.Trial
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("read back differs:\n%s", diff)
	}
}

func TestCommandRefusesOtherJSON(t *testing.T) {
	for _, s := range []string{`1`, `{"sh":"x"}`, `["a",2]`} {
		var c trial.Command
		if err := json.Unmarshal([]byte(s), &c); err == nil || !strings.Contains(err.Error(), "string or an array of strings") {
			t.Errorf("%s: err = %v", s, err)
		}
	}
	c := trial.Command{Shell: "x"}
	if err := json.Unmarshal([]byte(`null`), &c); err != nil || !c.IsZero() {
		t.Errorf("null: %+v, %v", c, err)
	}
}

func TestDurationReadsSecondsAndStrings(t *testing.T) {
	for s, want := range map[string]time.Duration{`90`: 90 * time.Second, `"1h30m"`: 90 * time.Minute, `0.5`: 500 * time.Millisecond, `null`: 0} {
		var d trial.Duration
		if err := json.Unmarshal([]byte(s), &d); err != nil || time.Duration(d) != want {
			t.Errorf("%s: %v, %v; want %v", s, time.Duration(d), err, want)
		}
	}
	for _, s := range []string{`-1`, `"-5s"`, `"soon"`, `true`} {
		var d trial.Duration
		if err := json.Unmarshal([]byte(s), &d); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}

// TestShortClipsLongCommands: an error about a huge command quotes its start and its length.
func TestShortClipsLongCommands(t *testing.T) {
	if got := (trial.Command{Argv: []string{"echo", "hi"}}).Short(); got != "echo hi" {
		t.Errorf("short command: %q", got)
	}
	long := trial.Command{Shell: strings.Repeat("é", 1500)}
	got := long.Short()
	if !strings.HasSuffix(got, "... (3,000 bytes)") || len(got) > 230 || !strings.HasPrefix(got, "éé") {
		t.Errorf("long command: %q", got)
	}
}

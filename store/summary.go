package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jikken-dev/jikken/record"
)

// A run's summary, runs/<run>/summary.json, holds in one object what a reader of final results
// would otherwise open three files per trial for (trial.json, metrics.jsonl, result.json): at
// 100,000 trials opening the files costs more than anything done with them. It is a cache the
// runner writes when a run ends, just before the state that ends it; it describes the trials
// only while state.json still carries the same Finished time. A resume, a kill, anything that
// changes a trial of an ended run writes a new state, and the summary stops being fresh until
// the next one is written. Readers that find no fresh summary read the trial files.

// Summary is what a run's trials ended with.
type Summary struct {
	// Finished is the run state's Finished time this summary was written for.
	Finished time.Time `json:"finished"`
	// Trials are the trials that have a record (but those marked service), by Index then Name.
	Trials []SummaryTrial `json:"trials"`
}

// SummaryTrial is one trial's line of a Summary: its record's fields a results table shows and
// its final metrics (result.json's numbers over each metric's last logged value).
type SummaryTrial struct {
	Name   string `json:"name"`
	Index  int    `json:"index"`
	Group  string `json:"group,omitempty"`
	Status Status `json:"status"`
	// Reason is why a trial that did not succeed ended as it did (an eliminated one: the test).
	Reason  string         `json:"reason,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Seed    *int64         `json:"seed,omitempty"`
	Metrics Metrics        `json:"metrics,omitempty"`
}

// Metrics are final metric values (see record.Metrics).
type Metrics = record.Metrics

// WriteSummary stores s as run's summary, one trial a line so that the file reads in a text
// viewer. Write it before the state whose Finished it names: a runner stopped in between leaves
// a summary no state matches, which readers ignore.
func (r Runs) WriteSummary(ctx context.Context, run string, s *Summary) error {
	var b bytes.Buffer
	fin, err := json.Marshal(s.Finished)
	if err != nil {
		return fmt.Errorf("summary of %s: %w", run, err)
	}
	fmt.Fprintf(&b, "{\"finished\":%s,\"trials\":[", fin)
	for i := range s.Trials {
		line, err := json.Marshal(&s.Trials[i])
		if err != nil {
			return fmt.Errorf("summary of %s: trial %s: %w", run, s.Trials[i].Name, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return r.Blob.Put(ctx, RunKey(run, "summary.json"), bytes.NewReader(b.Bytes()), int64(b.Len()))
}

// Summary returns run's summary when it is fresh: the run has ended and its state names the
// time the summary was written for. It returns nil, and no error, when there is none or it is
// stale (the trial files are then the truth).
func (r Runs) Summary(ctx context.Context, run string) (*Summary, error) {
	st, err := r.State(ctx, run)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Finished == nil || !st.Status.Final() {
		return nil, nil
	}
	var s Summary
	switch err := r.getJSON(ctx, RunKey(run, "summary.json"), &s); {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if !s.Finished.Equal(*st.Finished) {
		return nil, nil
	}
	return &s, nil
}

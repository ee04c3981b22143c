package executor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// IndexedTrial is what one index of a job of many indexes runs (a Kubernetes Indexed Job that
// holds a batch of a sweep's trials): the pods of such a job share one spec, so what differs
// between its trials, their command and environment (trial name, seed, params), comes from a
// table with one IndexedTrial per index, which the executor of index i reads before it starts.
type IndexedTrial struct {
	// Env is the trial's environment as KEY=VALUE, its trial interface (JIKKEN_TRIAL, ...) and
	// JIKKEN_PARAMS_JSON included; it is added to the executor's own, and wins over it.
	Env []string `json:"env"`
	// Argv is the trial's command.
	Argv []string `json:"argv"`
}

// IndexEnv is the variable that holds a pod's completion index in a Kubernetes Indexed Job.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ReadIndexed reads index's entry from the table in dir, one file per index named by its
// number (a ConfigMap mounted as a folder).
func ReadIndexed(dir, index string) (IndexedTrial, error) {
	var t IndexedTrial
	n, err := strconv.Atoi(index)
	if err != nil || n < 0 {
		return t, fmt.Errorf("index table %s: %s=%q is not an index; is this pod part of an Indexed Job?", dir, IndexEnv, index)
	}
	b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(n)))
	if err != nil {
		return t, fmt.Errorf("index table: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("index table %s, index %d: %w", dir, n, err)
	}
	if len(t.Argv) == 0 {
		return t, fmt.Errorf("index table %s, index %d: no command", dir, n)
	}
	return t, nil
}

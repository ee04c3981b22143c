//go:build unix

package runner_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jikken-dev/jikken/store"
)

// TestOversizedParamOnlyInParamsFile: a param too large for the environment does not keep
// the trial from starting ("argument list too long"): it is in params.json only.
func TestOversizedParamOnlyInParamsFile(t *testing.T) {
	spec, _ := json.Marshal([]map[string]any{{
		"name": "big", "params": map[string]any{"blob": strings.Repeat("x", 200_000)},
		"cmd": `test -z "${JIKKEN_PARAM_BLOB+set}" && test "$(wc -c < "$JIKKEN_PARAMS")" -gt 200000`,
	}})
	sum, _, _ := run(t, string(spec), nil)
	if st := statuses(sum)["big"]; st != store.Succeeded {
		t.Fatalf("big: %s (%s)", st, sum.Trials[0].Reason)
	}
}

// TestHugeCommandErrorIsShort: a command too long to start fails with a reason that does not
// repeat it whole.
func TestHugeCommandErrorIsShort(t *testing.T) {
	spec, _ := json.Marshal([]map[string]any{{"name": "huge", "cmd": "true " + strings.Repeat("x", 200_000)}})
	sum, _, _ := run(t, string(spec), nil)
	rec := sum.Trials[0]
	if rec.Status != store.Failed || !strings.Contains(rec.Reason, "argument list too long") || len(rec.Reason) > 500 {
		t.Fatalf("huge: %s, reason of %d bytes: %.300s", rec.Status, len(rec.Reason), rec.Reason)
	}
}

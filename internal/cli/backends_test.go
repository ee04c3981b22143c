package cli

import (
	"reflect"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/backend/slurm"
)

// TestRecordedSettingsOfEarlierVersions: runs recorded before the settings had one spelling
// (job_ttl, job_per_attempt, sbatch-args) are read as they were; the command line wins over
// the record.
func TestRecordedSettingsOfEarlierVersions(t *testing.T) {
	var s backendSettings
	cmd := &cobra.Command{Use: "resume"}
	s.addFlags(cmd, true)
	if err := cmd.Flags().Parse([]string{"--namespace", "mine"}); err != nil {
		t.Fatal(err)
	}
	k := s.over("kubernetes", map[string]string{"namespace": "team-a", "job_ttl": "keep", "job_per_attempt": "true"})
	want := &kubernetes.Settings{Namespace: "mine", JobTTL: "keep", JobPerAttempt: true}
	if got := k.values["kubernetes"]; !reflect.DeepEqual(got, want) {
		t.Errorf("kubernetes settings = %+v, want %+v", got, want)
	}
	sl := backendSettings{}.over("slurm", map[string]string{"partition": "gpu", "sbatch-args": "--constraint=a100\n--exclusive"})
	wantSlurm := &slurm.Settings{Partition: "gpu", SbatchArgs: []string{"--constraint=a100", "--exclusive"}}
	if got := sl.values["slurm"]; !reflect.DeepEqual(got, wantSlurm) {
		t.Errorf("slurm settings = %+v, want %+v", got, wantSlurm)
	}
}

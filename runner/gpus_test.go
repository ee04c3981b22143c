//go:build unix

package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/backend/local"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/lease"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// gpuTrial holds a slot of the device it was given while it runs: a trial that finds its slot
// taken shares a device it should not, and fails. slots is how many trials may share a device.
func gpuTrial(gpu float64, slots int) string {
	claim := ""
	for s := 0; s < slots; s++ {
		claim += fmt.Sprintf(`{ mkdir ../locks/$CUDA_VISIBLE_DEVICES-%d 2>/dev/null && slot=%d; } || `, s, s)
	}
	claim += `{ echo "device $CUDA_VISIBLE_DEVICES is taken"; exit 1; }`
	return fmt.Sprintf(`{"matrix":{"name":"g","params":{"i":%s},"resources":{"gpu":%g},
	  "cmd":"test -n \"$CUDA_VISIBLE_DEVICES\" && test \"$CUDA_VISIBLE_DEVICES\" = \"$NVIDIA_VISIBLE_DEVICES\" && %s; echo $CUDA_VISIBLE_DEVICES > $JIKKEN_OUTPUT_DIR/device; touch ../running/$JIKKEN_TRIAL; ls ../running | wc -l >> ../peaks; sleep 0.2; rm ../running/$JIKKEN_TRIAL; rmdir ../locks/$CUDA_VISIBLE_DEVICES-$slot"}}`,
		rangeJSON(40), gpu, strings.ReplaceAll(claim, `"`, `\"`))
}

func fourGPUs() *core.Capacity {
	c := &core.Capacity{}
	for i := 0; i < 4; i++ {
		c.GPUs = append(c.GPUs, core.Device{ID: strconv.Itoa(i)})
	}
	return c
}

// runGPUs runs spec on the local backend with a 4-GPU host and a lease book, at -j 8.
func runGPUs(t *testing.T, spec string, book *lease.Book, dir string) *runner.Summary {
	t.Helper()
	exp, err := experiment.Parse("gpus.json", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"wd", "locks", "running"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	blob, err := store.OpenFolder(filepath.Join(dir, "store-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		t.Fatal(err)
	}
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("gpus", time.Now()), Trials: exp.Trials}
	if err := runs.WriteManifest(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 8, WorkRoot: filepath.Join(blob.Root(), ".work"),
		Workdir: filepath.Join(dir, "wd"), Capacity: fourGPUs(), Leases: book}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := r.Execute(ctx, m, false)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func peak(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "peaks"))
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, f := range strings.Fields(string(data)) {
		n, _ := strconv.Atoi(f)
		most = max(most, n)
	}
	return most
}

// 40 trials of one GPU at -j 8 on a 4-GPU host: at most 4 at once, each on a device of its own
// (seen from the trial's environment), every record naming its device.
func TestEachGPUTrialGetsItsOwnDevice(t *testing.T) {
	dir := t.TempDir()
	sum := runGPUs(t, gpuTrial(1, 1), &lease.Book{Dir: t.TempDir()}, dir)
	if sum.Status != store.Succeeded {
		for _, rec := range sum.Trials {
			if rec.Status != store.Succeeded {
				t.Fatalf("%s %s: %s", rec.Name, rec.Status, rec.Reason)
			}
		}
	}
	if p := peak(t, dir); p > 4 {
		t.Errorf("%d trials of one GPU ran at once on 4 GPUs", p)
	}
	for _, rec := range sum.Trials {
		if len(rec.Devices) != 1 || len(rec.Attempts[0].Devices) != 1 {
			t.Fatalf("%s records devices %v", rec.Name, rec.Devices)
		}
	}
}

// Two runs started together on one host never hold the same device at once: the lease book
// shares the host between them.
func TestTwoRunsOnOneHostNeverShareADevice(t *testing.T) {
	dir, book := t.TempDir(), &lease.Book{Dir: t.TempDir()}
	var wg sync.WaitGroup
	sums := make([]*runner.Summary, 2)
	for k := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[k] = runGPUs(t, gpuTrial(1, 1), book, dir)
		}()
	}
	wg.Wait()
	for _, sum := range sums {
		for _, rec := range sum.Trials {
			if rec.Status != store.Succeeded {
				t.Fatalf("%s %s: %s", rec.Name, rec.Status, rec.Reason)
			}
		}
	}
	if p := peak(t, dir); p > 4 {
		t.Errorf("%d trials of one GPU ran at once across two runs on 4 GPUs", p)
	}
}

// A plan the host can never run is refused before anything starts, with the numbers.
func TestTrialsThatCanNeverFitAreRefused(t *testing.T) {
	exp, err := experiment.Parse("big.json", []byte(`[{"name":"huge","cmd":"true","resources":{"gpu":8,"memory":"64Gi"}},{"name":"ok","cmd":"true"}]`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	blob, _ := store.OpenFolder(filepath.Join(dir, "store"))
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("big", time.Now()), Trials: exp.Trials}
	_ = runs.WriteManifest(context.Background(), m)
	c := fourGPUs()
	c.Memory = 24 << 30
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, WorkRoot: filepath.Join(dir, "work"), Workdir: dir, Capacity: c}
	_, err = r.Run(context.Background(), m, nil)
	if err == nil || !strings.Contains(err.Error(), "trial huge asks for 64Gi of memory of the host's 24Gi and 8 GPUs of the host's 4") {
		t.Fatalf("err = %v", err)
	}
	if trials, _ := runs.Trials(context.Background(), m.RunID); len(trials) != 0 {
		t.Fatalf("trials started: %v", trials)
	}
}

// 8 trials of 8Gi on a 24Gi host: never more than 2 at once (3 would leave nothing for the
// system and the runner).
func TestMemoryAdmission(t *testing.T) {
	spec := `{"matrix":{"name":"m","params":{"i":` + rangeJSON(8) + `},"resources":{"memory":"8Gi"},
	  "cmd":"touch ../running/$JIKKEN_TRIAL; ls ../running | wc -l >> ../peaks; sleep 0.2; rm ../running/$JIKKEN_TRIAL"}}`
	exp, err := experiment.Parse("mem.json", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"wd", "running"} {
		_ = os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	blob, _ := store.OpenFolder(filepath.Join(dir, "store"))
	runs := store.Runs{Blob: blob}
	m := &store.Manifest{RunID: runner.NewRunID("mem", time.Now()), Trials: exp.Trials}
	_ = runs.WriteManifest(context.Background(), m)
	r := &runner.Runner{Backend: &local.Backend{}, Runs: runs, Jobs: 8, WorkRoot: filepath.Join(dir, "work"),
		Workdir: filepath.Join(dir, "wd"), Capacity: &core.Capacity{Memory: runner.TrialMemory(24 << 30)}}
	sum, err := r.Execute(context.Background(), m, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range sum.Trials {
		if rec.Status != store.Succeeded {
			t.Errorf("%s %s: %s", rec.Name, rec.Status, rec.Reason)
		}
	}
	if p := peak(t, dir); p > 2 {
		t.Errorf("%d trials of 8Gi ran at once on a 24Gi host", p)
	}
}

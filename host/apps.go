package host

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// appsQuery is the nvidia-smi call that lists the processes using the GPUs.
var appsQuery = []string{"--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader"}

// ComputeApps lists the processes that use each GPU, by the GPU's UUID, as nvidia-smi
// --query-compute-apps shows them (processes with a CUDA context). Without nvidia-smi it
// knows none. The UUIDs are whole GPUs': nvidia-smi does not say which MIG instance a process
// uses.
func ComputeApps(ctx context.Context, smi string) (map[string][]int, error) {
	if smi == "" {
		smi = "nvidia-smi"
	}
	path, err := exec.LookPath(smi)
	if err != nil {
		return nil, nil
	}
	out, err := runSMI(ctx, path, appsQuery...)
	if err != nil {
		return nil, err
	}
	return parseApps(out)
}

// parseApps reads "GPU-…, 12345" lines; nvidia-smi prints a line of words ("No running
// processes found") on some drivers when there are none.
func parseApps(out []byte) (map[string][]int, error) {
	apps := map[string][]int{}
	n := 0
	for line := range bytes.Lines(out) {
		n++
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "No running") {
			continue
		}
		uuid, p, ok := strings.Cut(s, ",")
		uuid, p = strings.TrimSpace(uuid), strings.TrimSpace(p)
		pid, err := strconv.Atoi(p)
		if !ok || err != nil || pid <= 0 || !strings.HasPrefix(uuid, "GPU-") {
			return nil, fmt.Errorf("nvidia-smi %s line %d %q: want a GPU UUID and a pid", strings.Join(appsQuery, " "), n, s)
		}
		apps[uuid] = append(apps[uuid], pid)
	}
	return apps, nil
}

package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/jikken-dev/jikken/host/cgroup"
)

// GPU is one assignable GPU unit: a whole GPU, or a MIG instance of one.
type GPU struct {
	// Index is nvidia-smi's index ("0", "1"); a MIG instance's is its GPU's index and its MIG
	// device index ("0:1").
	Index string `json:"index"`
	// UUID is "GPU-..." or "MIG-..."; empty for a device named by JIKKEN_GPUS that nvidia-smi
	// does not show (there is no nvidia-smi).
	UUID string `json:"uuid,omitempty"`
	Name string `json:"name,omitempty"`
	// MemoryMiB is the GPU's memory; a MIG instance's is its profile's nominal size.
	MemoryMiB int64 `json:"memoryMiB,omitempty"`
	// MIG is the profile of a MIG instance ("1g.10gb"); empty for a whole GPU.
	MIG string `json:"mig,omitempty"`
}

// ID is how the GPU is named to CUDA and the NVIDIA container runtime (CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES, Docker's DeviceIDs): its UUID, else its index. A MIG instance can only
// be named by its UUID.
func (g GPU) ID() string {
	if g.UUID != "" {
		return g.UUID
	}
	return g.Index
}

// Inventory is what this machine offers to trials.
type Inventory struct {
	// CPUs are the cores this process may use: the cgroup's CPU quota or cpuset, else the
	// online CPUs.
	CPUs float64 `json:"cpus"`
	// Memory is in bytes: the cgroup's memory limit when lower than the machine's, else MemTotal.
	Memory int64 `json:"memory"`
	// GPUs are the assignable units: whole GPUs without MIG mode, and the MIG instances of
	// GPUs with MIG mode on.
	GPUs []GPU `json:"gpus"`
	// Notes say where each figure came from.
	Notes []string `json:"notes"`
}

// Options change what Discover reports.
type Options struct {
	// GPUs ("0,2,3", from JIKKEN_GPUS or --gpus) restricts nvidia-smi's list to those indices or
	// UUIDs (a MIG-enabled GPU's index or UUID stands for all its instances); without
	// nvidia-smi, the indices named are the devices. "none" means no GPU, "" or "all" every
	// GPU nvidia-smi shows.
	GPUs string
	// CPUs, when > 0, is the number of cores to offer (JIKKEN_CPUS, --cpus), for tests or a
	// shared server.
	CPUs float64
	// Memory, when > 0, is the bytes to offer (JIKKEN_MEMORY, --memory).
	Memory int64
	// NvidiaSMI is the nvidia-smi command, default "nvidia-smi" from PATH.
	NvidiaSMI string
	// Root is where /proc, /sys and the cgroup filesystem are read: "/" unless a test points it
	// at a fake tree.
	Root string
}

// Discover finds what this machine offers. GPUs come from nvidia-smi (not NVML: it needs no
// cgo and no driver library at build time, and the host's own tool is what users check
// against).
func Discover(ctx context.Context, o Options) (*Inventory, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	inv := &Inventory{}
	self, err := cgroup.ReadSelf(o.Root)
	if err != nil {
		self = &cgroup.Self{}
		inv.Notes = append(inv.Notes, "cgroups not read: "+err.Error())
	}
	inv.CPUs, inv.Notes = cpus(o, self, inv.Notes)
	if inv.Memory, inv.Notes, err = memory(o, self, inv.Notes); err != nil {
		return nil, err
	}
	gpus, notes, err := discoverGPUs(ctx, o)
	if err != nil {
		return nil, err
	}
	if gpus == nil {
		gpus = []GPU{} // "gpus": [] in JSON
	}
	inv.GPUs, inv.Notes = gpus, append(inv.Notes, notes...)
	return inv, nil
}

// cpus is the cores offered: the override, else the least of the online CPUs, the cpuset and
// the CPU quota.
func cpus(o Options, self *cgroup.Self, notes []string) (float64, []string) {
	if o.CPUs > 0 {
		return o.CPUs, append(notes, "CPUs: "+formatCores(o.CPUs)+", as set (--cpus, JIKKEN_CPUS)")
	}
	n, where := onlineCPUs(o.Root)
	if c, w, ok := self.CPUSet(); ok && float64(c) < n {
		n, where = float64(c), w
	}
	if q, w, ok := self.CPUQuota(); ok && q < n {
		n, where = q, w
	}
	return n, append(notes, "CPUs: "+formatCores(n)+", "+where)
}

// onlineCPUs counts the online CPUs from sysfs, else as the Go runtime does (which also
// respects this process's CPU affinity).
func onlineCPUs(root string) (float64, string) {
	p := filepath.Join(root, "sys/devices/system/cpu/online")
	if b, err := os.ReadFile(p); err == nil {
		if n, err := cgroup.CountCPUList(string(b)); err == nil {
			if root == "/" && runtime.NumCPU() < n {
				return float64(runtime.NumCPU()), "this process's CPU affinity"
			}
			return float64(n), "online CPUs " + strings.TrimSpace(string(b))
		}
	}
	return float64(runtime.NumCPU()), "CPUs this process may run on"
}

func formatCores(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

// memory is the bytes offered: the override, else MemTotal or the cgroup's limit if lower.
func memory(o Options, self *cgroup.Self, notes []string) (int64, []string, error) {
	if o.Memory > 0 {
		return o.Memory, append(notes, "Memory: "+FormatBytes(o.Memory)+", as set (--memory, JIKKEN_MEMORY)"), nil
	}
	total, err := memTotal(o.Root)
	if err != nil {
		return 0, notes, err
	}
	n, where := total, "MemTotal of /proc/meminfo"
	if lim, w, ok := self.MemoryLimit(); ok && lim < n {
		n, where = lim, w
	}
	return n, append(notes, "Memory: "+FormatBytes(n)+", "+where), nil
}

func memTotal(root string) (int64, error) {
	p := filepath.Join(root, "proc/meminfo")
	b, err := os.ReadFile(p)
	if err != nil {
		if n, ok := sysMemory(); ok && root == "/" {
			return n, nil
		}
		return 0, fmt.Errorf("read the machine's memory: %w; set it with --memory or JIKKEN_MEMORY", err)
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
			f := strings.Fields(string(rest))
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb > 0 {
					return kb << 10, nil
				}
			}
			return 0, fmt.Errorf("%s: cannot read %q; set the memory with --memory or JIKKEN_MEMORY", p, strings.TrimSpace(string(line)))
		}
	}
	return 0, fmt.Errorf("%s has no MemTotal; set the memory with --memory or JIKKEN_MEMORY", p)
}

package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/lease"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// hostSettings say what of this host trials may use (run, resume, validate --host).
type hostSettings struct {
	GPUs      string
	CPUs      float64
	Memory    string
	NoEnforce bool
	// GPUsBusy says what to do with GPUs that processes jikken did not start use: wait (for
	// them to end) or ignore.
	GPUsBusy string
}

func (h *hostSettings) addFlags(cmd *cobra.Command, enforce bool) {
	fl := cmd.Flags()
	cpus, _ := strconv.ParseFloat(os.Getenv("JIKKEN_CPUS"), 64)
	fl.StringVar(&h.GPUs, "gpus", os.Getenv("JIKKEN_GPUS"), `GPUs trials may use: indices or UUIDs "0,2,3", or "none" (default: every GPU nvidia-smi shows; $JIKKEN_GPUS)`)
	fl.Float64Var(&h.CPUs, "cpus", cpus, "cores trials may use (default: the cgroup's quota or the machine's; $JIKKEN_CPUS)")
	fl.StringVar(&h.Memory, "memory", os.Getenv("JIKKEN_MEMORY"), `memory of the host, e.g. "24Gi" (default: the cgroup's limit or the machine's; $JIKKEN_MEMORY)`)
	if enforce {
		fl.BoolVar(&h.NoEnforce, "no-enforce", false, "run trials with cpu or memory limits even where no cgroup can enforce them (the limits still admit trials)")
		fl.StringVar(&h.GPUsBusy, "gpus-busy", envOr("JIKKEN_GPUS_BUSY", "wait"), "GPUs that processes jikken did not start use (nvidia-smi --query-compute-apps): wait for them, or ignore them ($JIKKEN_GPUS_BUSY)")
	}
}

// over fills what the command line left unset from what a run recorded.
func (h hostSettings) over(o store.RunOptions) hostSettings {
	if h.GPUs == "" {
		h.GPUs = o.GPUs
	}
	if h.CPUs == 0 {
		h.CPUs = o.CPUs
	}
	if h.Memory == "" {
		h.Memory = o.Memory
	}
	h.NoEnforce = h.NoEnforce || o.NoEnforce
	return h
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (h hostSettings) options() (host.Options, error) {
	o := host.Options{GPUs: h.GPUs, CPUs: h.CPUs}
	if err := host.CheckGPUList(h.GPUs); err != nil {
		return o, cmdutil.UsageError("--gpus: %v", err)
	}
	if h.GPUsBusy != "" && h.GPUsBusy != "wait" && h.GPUsBusy != "ignore" {
		return o, cmdutil.UsageError("--gpus-busy %q: want wait or ignore", h.GPUsBusy)
	}
	if h.CPUs < 0 {
		return o, cmdutil.UsageError("--cpus %g: want a positive number of cores", h.CPUs)
	}
	if h.Memory != "" {
		q, err := resource.ParseQuantity(h.Memory)
		if err != nil || q.Sign() <= 0 {
			return o, cmdutil.UsageError("--memory %q: want an amount like \"24Gi\" or \"16G\"", h.Memory)
		}
		o.Memory = q.Value()
	}
	return o, nil
}

// hostCapacity is what the trials of a run on backend may use of this host, and the book of
// GPU leases the host's runs share (every user's: see lease.Default); nil when the backend
// places trials elsewhere (a cluster, a remote Docker engine).
func hostCapacity(ctx context.Context, backend runner.Backend, h hostSettings) (*core.Capacity, *lease.Book, *host.Inventory, error) {
	// A malformed --gpus is a usage error whatever the backend.
	if _, err := h.options(); err != nil {
		return nil, nil, nil, err
	}
	if !descriptorOf(backend.Name()).Caps.OnThisHost {
		return nil, nil, nil, nil
	}
	if b, ok := backend.(interface{ OnThisHost() bool }); ok && !b.OnThisHost() {
		return nil, nil, nil, nil // a remote engine
	}
	return thisHostCapacity(ctx, h)
}

// thisHostCapacity is what trials may use of this host, and the book of its GPU leases.
func thisHostCapacity(ctx context.Context, h hostSettings) (*core.Capacity, *lease.Book, *host.Inventory, error) {
	o, err := h.options()
	if err != nil {
		return nil, nil, nil, err
	}
	inv, err := host.Discover(ctx, o)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("find what this host offers (or set --gpus, --cpus, --memory): %w", err)
	}
	c := &core.Capacity{CPU: inv.CPUs, Memory: runner.TrialMemory(inv.Memory)}
	for _, g := range inv.GPUs {
		c.GPUs = append(c.GPUs, core.Device{ID: g.ID(), MIG: g.MIG})
	}
	book := lease.Default()
	if h.GPUsBusy != "ignore" && len(inv.GPUs) > 0 {
		book.InUse = func() (map[string][]int, error) { return host.ComputeApps(ctx, o.NvidiaSMI) }
	}
	return c, &book, inv, nil
}

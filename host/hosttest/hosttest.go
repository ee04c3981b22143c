// Package hosttest fakes a GPU host for tests on machines without GPUs: an nvidia-smi program
// that answers the calls jikken makes as the real one does (--query-gpu in CSV, -L with MIG
// instances, --query-compute-apps with the processes that use each GPU), or fails as it does
// when the driver is not loaded.
package hosttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GPU is one fake GPU.
type GPU struct {
	// Name defaults to "NVIDIA A100-SXM4-80GB", MemoryMiB to 81920.
	Name      string
	MemoryMiB int64
	// MIG are the profiles of its MIG instances ("1g.10gb"); MIG mode is on when it is set.
	MIG []string
	// MIGMode is what mig.mode.current says: by default "Enabled" when MIG is set, else
	// "[N/A]" (a GPU without MIG support); set "Disabled" or "Enabled" for a MIG-capable GPU
	// with MIG off, or on without instances.
	MIGMode string
}

// Fake is what the fake nvidia-smi shows.
type Fake struct {
	GPUs []GPU
	// Fail, when set, is printed by every call, which then exits 9 as nvidia-smi does when it
	// cannot talk to the driver.
	Fail string
	// Log, when set, is a file every call appends its arguments to, one line a call.
	Log string
	// Apps are the processes that use the GPUs, as --query-compute-apps lists them.
	Apps []App
	// AppsDir, when set, is a folder of files that trials write while they run, each of lines
	// "GPU-uuid, pid" (AppLine): --query-compute-apps lists those of processes that still
	// exist too, as the real one lists the processes that hold a CUDA context.
	AppsDir string
}

// App is a process that uses a GPU.
type App struct {
	GPU int // the fake GPU's index
	PID int
}

// AppLine is a line of --query-compute-apps=gpu_uuid,pid --format=csv,noheader.
func AppLine(uuid string, pid int) string { return fmt.Sprintf("%s, %d\n", uuid, pid) }

// DriverNotLoaded is what nvidia-smi prints when the NVIDIA driver is not loaded.
const DriverNotLoaded = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."

// GPUs is a fake host with n whole A100 80GB GPUs.
func GPUs(n int) Fake {
	return Fake{GPUs: make([]GPU, n)}
}

// UUID is the UUID of fake GPU i.
func UUID(i int) string { return fmt.Sprintf("GPU-00000000-0000-4000-8000-%012d", i) }

// MIGUUID is the UUID of MIG instance j of fake GPU i.
func MIGUUID(i, j int) string { return fmt.Sprintf("MIG-00000000-0000-5000-8000-%06d%06d", i, j) }

// Query is what f's nvidia-smi prints for --query-gpu=index,uuid,name,memory.total,
// mig.mode.current --format=csv,noheader (with nounits: memory without " MiB").
func (f Fake) Query(nounits bool) string {
	var b strings.Builder
	for i, g := range f.GPUs {
		g = g.withDefaults()
		mem := fmt.Sprint(g.MemoryMiB)
		if !nounits {
			mem += " MiB"
		}
		fmt.Fprintf(&b, "%d, %s, %s, %s, %s\n", i, UUID(i), g.Name, mem, g.MIGMode)
	}
	return b.String()
}

// List is what f's nvidia-smi prints for -L.
func (f Fake) List() string {
	var b strings.Builder
	for i, g := range f.GPUs {
		g = g.withDefaults()
		fmt.Fprintf(&b, "GPU %d: %s (UUID: %s)\n", i, g.Name, UUID(i))
		if g.MIGMode != "Enabled" {
			continue
		}
		for j, p := range g.MIG {
			fmt.Fprintf(&b, "  MIG %-13s Device %2d: (UUID: %s)\n", p, j, MIGUUID(i, j))
		}
	}
	return b.String()
}

func (g GPU) withDefaults() GPU {
	if g.Name == "" {
		g.Name = "NVIDIA A100-SXM4-80GB"
	}
	if g.MemoryMiB == 0 {
		g.MemoryMiB = 81920
	}
	if g.MIGMode == "" {
		g.MIGMode = "[N/A]"
		if len(g.MIG) > 0 {
			g.MIGMode = "Enabled"
		}
	}
	return g
}

// ComputeApps is what f's nvidia-smi prints for --query-compute-apps=gpu_uuid,pid
// --format=csv,noheader, less the processes of AppsDir.
func (f Fake) ComputeApps() string {
	var b strings.Builder
	for _, a := range f.Apps {
		b.WriteString(AppLine(UUID(a.GPU), a.PID))
	}
	return b.String()
}

// NvidiaSMI writes an nvidia-smi program that answers as f says into a new temporary folder,
// and returns the folder (to put first on PATH) .
func NvidiaSMI(t testing.TB, f Fake) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(f.Script()), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Script is the text of f's nvidia-smi program (a POSIX shell script).
func (f Fake) Script() string {
	var s strings.Builder
	s.WriteString("#!/bin/sh\n# A fake nvidia-smi written by jikken's host/hosttest.\n")
	if f.Log != "" {
		fmt.Fprintf(&s, "echo \"$*\" >> %s\n", shellQuote(f.Log))
	}
	if f.Fail != "" {
		fmt.Fprintf(&s, "printf '%%s\\n' %s\nexit 9\n", shellQuote(f.Fail))
	} else {
		fmt.Fprintf(&s, `case " $* " in
*" -L "*) printf '%%s' %s ;;
*" --query-gpu=index,uuid,name,memory.total,mig.mode.current "*)
  case "$*" in
  *nounits*) printf '%%s' %s ;;
  *) printf '%%s' %s ;;
  esac ;;
*" --query-compute-apps=gpu_uuid,pid "*)
  printf '%%s' %s
  %s ;;
*) echo "fake nvidia-smi: arguments not supported: $*" >&2; exit 2 ;;
esac
`, shellQuote(f.List()), shellQuote(f.Query(true)), shellQuote(f.Query(false)), shellQuote(f.ComputeApps()), f.dynamicApps())
	}
	return s.String()
}

// OnPath puts an nvidia-smi that answers as f says first on PATH for the rest of the test, and
// returns its folder.
func OnPath(t testing.TB, f Fake) string {
	t.Helper()
	dir := NvidiaSMI(t, f)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// dynamicApps is the shell that lists the live processes of AppsDir's files.
func (f Fake) dynamicApps() string {
	if f.AppsDir == "" {
		return ":"
	}
	return fmt.Sprintf(`cat %s/* 2>/dev/null | while IFS=', ' read -r uuid pid; do [ -d "/proc/$pid" ] && echo "$uuid, $pid"; done; :`, shellQuote(f.AppsDir))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

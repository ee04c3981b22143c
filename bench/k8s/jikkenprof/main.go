// Command jikkenprof is jikken with a memory recorder, which BenchmarkJikkenRun builds instead of
// jikken when JIKKEN_BENCH_PROFILE names a folder: each time the process's resident memory
// passes its last recorded peak by 10 MB, it writes there a heap profile (heap.pprof) and the
// runtime's figures (peak.txt: resident memory, live heap, goroutine stacks, goroutines).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/internal/cli"
)

func main() {
	if dir := os.Getenv("JIKKEN_PROFILE_DIR"); dir != "" {
		go record(dir)
	}
	os.Exit(cli.Main())
}

// record samples the resident memory every 100 ms and writes the profile and figures of each
// new peak.
func record(dir string) {
	var peak uint64
	for range time.Tick(100 * time.Millisecond) {
		rss := residentKB() << 10
		if rss < peak+10<<20 {
			continue
		}
		peak = rss
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		txt := fmt.Sprintf("rss %d MB\nheap in use %d MB\nheap alloc %d MB\nheap idle not released %d MB\nstacks %d MB\nsys %d MB\ngoroutines %d\ngc cycles %d\nnext gc %d MB\n",
			rss>>20, ms.HeapInuse>>20, ms.HeapAlloc>>20, (ms.HeapIdle-ms.HeapReleased)>>20, ms.StackInuse>>20, ms.Sys>>20,
			runtime.NumGoroutine(), ms.NumGC, ms.NextGC>>20)
		_ = os.WriteFile(filepath.Join(dir, "peak.txt"), []byte(txt), 0o644)
		if f, err := os.Create(filepath.Join(dir, "heap.pprof")); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
}

// residentKB reads VmRSS from /proc/self/status (0 where there is none).
func residentKB() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb
			}
		}
	}
	return 0
}

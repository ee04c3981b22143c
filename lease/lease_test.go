package lease

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSharesAddUpToOneDevice(t *testing.T) {
	b := Book{Dir: t.TempDir()}
	r1, busy, err := b.Take([]string{"GPU-a"}, []int{500}, Holder{Run: "r", Trial: "x", Attempt: 1})
	if err != nil || busy != nil {
		t.Fatal(err, busy)
	}
	if _, busy, _ := b.Take([]string{"GPU-a"}, []int{500}, Holder{Run: "r", Trial: "y", Attempt: 1}); busy != nil {
		t.Fatalf("a second half was refused: %v", busy)
	}
	if _, busy, _ := b.Take([]string{"GPU-b", "GPU-a"}, []int{1000, 250}, Holder{Run: "r", Trial: "z", Attempt: 1}); len(busy) != 1 || busy[0] != "GPU-a" {
		t.Fatalf("a full device was given out: busy %v", busy)
	}
	// All or nothing: GPU-b was not taken by the refused lease.
	if _, busy, _ := b.Take([]string{"GPU-b"}, []int{1000}, Holder{Run: "r", Trial: "w", Attempt: 1}); busy != nil {
		t.Fatalf("a refused lease kept GPU-b: %v", busy)
	}
	if err := r1(); err != nil {
		t.Fatal(err)
	}
	if _, busy, _ := b.Take([]string{"GPU-a"}, []int{500}, Holder{Run: "r", Trial: "v", Attempt: 1}); busy != nil {
		t.Fatalf("a released share was not given again: %v", busy)
	}
}

// Many takers at once never hold more than the device.
func TestConcurrentTakersNeverOverbook(t *testing.T) {
	b := Book{Dir: t.TempDir()}
	var held, peak atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				release, busy, err := b.Take([]string{"GPU-0"}, []int{500}, Holder{Run: "r", Trial: string(rune('a' + i)), Attempt: k + 1})
				if err != nil {
					t.Error(err)
					return
				}
				if busy != nil {
					continue
				}
				n := held.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(time.Millisecond)
				held.Add(-1)
				if err := release(); err != nil {
					t.Error(err)
				}
			}
		}(i)
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Fatalf("%d half shares of one device were held at once", peak.Load())
	}
}

// The lease of a runner that died expires with it.
func TestLeaseOfADeadRunnerExpires(t *testing.T) {
	if os.Getenv("LEASE_HOLDER_DIR") != "" {
		b := Book{Dir: os.Getenv("LEASE_HOLDER_DIR")}
		if _, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, Holder{Run: "dead", Trial: "t", Attempt: 1}); err != nil || busy != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLeaseOfADeadRunnerExpires$")
	cmd.Env = append(os.Environ(), "LEASE_HOLDER_DIR="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf), "held") {
		t.Fatalf("the holder did not take its lease: %q %v", buf, err)
	}
	b := Book{Dir: dir}
	if _, busy, _ := b.Take([]string{"GPU-0"}, []int{1000}, Holder{Run: "live", Trial: "t", Attempt: 1}); busy == nil {
		t.Fatal("a device another process holds was given out")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, busy, err := b.Take([]string{"GPU-0"}, []int{1000}, Holder{Run: "live", Trial: "t", Attempt: 1}); err != nil || busy != nil {
		t.Fatalf("the lease of a dead runner still holds the device: %v %v", busy, err)
	}
}

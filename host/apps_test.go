package host_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/jikken-dev/jikken/host"
	"github.com/jikken-dev/jikken/host/hosttest"
)

// The processes that use each GPU, from the fake's fixed list and from the files trials write
// while their process lives.
func TestComputeApps(t *testing.T) {
	f := hosttest.GPUs(4)
	f.Apps = []hosttest.App{{GPU: 2, PID: 4242}, {GPU: 2, PID: 4343}}
	f.AppsDir = t.TempDir()
	me := os.Getpid()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(f.AppsDir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("live", hosttest.AppLine(hosttest.UUID(0), me))
	write("gone", hosttest.AppLine(hosttest.UUID(1), 1<<22+1)) // above pid_max: no such process
	hosttest.OnPath(t, f)
	apps, err := host.ComputeApps(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{hosttest.UUID(2): {4242, 4343}, hosttest.UUID(0): {me}}
	if !reflect.DeepEqual(apps, want) {
		t.Fatalf("compute apps = %v, want %v", apps, want)
	}
}

func TestComputeAppsWithoutNvidiaSMI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if apps, err := host.ComputeApps(context.Background(), ""); err != nil || len(apps) != 0 {
		t.Fatalf("no nvidia-smi: %v %v", apps, err)
	}
}

func TestComputeAppsMalformed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\necho 'GPU-x, '"+strconv.Quote("y")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := host.ComputeApps(context.Background(), filepath.Join(dir, "nvidia-smi")); err == nil {
		t.Fatal("a line without a pid was read")
	}
}

package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Start starts cmd inside the group, so that the attempt's first process is already in it when
// it runs the trial's command: nothing it does escapes the limits, and everything it starts is
// found by Procs.
//
// On v2 the kernel places the child as it creates it (clone3 with CLONE_INTO_CGROUP). v1 has
// no such call; there a new thread moves itself into the group and forks the child from there
// (Go forks on the calling thread, as SysProcAttr.Pdeathsig's documentation says), then ends,
// so neither the runner nor a wrapper process is moved and the trial's argv and exit status
// are its own.
func (g *Group) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if g.v2 {
		d := g.dir("v2")
		fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open cgroup %s: %w", d, err)
		}
		defer unix.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return cmd.Start()
	}
	var err error
	onThrowawayThread(func() {
		tid := strconv.Itoa(unix.Gettid())
		for _, d := range g.Dirs() {
			if err = writeFile(filepath.Join(d, "tasks"), tid); err != nil {
				err = fmt.Errorf("enter cgroup %s: %w", d, err)
				return
			}
		}
		err = cmd.Start()
	})
	return err
}

// onThrowawayThread runs f on an OS thread of its own that ends with it, so whatever f does to
// the thread (such as moving it to another cgroup) leaves the rest of the process alone.
func onThrowawayThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == os.Getpid() {
			// The main thread never ends. While this goroutine holds it, another goroutine
			// gets another thread.
			onThrowawayThread(f)
			runtime.UnlockOSThread()
			close(done)
			return
		}
		defer close(done)
		f()
		// No UnlockOSThread: the runtime ends a thread whose locked goroutine returns.
	}()
	<-done
}

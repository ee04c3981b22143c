//go:build unix

package lease

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// self names this process.
func self() proc { return proc{PID: os.Getpid(), Start: startTime(os.Getpid())} }

// alive reports whether the process p still runs.
func (p proc) alive() bool {
	if p.PID <= 0 || syscall.Kill(p.PID, 0) == syscall.ESRCH {
		return false
	}
	return p.Start == 0 || startTime(p.PID) == p.Start
}

// groupAlive reports whether the process group that p leads still has a process. While its
// leader runs, the leader says (its start time tells a reused pid apart); once the leader has
// gone, the group lives while any member does: the kernel reuses no pid that still names a
// process group. Another user's group answers EPERM, which says it exists.
func (p proc) groupAlive() bool {
	if p.PID <= 1 {
		return false
	}
	if s := startTime(p.PID); s != 0 && p.Start != 0 {
		if s != p.Start {
			return false // the pid is another process's now: the group has ended
		}
		return true
	}
	return syscall.Kill(-p.PID, 0) != syscall.ESRCH
}

// belongs reports whether process pid is, or descends from, or shares the process group or
// session of, group (a lease's process group leader).
func belongs(pid, group int) bool {
	if group <= 1 {
		return false
	}
	for range 64 {
		if pid <= 1 {
			return false
		}
		if pid == group {
			return true
		}
		st, ok := stat(pid)
		if !ok {
			return false
		}
		if st.pgrp == group || st.session == group {
			return true
		}
		pid = st.ppid
	}
	return false
}

// openLock opens the lock file p, made by whoever came first: read-only, which is all flock
// needs, so another user's file will do. It is opened without O_CREAT when it exists, as
// fs.protected_regular refuses O_CREAT on another user's file in a sticky folder.
func openLock(p string) (*os.File, error) {
	for {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			f, err = os.OpenFile(p, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}

// openHold makes the hold file p of a lease and takes a shared lock on it, kept while this
// open file (or a copy a child inherited) stays open.
func openHold(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o444)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// held reports whether some process holds the lock of hold file p.
func held(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

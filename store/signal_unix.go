//go:build unix

package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

func signalZero(p *os.Process) error {
	// A killed runner whose parent has not reaped it yet still answers signal 0.
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid)); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return os.ErrProcessDone
		}
	}
	err := p.Signal(syscall.Signal(0))
	if errors.Is(err, syscall.EPERM) {
		return nil // alive, owned by someone else
	}
	return err
}

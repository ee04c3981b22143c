//go:build unix && !linux

package cgroup

import (
	"errors"
	"os/exec"
)

// Start starts cmd inside the group: only Linux has cgroups.
func (g *Group) Start(cmd *exec.Cmd) error {
	return errors.New("cgroups exist only on Linux")
}

//go:build unix && !linux

package local

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
)

// processes lists the live processes of this machine with ps (there is no /proc), with the
// attempt each belongs to when its environment says: BSD ps prints a process's environment
// after its command with -E, for the processes of the same user.
func (b *Backend) processes() ([]proc, error) {
	out, err := exec.Command("ps", "-A", "-E", "-ww", "-o", "pid=,pgid=,sess=,stat=,command=").Output()
	if err != nil {
		return nil, err
	}
	var procs []proc
	for _, line := range bytes.Split(out, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 5 || strings.HasPrefix(f[3], "Z") {
			continue
		}
		var pr proc
		pr.pid, _ = strconv.Atoi(f[0])
		pr.pgrp, _ = strconv.Atoi(f[1])
		pr.sid, _ = strconv.Atoi(f[2])
		for _, w := range f[4:] {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				continue
			}
			switch k {
			case "JIKKEN_RUN_ID":
				pr.run = v
			case "JIKKEN_TRIAL":
				pr.trial = v
			case "JIKKEN_ATTEMPT":
				pr.attempt, _ = strconv.Atoi(v)
			}
		}
		if pr.pid > 0 {
			procs = append(procs, pr)
		}
	}
	return procs, nil
}

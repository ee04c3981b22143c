package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// processes lists the live processes of this machine from /proc, with the attempt each belongs
// to when its environment says. Zombies are not live.
func (b *Backend) processes() ([]proc, error) {
	root := b.ProcRoot
	if root == "" {
		root = "/proc"
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pr, ok := readProc(filepath.Join(root, e.Name()), pid)
		if ok {
			out = append(out, pr)
		}
	}
	return out, nil
}

func readProc(dir string, pid int) (proc, bool) {
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return proc{}, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, false
	}
	// After the command: state ppid pgrp session ...
	f := bytes.Fields(stat[i+1:])
	if len(f) < 4 || string(f[0]) == "Z" || string(f[0]) == "X" {
		return proc{}, false
	}
	pr := proc{pid: pid}
	pr.pgrp, _ = strconv.Atoi(string(f[2]))
	pr.sid, _ = strconv.Atoi(string(f[3]))
	env, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err == nil {
		pr.run, pr.trial, pr.attempt = attemptOf(env)
	}
	return pr, true
}

// attemptOf reads the run, trial and attempt from a NUL-separated environment.
func attemptOf(env []byte) (run, trial string, attempt int) {
	for len(env) > 0 {
		kv := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			kv, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		k, v, ok := bytes.Cut(kv, []byte("="))
		if !ok || !bytes.HasPrefix(k, []byte("JIKKEN_")) {
			continue
		}
		switch string(k) {
		case "JIKKEN_RUN_ID":
			run = string(v)
		case "JIKKEN_TRIAL":
			trial = string(v)
		case "JIKKEN_ATTEMPT":
			attempt, _ = strconv.Atoi(string(v))
		}
	}
	return run, trial, attempt
}

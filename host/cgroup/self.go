package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Self is where a process sits in this machine's cgroup hierarchies, as its /proc/self/cgroup
// and /proc/self/mountinfo say. Directories are paths on this filesystem.
type Self struct {
	// V2 is the process's cgroup v2 directory and V2Mount the mount point of the v2 hierarchy;
	// both are empty when no v2 hierarchy is mounted where the process can see its group.
	V2, V2Mount string
	// V1 maps a cgroup v1 controller ("memory", "cpu", "cpuset", ...) to the process's directory
	// in that controller's hierarchy, and V1Mount to the hierarchy's mount point.
	V1, V1Mount map[string]string
}

// ReadSelf reads where the calling process sits, from root/proc/self (root is "/" but for
// tests, which point it at a fake tree; the mount points found are then under root too).
func ReadSelf(root string) (*Self, error) {
	if root == "" {
		root = "/"
	}
	mi, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("read the mount table: %w", err)
	}
	pc, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil, fmt.Errorf("read the process's cgroups: %w", err)
	}
	return resolve(root, parseMountinfo(mi), parseProcCgroup(pc)), nil
}

// mount is one cgroup filesystem mount from mountinfo.
type mount struct {
	root, point string // the hierarchy's path mounted, and where
	v2          bool
	options     []string // superblock options: the controllers of a v1 hierarchy
}

// parseMountinfo keeps the cgroup and cgroup2 mounts of a mountinfo file (proc(5)): ID, parent
// ID, major:minor, root, mount point, options, optional fields, "-", type, source, superblock
// options.
func parseMountinfo(data []byte) []mount {
	var out []mount
	for line := range bytes.Lines(data) {
		f := strings.Fields(string(line))
		sep := -1
		for i, w := range f {
			if w == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(f) {
			continue
		}
		fstype := f[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		out = append(out, mount{
			root:    unescapeMount(f[3]),
			point:   unescapeMount(f[4]),
			v2:      fstype == "cgroup2",
			options: strings.Split(f[sep+3], ","),
		})
	}
	return out
}

// unescapeMount undoes the octal escapes (\040 for a space) mountinfo writes in paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// membership is one line of /proc/self/cgroup: hierarchy id, controllers, path.
type membership struct {
	v2          bool
	controllers []string
	path        string
}

func parseProcCgroup(data []byte) []membership {
	var out []membership
	for line := range bytes.Lines(data) {
		id, rest, ok := strings.Cut(strings.TrimRight(string(line), "\n"), ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		// A group outside the process's cgroup namespace shows as "/../..": not reachable.
		if !ok || !strings.HasPrefix(path, "/") || slices.Contains(strings.Split(path, "/"), "..") {
			continue
		}
		m := membership{path: path}
		if id == "0" && ctrls == "" {
			m.v2 = true
		} else {
			m.controllers = strings.Split(ctrls, ",")
		}
		out = append(out, m)
	}
	return out
}

// resolve joins memberships to mounts: the process's directory in a hierarchy is the mount
// point plus its path below the mounted root (a container may see only its own subtree).
func resolve(root string, mounts []mount, ms []membership) *Self {
	s := &Self{V1: map[string]string{}, V1Mount: map[string]string{}}
	dirOf := func(m mount, path string) (string, bool) {
		rel, ok := strings.CutPrefix(path, m.root)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/") && m.root != "/") {
			return "", false
		}
		return filepath.Join(root, m.point, rel), true
	}
	for _, mb := range ms {
		for _, m := range mounts {
			if mb.v2 != m.v2 {
				continue
			}
			if mb.v2 {
				if s.V2 != "" {
					break
				}
				if d, ok := dirOf(m, mb.path); ok {
					s.V2, s.V2Mount = d, filepath.Join(root, m.point)
				}
				continue
			}
			if !sameControllers(mb.controllers, m.options) {
				continue
			}
			d, ok := dirOf(m, mb.path)
			if !ok {
				continue
			}
			for _, c := range mb.controllers {
				if _, done := s.V1[c]; !done {
					s.V1[c], s.V1Mount[c] = d, filepath.Join(root, m.point)
				}
			}
		}
	}
	return s
}

// sameControllers reports whether a v1 mount's options name every controller of a membership
// line ("cpu,cpuacct" is mounted with options "rw,cpu,cpuacct").
func sameControllers(ctrls, options []string) bool {
	for _, c := range ctrls {
		found := false
		for _, o := range options {
			if o == c {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return len(ctrls) > 0
}

// ancestors lists dir and its parents up to the mount point, nearest first.
func ancestors(dir, mountPoint string) []string {
	out := []string{dir}
	for dir != mountPoint && strings.HasPrefix(dir, mountPoint+"/") {
		dir = filepath.Dir(dir)
		out = append(out, dir)
	}
	return out
}

func readTrim(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// CPUQuota is the lowest CPU quota set on the process's group or its parents, in cores, and
// where it was read; ok is false when none is set (or the hierarchy cannot be read).
func (s *Self) CPUQuota() (cores float64, where string, ok bool) {
	best := math.Inf(1)
	consider := func(c float64, w string) {
		if c > 0 && c < best {
			best, where = c, w
		}
	}
	switch {
	case s.V1["cpu"] != "":
		for _, d := range ancestors(s.V1["cpu"], s.V1Mount["cpu"]) {
			q, err1 := readTrim(filepath.Join(d, "cpu.cfs_quota_us"))
			p, err2 := readTrim(filepath.Join(d, "cpu.cfs_period_us"))
			if err1 != nil || err2 != nil {
				continue
			}
			if c, ok := quotaCores(q, p); ok {
				consider(c, fmt.Sprintf("cgroup v1 quota %s/%s µs (%s)", q, p, d))
			}
		}
	case s.V2 != "":
		for _, d := range ancestors(s.V2, s.V2Mount) {
			v, err := readTrim(filepath.Join(d, "cpu.max"))
			if err != nil {
				continue
			}
			q, p, _ := strings.Cut(v, " ")
			if c, ok := quotaCores(q, p); ok {
				consider(c, fmt.Sprintf("cgroup v2 cpu.max %s (%s)", v, d))
			}
		}
	}
	if math.IsInf(best, 1) {
		return 0, "", false
	}
	return best, where, true
}

// quotaCores reads a quota and a period in microseconds as cores; "max" and -1 are no quota.
func quotaCores(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return float64(q) / float64(p), true
}

// CPUSet is the number of CPUs the process's cpuset allows, and where it was read.
func (s *Self) CPUSet() (n int, where string, ok bool) {
	var files []string
	switch {
	case s.V1["cpuset"] != "":
		files = []string{filepath.Join(s.V1["cpuset"], "cpuset.effective_cpus"), filepath.Join(s.V1["cpuset"], "cpuset.cpus")}
	case s.V2 != "":
		files = []string{filepath.Join(s.V2, "cpuset.cpus.effective")}
	}
	for _, f := range files {
		v, err := readTrim(f)
		if err != nil || v == "" {
			continue
		}
		if n, err := CountCPUList(v); err == nil && n > 0 {
			return n, fmt.Sprintf("cpuset %s (%s)", v, f), true
		}
	}
	return 0, "", false
}

// CountCPUList counts the CPUs of a kernel CPU list ("0-3,8,10-11").
func CountCPUList(s string) (int, error) {
	n := 0
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("cpu list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		if b-a >= 1<<20 {
			return 0, fmt.Errorf("cpu list %q: range %q is too large", s, part)
		}
		n += b - a + 1
	}
	return n, nil
}

// MemoryLimit is the lowest memory limit set on the process's group or its parents, in bytes,
// and where it was read; ok is false when none is set.
func (s *Self) MemoryLimit() (bytes int64, where string, ok bool) {
	best := int64(math.MaxInt64)
	var dirs []string
	file, label := "", ""
	switch {
	case s.V1["memory"] != "":
		dirs, file, label = ancestors(s.V1["memory"], s.V1Mount["memory"]), "memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes"
	case s.V2 != "":
		dirs, file, label = ancestors(s.V2, s.V2Mount), "memory.max", "cgroup v2 memory.max"
	}
	for _, d := range dirs {
		v, err := readTrim(filepath.Join(d, file))
		if err != nil || v == "max" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		// v1 writes "no limit" as the largest page-aligned value.
		if err != nil || n <= 0 || n >= math.MaxInt64-(1<<20) {
			continue
		}
		if n < best {
			best, where = n, fmt.Sprintf("%s %d (%s)", label, n, d)
		}
	}
	if best == math.MaxInt64 {
		return 0, "", false
	}
	return best, where, true
}

// isNotExist reports whether err says a file or directory is gone.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

//go:build unix

package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Real /proc/self files, as this project's machines and common hosts have them.
const (
	// A hybrid host (this project's CI machine kind): v1 controllers, an empty v2 hierarchy.
	hybridMountinfo = `27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	hybridCgroup = `9:name=systemd:/
8:pids:/
4:memory:/process_api/4f55bee5d4c9bc198a7537aaaddfbb49
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`
	// Inside a Docker 20.10 container on that host: each hierarchy is mounted from the
	// container's own group.
	dockerMountinfo = `76 75 0:45 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755
77 76 0:29 /docker/bb4959d2675419b8 /sys/fs/cgroup/cpu ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu
79 76 0:31 /docker/bb4959d2675419b8 /sys/fs/cgroup/cpuset ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuset
80 76 0:32 /docker/bb4959d2675419b8 /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory
`
	dockerCgroup = `4:memory:/docker/bb4959d2675419b8
3:cpuset:/docker/bb4959d2675419b8
1:cpu:/docker/bb4959d2675419b8
0::/docker/bb4959d2675419b8
`
	// A systemd host with the unified hierarchy only, in a delegated user scope.
	unifiedMountinfo = `24 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	unifiedCgroup = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r42.scope\n"
	// An older systemd host with cpu and cpuacct mounted together, at a path with a space.
	comountMountinfo = `28 24 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct
29 24 0:26 / /sys/fs/cgroup/my\040memory rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,memory
`
	comountCgroup = `5:memory:/user.slice
3:cpu,cpuacct:/user.slice/user-1000.slice
`
)

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		name, mountinfo, cgroup string
		want                    Self
	}{
		{"hybrid", hybridMountinfo, hybridCgroup, Self{
			V2: "/sys/fs/cgroup/unified", V2Mount: "/sys/fs/cgroup/unified",
			V1: map[string]string{
				"name=systemd": "/sys/fs/cgroup/systemd", "pids": "/sys/fs/cgroup/pids",
				"memory": "/sys/fs/cgroup/memory/process_api/4f55bee5d4c9bc198a7537aaaddfbb49",
				"cpuset": "/sys/fs/cgroup/cpuset", "cpuacct": "/sys/fs/cgroup/cpuacct", "cpu": "/sys/fs/cgroup/cpu",
			},
			V1Mount: map[string]string{
				"name=systemd": "/sys/fs/cgroup/systemd", "pids": "/sys/fs/cgroup/pids", "memory": "/sys/fs/cgroup/memory",
				"cpuset": "/sys/fs/cgroup/cpuset", "cpuacct": "/sys/fs/cgroup/cpuacct", "cpu": "/sys/fs/cgroup/cpu",
			},
		}},
		{"docker", dockerMountinfo, dockerCgroup, Self{
			V1:      map[string]string{"memory": "/sys/fs/cgroup/memory", "cpuset": "/sys/fs/cgroup/cpuset", "cpu": "/sys/fs/cgroup/cpu"},
			V1Mount: map[string]string{"memory": "/sys/fs/cgroup/memory", "cpuset": "/sys/fs/cgroup/cpuset", "cpu": "/sys/fs/cgroup/cpu"},
		}},
		{"unified", unifiedMountinfo, unifiedCgroup, Self{
			V2:      "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r42.scope",
			V2Mount: "/sys/fs/cgroup", V1: map[string]string{}, V1Mount: map[string]string{},
		}},
		{"co-mounted", comountMountinfo, comountCgroup, Self{
			V1: map[string]string{
				"memory": "/sys/fs/cgroup/my memory/user.slice",
				"cpu":    "/sys/fs/cgroup/cpu,cpuacct/user.slice/user-1000.slice", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/user.slice/user-1000.slice",
			},
			V1Mount: map[string]string{"memory": "/sys/fs/cgroup/my memory", "cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct"},
		}},
		{"group outside the mounted subtree", dockerMountinfo, "4:memory:/elsewhere\n", Self{V1: map[string]string{}, V1Mount: map[string]string{}}},
		{"group outside the namespace", unifiedMountinfo, "0::/../../other.scope\n", Self{}},
		{"prefix is not a parent", dockerMountinfo, "4:memory:/docker/bb4959d2675419b8ff\n", Self{V1: map[string]string{}, V1Mount: map[string]string{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := resolve("/", parseMountinfo([]byte(c.mountinfo)), parseProcCgroup([]byte(c.cgroup)))
			if c.want.V1 == nil {
				c.want.V1, c.want.V1Mount = map[string]string{}, map[string]string{}
			}
			if diff := cmp.Diff(&c.want, got); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		bad  bool
	}{
		{"0-1", 2, false}, {"0", 1, false}, {"0-3,8,10-11\n", 7, false}, {"5-5", 1, false},
		{"", 0, true}, {"3-1", 0, true}, {"a", 0, true}, {"0,,1", 0, true}, {"-1", 0, true}, {"0-99999999", 0, true},
	} {
		got, err := CountCPUList(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("CountCPUList(%q) = %d, %v; want %d (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// fakeTree writes files under a temporary root: path -> content.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLimitsV1(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/mountinfo": hybridMountinfo,
		"proc/self/cgroup":    strings.Replace(hybridCgroup, "1:cpu:/", "1:cpu:/batch/job", 1),
		// The parent's quota (1.5 cores) is lower than the group's own (3 cores).
		"sys/fs/cgroup/cpu/cpu.cfs_quota_us":            "-1\n",
		"sys/fs/cgroup/cpu/cpu.cfs_period_us":           "100000\n",
		"sys/fs/cgroup/cpu/batch/cpu.cfs_quota_us":      "75000\n",
		"sys/fs/cgroup/cpu/batch/cpu.cfs_period_us":     "50000\n",
		"sys/fs/cgroup/cpu/batch/job/cpu.cfs_quota_us":  "300000\n",
		"sys/fs/cgroup/cpu/batch/job/cpu.cfs_period_us": "100000\n",
		"sys/fs/cgroup/cpuset/cpuset.effective_cpus":    "0-2\n",
		// No limit on the group; 2 GiB on its parent; the root's "unlimited" value.
		"sys/fs/cgroup/memory/memory.limit_in_bytes":                                              "9223372036854771712\n",
		"sys/fs/cgroup/memory/process_api/memory.limit_in_bytes":                                  "2147483648\n",
		"sys/fs/cgroup/memory/process_api/4f55bee5d4c9bc198a7537aaaddfbb49/memory.limit_in_bytes": "9223372036854771712\n",
	})
	s, err := ReadSelf(root)
	if err != nil {
		t.Fatal(err)
	}
	if c, where, ok := s.CPUQuota(); !ok || c != 1.5 || !strings.Contains(where, "cgroup v1 quota 75000/50000") {
		t.Errorf("CPUQuota = %v, %q, %v; want 1.5 from the parent's quota", c, where, ok)
	}
	if n, where, ok := s.CPUSet(); !ok || n != 3 || !strings.Contains(where, "0-2") {
		t.Errorf("CPUSet = %d, %q, %v; want 3", n, where, ok)
	}
	if m, where, ok := s.MemoryLimit(); !ok || m != 2<<30 || !strings.Contains(where, "process_api (") && !strings.HasSuffix(where, "process_api)") {
		t.Errorf("MemoryLimit = %d, %q, %v; want 2 GiB from the parent", m, where, ok)
	}
}

func TestLimitsV2(t *testing.T) {
	scope := "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r42.scope/"
	root := fakeTree(t, map[string]string{
		"proc/self/mountinfo":                                 unifiedMountinfo,
		"proc/self/cgroup":                                    unifiedCgroup,
		"sys/fs/cgroup/user.slice/cpu.max":                    "max 100000\n",
		"sys/fs/cgroup/user.slice/memory.max":                 "max\n",
		scope + "cpu.max":                                     "50000 100000\n",
		scope + "memory.max":                                  "536870912\n",
		scope + "cpuset.cpus.effective":                       "0-7\n",
		"sys/fs/cgroup/user.slice/user-1000.slice/memory.max": "1073741824\n",
	})
	s, err := ReadSelf(root)
	if err != nil {
		t.Fatal(err)
	}
	if c, where, ok := s.CPUQuota(); !ok || c != 0.5 || !strings.Contains(where, "cpu.max 50000 100000") {
		t.Errorf("CPUQuota = %v, %q, %v; want 0.5", c, where, ok)
	}
	if n, _, ok := s.CPUSet(); !ok || n != 8 {
		t.Errorf("CPUSet = %d, %v; want 8", n, ok)
	}
	if m, _, ok := s.MemoryLimit(); !ok || m != 512<<20 {
		t.Errorf("MemoryLimit = %d, %v; want 512 MiB", m, ok)
	}
}

func TestNoLimits(t *testing.T) {
	root := fakeTree(t, map[string]string{
		"proc/self/mountinfo":                                    hybridMountinfo,
		"proc/self/cgroup":                                       hybridCgroup,
		"sys/fs/cgroup/cpu/cpu.cfs_quota_us":                     "-1\n",
		"sys/fs/cgroup/cpu/cpu.cfs_period_us":                    "100000\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":             "9223372036854771712\n",
		"sys/fs/cgroup/memory/process_api/memory.limit_in_bytes": "garbage\n",
	})
	s, err := ReadSelf(root)
	if err != nil {
		t.Fatal(err)
	}
	if c, _, ok := s.CPUQuota(); ok {
		t.Errorf("CPUQuota = %v, want none", c)
	}
	if m, _, ok := s.MemoryLimit(); ok {
		t.Errorf("MemoryLimit = %v, want none", m)
	}
	if n, _, ok := s.CPUSet(); ok {
		t.Errorf("CPUSet = %v, want none (no cpuset files)", n)
	}
}

func TestReadSelfMissing(t *testing.T) {
	if _, err := ReadSelf(t.TempDir()); err == nil || !strings.Contains(err.Error(), "mount table") {
		t.Errorf("ReadSelf of an empty root: %v, want an error naming the mount table", err)
	}
}

func TestEscape(t *testing.T) {
	for _, s := range []string{"train-lr0.1-s3", "20260101-120000-ab12", ".hidden", "a/b", "x y%z", "日本", "..", "a@2", ""} {
		e := escape(s)
		if strings.ContainsAny(e, "/ @") || e == "." || e == ".." || strings.HasPrefix(e, ".") {
			t.Errorf("escape(%q) = %q: not a safe directory name", s, e)
		}
		if back, ok := unescape(e); !ok || back != s {
			t.Errorf("unescape(escape(%q)) = %q, %v", s, back, ok)
		}
	}
	if escape("train-lr0.1-s3") != "train-lr0.1-s3" {
		t.Errorf("a plain trial name is changed: %q", escape("train-lr0.1-s3"))
	}
}

func TestParseLeaf(t *testing.T) {
	for _, c := range []struct {
		in      string
		trial   string
		attempt int
		ok      bool
	}{
		{"train@1", "train", 1, true}, {"a%40b@12", "a@b", 12, true}, {"x@", "", 0, false}, {"@3", "", 0, false},
		{"x@-1", "", 0, false}, {"x", "", 0, false}, {"bad%zz@1", "", 0, false}, {"x@1@2", "x@1", 2, true},
	} {
		trial, n, ok := parseLeaf(c.in)
		if trial != c.trial || n != c.attempt || ok != c.ok {
			t.Errorf("parseLeaf(%q) = %q, %d, %v; want %q, %d, %v", c.in, trial, n, ok, c.trial, c.attempt, c.ok)
		}
	}
}

func TestQuota(t *testing.T) {
	for _, c := range []struct {
		cpu  float64
		want int64
	}{{2, 200000}, {0.5, 50000}, {1.25, 125000}, {0.001, 1000}, {64, 6400000}} {
		if got := Quota(c.cpu); got != c.want {
			t.Errorf("Quota(%v) = %d, want %d", c.cpu, got, c.want)
		}
	}
}

func TestDetectFake(t *testing.T) {
	scope := "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r42.scope/"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // the manager's String, or the error's text
	}{
		{"hybrid", map[string]string{
			"proc/self/mountinfo":                      hybridMountinfo,
			"proc/self/cgroup":                         hybridCgroup,
			"sys/fs/cgroup/unified/cgroup.controllers": "\n",
			"sys/fs/cgroup/memory/process_api/4f55bee5d4c9bc198a7537aaaddfbb49/tasks": "",
			"sys/fs/cgroup/cpu/tasks": "",
		}, "cgroup v1 ({root}/sys/fs/cgroup/memory/process_api/4f55bee5d4c9bc198a7537aaaddfbb49/jikken, {root}/sys/fs/cgroup/cpu/jikken)"},
		{"delegated v2 scope", map[string]string{
			"proc/self/mountinfo":              unifiedMountinfo,
			"proc/self/cgroup":                 unifiedCgroup,
			"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
			scope + "cgroup.controllers":       "cpu memory pids\n",
			scope + "cgroup.procs":             "",
			scope + "cgroup.subtree_control":   "",
		}, "cgroup v2 ({root}/" + scope + "jikken)"},
		{"v2 scope shared with other processes", map[string]string{
			"proc/self/mountinfo":              unifiedMountinfo,
			"proc/self/cgroup":                 unifiedCgroup,
			"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
			scope + "cgroup.controllers":       "cpu memory pids\n",
			scope + "cgroup.procs":             "1234\n",
			scope + "cgroup.subtree_control":   "",
		}, "cgroups cannot be used here: this process's cgroup v2 group {root}/" + scope[:len(scope)-1] + " holds other processes too (pid 1234), so it cannot give controllers to groups below it; start jikken alone in a delegated group"},
		{"v2 controllers not delegated", map[string]string{
			"proc/self/mountinfo":              unifiedMountinfo,
			"proc/self/cgroup":                 unifiedCgroup,
			"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
			scope + "cgroup.controllers":       "pids\n",
		}, "cgroups cannot be used here: the memory and cpu controllers are not delegated to this process's cgroup v2 group {root}/" + scope[:len(scope)-1]},
		{"hybrid without v1 cpu", map[string]string{
			"proc/self/mountinfo":                      strings.Replace(hybridMountinfo, "rw,cpu\n", "rw,cpuish\n", 1),
			"proc/self/cgroup":                         hybridCgroup,
			"sys/fs/cgroup/unified/cgroup.controllers": "\n",
		}, "cgroups cannot be used here: the cgroup v2 hierarchy at {root}/sys/fs/cgroup/unified has no memory and cpu controllers (they are bound to cgroup v1); no cgroup v1 cpu hierarchy is mounted"},
		{"nothing mounted", map[string]string{
			"proc/self/mountinfo": "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n",
			"proc/self/cgroup":    "0::/\n",
		}, "cgroups cannot be used here: no cgroup filesystem is mounted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fakeTree(t, c.files)
			want := strings.ReplaceAll(c.want, "{root}", root)
			m, err := Detect(Options{Root: root})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = m.String()
			}
			if got != want {
				t.Errorf("Detect:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// The v2 limits are written as cgroup v2 names them; no swap accounting is not an error.
func TestLimitV2Files(t *testing.T) {
	dir := fakeTree(t, map[string]string{"memory.max": "max", "cpu.max": "max 100000"})
	m := &Manager{v2: true}
	if err := m.limit(&Group{v2: true, parts: []part{{"v2", dir}}}, Limits{CPU: 0.5, Memory: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"memory.max": "67108864", "cpu.max": "50000 100000"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
			t.Errorf("%s = %q, want %q", f, b, want)
		}
	}
}

func TestOOMKilledFiles(t *testing.T) {
	for _, c := range []struct {
		name    string
		v2      bool
		files   map[string]string
		sigkill bool
		want    bool
	}{
		{"v1 counted", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"}, false, true},
		{"v1 none", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", "memory.failcnt": "9"}, true, false},
		{"v1 old kernel, limit hit, killed", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n", "memory.failcnt": "12\n"}, true, true},
		{"v1 old kernel, limit hit, exited", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\n", "memory.failcnt": "12\n"}, false, false},
		{"v2 counted", true, map[string]string{"memory.events": "low 0\nhigh 0\nmax 31\noom 1\noom_kill 1\noom_group_kill 0\n"}, false, true},
		{"v2 none", true, map[string]string{"memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"}, true, false},
		{"no memory files", false, map[string]string{}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			kind := "memory"
			if c.v2 {
				kind = "v2"
			}
			g := &Group{v2: c.v2, parts: []part{{kind, fakeTree(t, c.files)}}}
			if got := g.OOMKilled(c.sigkill); got != c.want {
				t.Errorf("OOMKilled = %v, want %v", got, c.want)
			}
		})
	}
}

func FuzzParseMountinfo(f *testing.F) {
	for _, s := range []string{hybridMountinfo, dockerMountinfo, unifiedMountinfo, comountMountinfo, `1 2 0:1 / /a\04 - cgroup x rw`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range parseMountinfo([]byte(s)) {
			if !m.v2 && len(m.options) == 0 {
				t.Errorf("a v1 mount without options: %+v", m)
			}
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	for _, s := range []string{hybridCgroup, dockerCgroup, unifiedCgroup, comountCgroup, "0::/\n", "1:cpu:\n", "0::/../x\n"} {
		f.Add(s, hybridMountinfo)
	}
	f.Fuzz(func(t *testing.T, cg, mi string) {
		s := resolve("/r", parseMountinfo([]byte(mi)), parseProcCgroup([]byte(cg)))
		for c, d := range s.V1 {
			if !strings.HasPrefix(d, "/r") || !strings.HasPrefix(d, s.V1Mount[c]) {
				t.Errorf("controller %s: directory %q is not under its mount %q", c, d, s.V1Mount[c])
			}
		}
		if s.V2 != "" && !strings.HasPrefix(s.V2, "/r") || !strings.HasPrefix(s.V2, s.V2Mount) {
			t.Errorf("v2 directory %q is not under its mount %q", s.V2, s.V2Mount)
		}
	})
}

func FuzzCountCPUList(f *testing.F) {
	for _, s := range []string{"0-1", "0-3,8,10-11", "", "3-1", "1,2,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := CountCPUList(s)
		if err == nil && n <= 0 {
			t.Errorf("CountCPUList(%q) = %d without error", s, n)
		}
	})
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"train", "a/b", ".x", "%", "@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escape(s)
		if strings.ContainsAny(e, "/@\x00") || strings.HasPrefix(e, ".") {
			t.Errorf("escape(%q) = %q", s, e)
		}
		if back, ok := unescape(e); !ok || back != s {
			t.Errorf("unescape(escape(%q)) = %q", s, back)
		}
	})
}

// Where this process cannot make groups (its v2 group is not delegated), Lookup still finds
// those a runner made elsewhere, and makes none.
func TestLookupNotDelegated(t *testing.T) {
	other := "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r7.scope/jikken/run%201/train@2/"
	root := fakeTree(t, map[string]string{
		"proc/self/mountinfo":              unifiedMountinfo,
		"proc/self/cgroup":                 "0::/user.slice/user-1000.slice/session-3.scope\n",
		"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
		"sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/cgroup.controllers": "\n",
		other + "cgroup.procs":  "",
		other + "memory.events": "oom_kill 1\n",
	})
	if _, err := Detect(Options{Root: root}); err == nil {
		t.Fatal("Detect in a group without controllers succeeded")
	}
	m, err := Lookup(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	found, err := m.Find("run 1")
	if err != nil || len(found) != 1 || found[0].Trial != "train" || found[0].Attempt != 2 || !found[0].OOMKilled(false) {
		t.Errorf("Find = %+v, %v; want train@2 of run 1", found, err)
	}
	if _, err := m.Create("run 2", "x", 1, Limits{CPU: 1}); err == nil || !strings.Contains(err.Error(), "this process cannot make groups") {
		t.Errorf("Create with a Lookup manager: %v", err)
	}
	if _, err := Lookup(Options{Root: fakeTree(t, map[string]string{"proc/self/mountinfo": "", "proc/self/cgroup": ""})}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Lookup without cgroups: %v", err)
	}
}

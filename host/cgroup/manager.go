//go:build unix

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by the error of Detect when no cgroup can be made for trials here;
// the error's text says why.
var ErrUnavailable = errors.New("cgroups cannot be used here")

// Options say where Detect looks.
type Options struct {
	// Root is where /proc and the cgroup mounts are read: "/" unless a test points it at a fake
	// tree.
	Root string
	// Name is the directory the groups of attempts are made under, inside this process's own
	// group (default "jikken").
	Name string
}

// Limits are what a group enforces; a zero field is no limit.
type Limits struct {
	// CPU is in cores: a CFS quota of CPU periods per period.
	CPU float64
	// Memory is in bytes, with no swap beyond it.
	Memory int64
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l.CPU <= 0 && l.Memory <= 0 }

// cpuPeriod is the CFS period of the groups made (the kernel's default, 100ms).
const cpuPeriod = 100_000

// Quota is the CFS quota, in microseconds per cpuPeriod, that enforces cpu cores (at least the
// kernel's minimum of 1ms).
func Quota(cpu float64) int64 {
	return max(int64(math.Round(cpu*cpuPeriod)), 1000)
}

// Manager makes the groups of attempts, on one hierarchy: cgroup v2, or the v1 memory and cpu
// hierarchies. Its methods are safe for concurrent use.
type Manager struct {
	v2   bool
	name string
	// hiers are the hierarchies used: v2 one, v1 the memory then the cpu one.
	hiers []hier
	// placeOnly is a v2 hierarchy without controllers (tests): groups place and kill processes
	// but enforce no limits.
	placeOnly bool
	// lookupOnly is a manager of Lookup: it finds groups, it makes none.
	lookupOnly bool

	prepare    sync.Once
	prepareErr error
}

// hier is one hierarchy groups are made in.
type hier struct {
	// kind is the controller whose v1 hierarchy this is, "v2" for the unified one.
	kind string
	// base is the directory name/ is made in: this process's own group, so trials stay within
	// the limits it runs under. mount is the hierarchy's mount point, searched by Find.
	base, mount string
}

// Detect finds how groups can be made for trials here: in a delegated, writable cgroup v2
// subtree with the memory and cpu controllers, else in the cgroup v1 memory and cpu
// hierarchies where this process may write (as root). When neither can be used, the error
// wraps ErrUnavailable and says what is missing for each.
func Detect(o Options) (*Manager, error) {
	if o.Name == "" {
		o.Name = "jikken"
	}
	s, err := ReadSelf(o.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var why []string
	if s.V2 != "" {
		m, reason := detectV2(s, o.Name)
		if m != nil {
			return m, nil
		}
		why = append(why, reason)
	}
	if s.V1["memory"] != "" || s.V1["cpu"] != "" {
		m, reason := detectV1(s, o.Name)
		if m != nil {
			return m, nil
		}
		why = append(why, reason)
	}
	if len(why) == 0 {
		why = append(why, "no cgroup filesystem is mounted")
	}
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(why, "; "))
}

// Lookup is a manager that finds, stops and removes the groups of attempts (Find, and the
// groups' methods) where this process cannot make any: a 'jikken kill' run outside the
// delegated group its runner ran in. Its Create fails.
func Lookup(o Options) (*Manager, error) {
	if m, err := Detect(o); err == nil {
		return m, nil
	}
	if o.Name == "" {
		o.Name = "jikken"
	}
	s, err := ReadSelf(o.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	m := &Manager{name: o.Name, lookupOnly: true}
	root, _ := readTrim(filepath.Join(s.V2Mount, "cgroup.controllers"))
	switch r := strings.Fields(root); {
	case s.V2 != "" && slices.Contains(r, "memory") && slices.Contains(r, "cpu"):
		m.v2, m.hiers = true, []hier{{"v2", s.V2, s.V2Mount}}
	case s.V1["memory"] != "" && s.V1["cpu"] != "":
		m.hiers = []hier{{"memory", s.V1["memory"], s.V1Mount["memory"]}, {"cpu", s.V1["cpu"], s.V1Mount["cpu"]}}
	default:
		return nil, fmt.Errorf("%w: no hierarchy with the memory and cpu controllers is mounted", ErrUnavailable)
	}
	return m, nil
}

func detectV2(s *Self, name string) (*Manager, string) {
	ctrls, err := readTrim(filepath.Join(s.V2, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Sprintf("cgroup v2: read %s: %v", s.V2, err)
	}
	have := strings.Fields(ctrls)
	if !slices.Contains(have, "memory") || !slices.Contains(have, "cpu") {
		root, _ := readTrim(filepath.Join(s.V2Mount, "cgroup.controllers"))
		if r := strings.Fields(root); !slices.Contains(r, "memory") || !slices.Contains(r, "cpu") {
			return nil, fmt.Sprintf("the cgroup v2 hierarchy at %s has no memory and cpu controllers (they are bound to cgroup v1)", s.V2Mount)
		}
		return nil, fmt.Sprintf("the memory and cpu controllers are not delegated to this process's cgroup v2 group %s", s.V2)
	}
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control"} {
		if err := unix.Access(filepath.Join(s.V2, f), unix.W_OK); err != nil {
			return nil, fmt.Sprintf("this process's cgroup v2 group %s is not writable by uid %d (not delegated to it)", s.V2, os.Getuid())
		}
	}
	if s.V2 != s.V2Mount {
		sub, _ := readTrim(filepath.Join(s.V2, "cgroup.subtree_control"))
		enabled := strings.Fields(sub)
		if !slices.Contains(enabled, "memory") || !slices.Contains(enabled, "cpu") {
			if others := otherProcs(s.V2); len(others) > 0 {
				return nil, fmt.Sprintf("this process's cgroup v2 group %s holds other processes too (%s), so it cannot give controllers to groups below it; start jikken alone in a delegated group", s.V2, pidList(others))
			}
		}
	}
	return &Manager{v2: true, name: name, hiers: []hier{{"v2", s.V2, s.V2Mount}}}, ""
}

func detectV1(s *Self, name string) (*Manager, string) {
	mem, cpu := s.V1["memory"], s.V1["cpu"]
	if mem == "" || cpu == "" {
		missing := "memory"
		if mem != "" {
			missing = "cpu"
		}
		return nil, fmt.Sprintf("no cgroup v1 %s hierarchy is mounted", missing)
	}
	for _, d := range []string{mem, cpu} {
		for _, f := range []string{"", "tasks"} {
			if err := unix.Access(filepath.Join(d, f), unix.W_OK); err != nil {
				return nil, fmt.Sprintf("the cgroup v1 group %s is not writable by uid %d (cgroup v1 needs root)", d, os.Getuid())
			}
		}
	}
	return &Manager{name: name, hiers: []hier{{"memory", mem, s.V1Mount["memory"]}, {"cpu", cpu, s.V1Mount["cpu"]}}}, ""
}

// otherProcs lists the processes of group dir other than this one.
func otherProcs(dir string) []int {
	pids, _ := readPids(filepath.Join(dir, "cgroup.procs"))
	return slices.DeleteFunc(pids, func(p int) bool { return p == os.Getpid() })
}

func pidList(pids []int) string {
	s := make([]string, 0, min(len(pids), 5))
	for i, p := range pids {
		if i == 5 {
			s = append(s, "...")
			break
		}
		s = append(s, "pid "+strconv.Itoa(p))
	}
	return strings.Join(s, ", ")
}

// String says which hierarchy the manager uses and where.
func (m *Manager) String() string {
	if m.v2 {
		return "cgroup v2 (" + filepath.Join(m.hiers[0].base, m.name) + ")"
	}
	return "cgroup v1 (" + filepath.Join(m.hiers[0].base, m.name) + ", " + filepath.Join(m.hiers[1].base, m.name) + ")"
}

// V2 reports whether the manager uses cgroup v2.
func (m *Manager) V2() bool { return m.v2 }

// setup readies a v2 base once: its children get the memory and cpu controllers, which needs
// the base to hold no process, so this process moves to a leaf of its own (name.runner) first
// when it is the base's only one.
func (m *Manager) setup() error {
	if !m.v2 || m.placeOnly {
		return nil
	}
	m.prepare.Do(func() {
		base := m.hiers[0].base
		if err := enableControllers(base); err != nil {
			if !errors.Is(err, syscall.EBUSY) {
				m.prepareErr = err
				return
			}
			if others := otherProcs(base); len(others) > 0 {
				m.prepareErr = fmt.Errorf("cgroup v2 group %s holds other processes (%s): start jikken alone in a delegated group", base, pidList(others))
				return
			}
			leaf := filepath.Join(base, m.name+".runner")
			if err := os.Mkdir(leaf, 0o755); err != nil && !os.IsExist(err) {
				m.prepareErr = fmt.Errorf("make %s: %w", leaf, err)
				return
			}
			if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
				m.prepareErr = fmt.Errorf("move jikken to %s: %w", leaf, err)
				return
			}
			if err := enableControllers(base); err != nil {
				m.prepareErr = err
				return
			}
		}
		top := filepath.Join(base, m.name)
		if err := os.Mkdir(top, 0o755); err != nil && !os.IsExist(err) {
			m.prepareErr = fmt.Errorf("make %s: %w", top, err)
			return
		}
		m.prepareErr = enableControllers(top)
	})
	return m.prepareErr
}

// enableControllers gives the children of group dir the memory and cpu controllers.
func enableControllers(dir string) error {
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+memory +cpu"); err != nil {
		return fmt.Errorf("enable the memory and cpu controllers below %s: %w", dir, err)
	}
	return nil
}

func writeFile(p, v string) error {
	// O_TRUNC is refused by some cgroup files on some kernels; cgroup files take one write.
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create makes the group of one attempt (name/run/trial@attempt) with limits l. On v1 it is made
// only in the hierarchies of the limits set (each one an attempt joins costs a migration when it
// starts); with none, in the memory one, to hold the attempt's processes. A group left with the
// same name by a runner that died is emptied and made again.
func (m *Manager) Create(run, trial string, attempt int, l Limits) (*Group, error) {
	if m.lookupOnly {
		return nil, fmt.Errorf("cgroup: this process cannot make groups (%s)", m)
	}
	if err := m.setup(); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	g := &Group{Run: run, Trial: trial, Attempt: attempt, Limits: l, v2: m.v2}
	leafName := leaf(trial, attempt)
	for _, h := range m.hiers {
		if !h.needed(l) {
			continue
		}
		if i := slices.IndexFunc(g.parts, func(p part) bool { return filepath.Dir(filepath.Dir(filepath.Dir(p.dir))) == h.base }); i >= 0 {
			// memory and cpu mounted together: one directory serves both.
			g.parts = append(g.parts, part{h.kind, g.parts[i].dir})
			continue
		}
		runDir := filepath.Join(h.base, m.name, escape(run))
		dir := filepath.Join(runDir, leafName)
		var err error
		// The last group of the run (or, on v1, of any run) removes the folders it was in; one
		// being made there at that moment makes them again.
		for try := 0; try == 0 || isNotExist(err) && try < 8; try++ {
			if err = m.makeRunDir(runDir); err != nil {
				continue
			}
			err = os.Mkdir(dir, 0o755)
			if os.IsExist(err) {
				old := &Group{v2: m.v2, parts: []part{{h.kind, dir}}}
				old.Kill()
				err = removeDir(dir)
				if err == nil {
					err = os.Mkdir(dir, 0o755)
				}
			}
			if err != nil {
				err = fmt.Errorf("cgroup: make %s: %w", dir, err)
			}
		}
		if err != nil {
			g.Remove()
			return nil, err
		}
		g.parts = append(g.parts, part{h.kind, dir})
	}
	if err := m.limit(g, l); err != nil {
		g.Remove()
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return g, nil
}

// needed reports whether an attempt with limits l joins h.
func (h hier) needed(l Limits) bool {
	switch h.kind {
	case "memory":
		return l.Memory > 0 || l.CPU <= 0
	case "cpu":
		return l.CPU > 0
	}
	return true
}

// makeRunDir makes the run's folder, whose children get the controllers on v2.
func (m *Manager) makeRunDir(dir string) error {
	err := os.MkdirAll(dir, 0o755)
	for try := 0; (isNotExist(err) || errors.Is(err, fs.ErrExist)) && try < 3; try++ {
		// Another runner removed the empty top folder between our Mkdirs; or another attempt
		// made the folder and the last group of the run removed it before MkdirAll could see
		// it was there (MkdirAll then reports its Mkdir's "file exists").
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil && m.v2 && !m.placeOnly {
		sub, _ := readTrim(filepath.Join(dir, "cgroup.subtree_control"))
		if f := strings.Fields(sub); !slices.Contains(f, "memory") || !slices.Contains(f, "cpu") {
			err = enableControllers(dir)
		}
	}
	if err != nil {
		return fmt.Errorf("cgroup: make %s: %w", dir, err)
	}
	return nil
}

// limit writes l into g's files.
func (m *Manager) limit(g *Group, l Limits) error {
	type setting struct{ dir, file, value string }
	var s []setting
	optional := map[string]bool{"memory.memsw.limit_in_bytes": true, "memory.swap.max": true}
	switch {
	case m.placeOnly:
	case m.v2:
		d := g.dir("v2")
		if l.Memory > 0 {
			s = append(s, setting{d, "memory.max", strconv.FormatInt(l.Memory, 10)}, setting{d, "memory.swap.max", "0"})
		}
		if l.CPU > 0 {
			s = append(s, setting{d, "cpu.max", fmt.Sprintf("%d %d", Quota(l.CPU), cpuPeriod)})
		}
	default:
		if l.Memory > 0 {
			// memsw (memory and swap) cannot be below the memory limit, so it comes second.
			d, v := g.dir("memory"), strconv.FormatInt(l.Memory, 10)
			s = append(s, setting{d, "memory.limit_in_bytes", v}, setting{d, "memory.memsw.limit_in_bytes", v})
		}
		if l.CPU > 0 {
			d := g.dir("cpu")
			s = append(s, setting{d, "cpu.cfs_period_us", strconv.Itoa(cpuPeriod)}, setting{d, "cpu.cfs_quota_us", strconv.FormatInt(Quota(l.CPU), 10)})
		}
	}
	for _, x := range s {
		p := filepath.Join(x.dir, x.file)
		if err := writeFile(p, x.value); err != nil {
			if optional[x.file] && isNotExist(err) {
				continue // no swap accounting: there is no swap limit to set
			}
			return fmt.Errorf("set %s to %s: %w", p, x.value, err)
		}
	}
	return nil
}

// Find lists the groups of run's attempts in the hierarchies, wherever they were made (a runner
// that died may have run in another group), so what they hold can be stopped and they can be
// removed.
func (m *Manager) Find(run string) ([]*Group, error) {
	dirs, err := m.runDirs(run)
	if err != nil {
		return nil, err
	}
	found := map[string]*Group{}
	for _, d := range dirs {
		m.collect(d.path, run, d.kinds, found)
	}
	out := make([]*Group, 0, len(found))
	for _, g := range found {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Trial != out[j].Trial {
			return out[i].Trial < out[j].Trial
		}
		return out[i].Attempt < out[j].Attempt
	})
	return out, nil
}

// Prune removes run's folders (name/run) that no attempt's group is left in, wherever they
// were made, and on v1 the name/ folders left empty: a runner that died between making a run's
// folder and its first group leaves one.
func (m *Manager) Prune(run string) error {
	dirs, err := m.runDirs(run)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if os.Remove(d.path) == nil && !m.v2 {
			_ = os.Remove(filepath.Dir(d.path))
		}
	}
	return nil
}

// runDir is a folder name/run in a hierarchy of kinds.
type runDir struct {
	path  string
	kinds []string
}

// runDirs finds run's folders in the hierarchies: under any group (a runner that died may
// have run in another one than this process).
func (m *Manager) runDirs(run string) ([]runDir, error) {
	want := escape(run)
	var out []runDir
	var kinds []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if isNotExist(err) {
				return nil // removed while we looked
			}
			return err
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			if e.Name() == m.name {
				if st, err := os.Stat(filepath.Join(sub, want)); err == nil && st.IsDir() {
					out = append(out, runDir{filepath.Join(sub, want), kinds})
				}
			}
			if depth < 64 {
				if err := walk(sub, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	walked := map[string]bool{}
	for _, h := range m.hiers {
		if walked[h.mount] {
			continue
		}
		walked[h.mount] = true
		kinds = nil
		for _, o := range m.hiers {
			if o.mount == h.mount {
				kinds = append(kinds, o.kind)
			}
		}
		if err := walk(h.mount, 0); err != nil {
			return nil, fmt.Errorf("find the cgroups of run %s: %w", run, err)
		}
	}
	return out, nil
}

// collect adds the attempt groups in runDir, a folder of the hierarchy of kinds, to found,
// keyed by trial and attempt (on v1 an attempt may have a group in each hierarchy).
func (m *Manager) collect(runDir, run string, kinds []string, found map[string]*Group) {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		trial, attempt, ok := parseLeaf(e.Name())
		if !ok {
			continue
		}
		key := e.Name()
		g := found[key]
		if g == nil {
			g = &Group{Run: run, Trial: trial, Attempt: attempt, v2: m.v2}
			found[key] = g
		}
		for _, k := range kinds {
			g.parts = append(g.parts, part{k, filepath.Join(runDir, e.Name())})
		}
	}
}

// leaf is the directory name of an attempt's group.
func leaf(trial string, attempt int) string { return escape(trial) + "@" + strconv.Itoa(attempt) }

func parseLeaf(name string) (trial string, attempt int, ok bool) {
	i := strings.LastIndexByte(name, '@')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	t, ok := unescape(name[:i])
	if !ok {
		return "", 0, false
	}
	return t, n, true
}

// Group is the cgroup of one attempt.
type Group struct {
	Run, Trial string
	Attempt    int
	// Limits are what Create set; zero for a group found by Find.
	Limits Limits
	v2     bool
	parts  []part
}

// part is the group's directory in one hierarchy.
type part struct{ kind, dir string }

// dir is the group's directory in the hierarchy of kind ("v2", "memory", "cpu"), or "".
func (g *Group) dir(kind string) string {
	for _, p := range g.parts {
		if p.kind == kind {
			return p.dir
		}
	}
	return ""
}

// Dirs are the group's directories (v1: one per hierarchy it is in).
func (g *Group) Dirs() []string {
	var out []string
	for _, p := range g.parts {
		if !slices.Contains(out, p.dir) {
			out = append(out, p.dir)
		}
	}
	return out
}

// Procs lists the processes in the group, this one left out (on v1 a thread of it is inside
// for a moment while it starts an attempt).
func (g *Group) Procs() ([]int, error) {
	var all []int
	for _, d := range g.Dirs() {
		pids, err := readPids(filepath.Join(d, "cgroup.procs"))
		if err != nil && !isNotExist(err) {
			return nil, fmt.Errorf("list the processes of %s: %w", d, err)
		}
		all = append(all, pids...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return slices.DeleteFunc(all, func(p int) bool { return p == os.Getpid() || p <= 1 }), nil
}

func readPids(p string) ([]int, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// Signal sends sig to every process in the group.
func (g *Group) Signal(sig syscall.Signal) error {
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal pid %d: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// killWait bounds how long Kill waits for the group to empty.
const killWait = 5 * time.Second

// Kill kills every process in the group, again while forks race it, until it is empty or
// killWait has passed.
func (g *Group) Kill() error {
	if d := g.dir("v2"); d != "" {
		// cgroup.kill (Linux 5.14) kills the whole group at once, forks included.
		_ = writeFile(filepath.Join(d, "cgroup.kill"), "1")
	}
	deadline := time.Now().Add(killWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		pids, err := g.Procs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still holds %s after SIGKILL", strings.Join(g.Dirs(), ", "), pidList(pids))
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(wait)
	}
}

// OOMKilled reports whether the kernel's out-of-memory killer killed a process of the group.
// On a kernel too old to count OOM kills (v1 before Linux 4.13), it guesses from the memory
// limit having been hit and sigkill: whether the attempt ended by SIGKILL.
func (g *Group) OOMKilled(sigkill bool) bool {
	d, file := g.dir("memory"), "memory.oom_control"
	if g.v2 {
		d, file = g.dir("v2"), "memory.events"
	}
	if d == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(d, file))
	if err != nil {
		return false
	}
	if n, ok := field(string(b), "oom_kill"); ok {
		return n > 0
	}
	if g.v2 || !sigkill {
		return false
	}
	fc, err := readTrim(filepath.Join(d, "memory.failcnt"))
	n, _ := strconv.ParseInt(fc, 10, 64)
	return err == nil && n > 0
}

// field reads "name N" from a flat-keyed cgroup file.
func field(s, name string) (int64, bool) {
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == name {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Remove kills what is left in the group and removes it, and its run's folder once that is
// empty. Removing a group that is gone is not an error.
func (g *Group) Remove() error {
	var errs []error
	if err := g.Kill(); err != nil {
		errs = append(errs, err)
	}
	for _, d := range g.Dirs() {
		if err := removeDir(d); err != nil {
			errs = append(errs, err)
			continue
		}
		// The run's folder goes with its last attempt; another attempt's group keeps it. On
		// v1 the top folder goes too, so the group jikken runs in can be removed once it is
		// done (v2 keeps it: it holds the controllers set up once).
		if os.Remove(filepath.Dir(d)) == nil && !g.v2 {
			_ = os.Remove(filepath.Dir(filepath.Dir(d)))
		}
	}
	return errors.Join(errs...)
}

// removeDir removes an empty group, waiting for processes that were just killed to leave it.
func removeDir(d string) error {
	deadline := time.Now().Add(killWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := os.Remove(d)
		if err == nil || isNotExist(err) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", d, err)
		}
		time.Sleep(wait)
	}
}

// Package lease lets every run on one host share its GPUs without colliding, whoever started
// it: before an attempt starts on a device, its runner records a lease in one ledger for the
// whole machine, guarded by a file lock every user can take. A lease is a file of its taker's
// in a sticky folder, so any user can add leases but only their owner (or root) can remove
// them. A lease names the attempt's process group once it has started, so it lives as long as
// the trial's processes do, even when the runner that took it was killed; until then it names
// the runner. A lock on a hold file that the runner and then the trial's processes keep open
// (they inherit it) closes the gap between the two.
package lease

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Whole is a whole device in the thousandths leases are counted in.
const Whole = 1000

// EnvDir names the ledger's folder instead of the default (tests, or a host whose /run/lock
// is not shared by its users).
const EnvDir = "JIKKEN_LEASES"

// DefaultDir is the host's ledger: /run/lock is where the system keeps locks, writable by every
// user (mode 1777) and emptied at boot, when every lease has ended anyway.
const DefaultDir = "/run/lock/jikken"

// Book is the ledger of one host's devices, in Dir.
type Book struct {
	Dir string
	// InUse, when set, lists the processes that use each GPU (by UUID), as nvidia-smi
	// --query-compute-apps does: a device one of them uses, which no live lease accounts for,
	// is not handed out.
	InUse func() (map[string][]int, error)
}

// Default is the host's book: $JIKKEN_LEASES, else DefaultDir where /run/lock exists, else a
// folder in the system's temporary folder.
func Default() Book {
	if d := os.Getenv(EnvDir); d != "" {
		return Book{Dir: d}
	}
	if st, err := os.Stat(filepath.Dir(DefaultDir)); err == nil && st.IsDir() {
		return Book{Dir: DefaultDir}
	}
	return Book{Dir: filepath.Join(os.TempDir(), "jikken-leases")}
}

// Holder is who holds a lease: one attempt of a trial of a run.
type Holder struct {
	Run     string `json:"run"`
	Trial   string `json:"trial"`
	Attempt int    `json:"attempt"`
}

// Share is a part of one device, in thousandths.
type Share struct {
	Device string `json:"device"`
	Share  int    `json:"share"`
}

// proc names a process; Start (its start time) tells a reused pid apart.
type proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
}

// entry is one lease file.
type entry struct {
	Holder
	UID    int     `json:"uid"`
	Shares []Share `json:"shares"`
	// Runner took the lease; Group, once set, is the attempt's process group (its leader).
	// The lease lives while either does.
	Runner proc `json:"runner"`
	Group  proc `json:"group,omitzero"`

	file string
}

// hold is the file whose lock holds the lease while its taker or the attempt has it open.
func (e *entry) hold() string { return strings.TrimSuffix(e.file, ".lease") + ".hold" }

func (e *entry) live() bool { return e.Runner.alive() || e.Group.groupAlive() || held(e.hold()) }

// Lease is a lease taken.
type Lease struct {
	b    *Book
	e    entry
	hold *os.File
}

// Take leases shares[k] thousandths of devices[k] to h, all of them or none. It returns the
// devices it could not lease (other leases hold too much of them, or processes no lease
// accounts for use them), when it could not. A live lease of h itself (an attempt an earlier
// runner started and this one adopts) is taken over.
func (b Book) Take(devices []string, shares []int, h Holder) (*Lease, []string, error) {
	if len(devices) != len(shares) {
		return nil, nil, errors.New("lease: one share per device")
	}
	var apps map[string][]int
	if b.InUse != nil {
		var err error
		if apps, err = b.InUse(); err != nil {
			return nil, nil, fmt.Errorf("find the processes that use the GPUs (or pass --gpus-busy=ignore): %w", err)
		}
	}
	if err := b.prepare(); err != nil {
		return nil, nil, err
	}
	unlock, err := b.lock()
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	me := entry{Holder: h, UID: os.Geteuid(), Runner: self(), file: b.file(h)}
	for k, d := range devices {
		me.Shares = append(me.Shares, Share{Device: d, Share: shares[k]})
	}
	entries, err := b.read()
	if err != nil {
		return nil, nil, err
	}
	var busy []string
	for _, s := range me.Shares {
		used := s.Share
		var holders []entry
		for _, e := range entries {
			if e.Holder == h {
				me.Group = e.Group
				continue
			}
			for _, o := range e.Shares {
				if o.Device == s.Device {
					used += o.Share
					holders = append(holders, e)
				}
			}
		}
		if used > Whole || foreign(apps[s.Device], holders) {
			busy = append(busy, s.Device)
		}
	}
	if len(busy) > 0 {
		return nil, busy, nil
	}
	hold, err := openHold(me.hold())
	if err != nil {
		return nil, nil, fmt.Errorf("hold GPU lease: %w", err)
	}
	if err := b.write(me); err != nil {
		hold.Close()
		_ = os.Remove(me.hold())
		return nil, nil, err
	}
	return &Lease{b: &b, e: me, hold: hold}, nil, nil
}

// Hold is the open file whose lock holds the lease: the attempt's processes inherit it, so the
// lease has a holder from the moment they exist, before Bind names them.
func (l *Lease) Hold() *os.File { return l.hold }

// foreign reports whether a process in pids belongs to none of holders' process groups (nor
// descends from one). A trial's processes in the moment between its start and Bind count as
// foreign: the device then waits a little longer.
func foreign(pids []int, holders []entry) bool {
	for _, pid := range pids {
		if !slices.ContainsFunc(holders, func(e entry) bool { return belongs(pid, e.Group.PID) }) {
			return true
		}
	}
	return false
}

// Bind names the attempt's process group (by its leader's pid) as the lease's holder, so the
// lease outlives this runner for as long as the group has a process.
func (l *Lease) Bind(leader int) error {
	p := proc{PID: leader, Start: startTime(leader)}
	unlock, err := l.b.lock()
	if err != nil {
		return err
	}
	defer unlock()
	l.e.Group = p
	return l.b.write(l.e)
}

// Release ends the lease.
func (l *Lease) Release() error {
	unlock, err := l.b.lock()
	if err != nil {
		return err
	}
	defer unlock()
	l.hold.Close()
	if err := os.Remove(l.e.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release GPU lease %s: %w", l.e.file, err)
	}
	if err := os.Remove(l.e.hold()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release GPU lease %s: %w", l.e.file, err)
	}
	return nil
}

// prepare makes the ledger's folder when it is missing, writable by every user and sticky, as
// /tmp is: anyone may add a lease, only its owner may remove it.
func (b Book) prepare() error {
	st, err := os.Stat(b.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := b.mkdir(); err != nil {
			return fmt.Errorf("make the GPU lease folder: %w; have it made for every user (install -d -m 1777 %s), or set %s", err, b.Dir, EnvDir)
		}
		st, err = os.Stat(b.Dir)
	}
	if err != nil {
		return fmt.Errorf("GPU lease folder: %w", err)
	}
	m := st.Mode()
	switch {
	case !st.IsDir():
		return fmt.Errorf("GPU lease folder %s is not a folder; remove it, or set %s", b.Dir, EnvDir)
	case m.Perm()&0o022 != 0 && m&os.ModeSticky == 0:
		return fmt.Errorf("GPU lease folder %s is writable by others without the sticky bit, so anyone could remove the leases of others; run chmod +t %s", b.Dir, b.Dir)
	}
	return nil
}

func (b Book) mkdir() error {
	if err := os.MkdirAll(filepath.Dir(b.Dir), 0o755); err != nil {
		return err
	}
	err := os.Mkdir(b.Dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil // another runner made it just now
	}
	if err != nil {
		return err
	}
	// Made private first and opened up after, so the mode does not depend on the umask.
	return os.Chmod(b.Dir, 0o777|os.ModeSticky)
}

// file is the lease file of h: its owner's uid and a digest of h, so an adopting runner finds
// the lease of the attempt it adopts.
func (b Book) file(h Holder) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", h.Run, h.Trial, h.Attempt)))
	return filepath.Join(b.Dir, fmt.Sprintf("%d-%s.lease", os.Geteuid(), hex.EncodeToString(sum[:12])))
}

// read returns the live leases. The files of leases that ended without a release (their
// runner and trial died) are removed where this user may.
func (b Book) read() ([]entry, error) {
	names, err := os.ReadDir(b.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the GPU leases: %w", err)
	}
	var out []entry
	for _, n := range names {
		if !strings.HasSuffix(n.Name(), ".lease") {
			continue
		}
		p := filepath.Join(b.Dir, n.Name())
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the GPU leases: %w", err)
		}
		var e entry
		if err := json.Unmarshal(data, &e); err != nil {
			// Written by hand, or by another tool: it holds nothing.
			continue
		}
		e.file = p
		if e.live() {
			out = append(out, e)
		} else {
			_ = os.Remove(e.hold())
			_ = os.Remove(p) // fails on another user's file in the sticky folder: left for them
		}
	}
	return out, nil
}

// write puts e in its file, readable by every user and writable by its owner only. The file is
// renamed into place, so a reader never sees half a lease.
func (b Book) write(e entry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp := e.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write GPU lease: %w", err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fmt.Errorf("write GPU lease: %w", err)
	}
	if err := os.Rename(tmp, e.file); err != nil {
		return fmt.Errorf("write GPU lease: %w", err)
	}
	return nil
}

// lock takes the ledger's lock, a file any user can open to read (flock needs no more).
func (b Book) lock() (func(), error) {
	f, err := openLock(filepath.Join(b.Dir, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("lock the GPU leases in %s: %w", b.Dir, err)
	}
	return func() { unlock(f) }, nil
}

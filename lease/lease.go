// Package lease lets the runs on one host share its GPUs without colliding: before an attempt
// starts on a device, its runner records a lease in a small ledger per device under the user's
// cache folder, guarded by a file lock. A lease names the runner process (pid and start time),
// so the lease of a runner that crashed expires by itself: no stale lock outlives its holder.
package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
)

// Whole is a whole device in the thousandths leases are counted in.
const Whole = 1000

// Book is the ledgers of one host's devices, in Dir.
type Book struct {
	Dir string
}

// Default is the book in the user's cache folder.
func Default() (Book, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return Book{}, fmt.Errorf("find the cache folder for GPU leases: %w", err)
	}
	return Book{Dir: filepath.Join(dir, "jikken", "leases")}, nil
}

// Holder is who holds a lease: one attempt of a trial of a run.
type Holder struct {
	Run     string `json:"run"`
	Trial   string `json:"trial"`
	Attempt int    `json:"attempt"`
}

type entry struct {
	Holder
	Share int `json:"share"`
	// PID and Start name the runner process; Start (its start time) tells a reused pid apart.
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Take leases shares[k] thousandths of devices[k] to h, all of them or none. It returns the
// devices other processes hold too much of, when it could not, and a release func when it did.
func (b Book) Take(devices []string, shares []int, h Holder) (release func() error, busy []string, err error) {
	if len(devices) != len(shares) {
		return nil, nil, errors.New("lease: one share per device")
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("lease GPUs: %w", err)
	}
	me := entry{Holder: h, PID: os.Getpid(), Start: startTime(os.Getpid())}
	// Devices are locked in one order, so two runners taking overlapping sets cannot deadlock.
	order := make([]int, len(devices))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return devices[order[i]] < devices[order[j]] })
	var locks []*os.File
	defer func() {
		for _, l := range locks {
			unlock(l)
		}
	}()
	ledgers := make([][]entry, len(devices))
	for _, k := range order {
		l, err := lock(b.path(devices[k], ".lock"))
		if err != nil {
			return nil, nil, fmt.Errorf("lease GPU %s: %w", devices[k], err)
		}
		locks = append(locks, l)
		ledger, err := b.read(devices[k])
		if err != nil {
			return nil, nil, err
		}
		used := 0
		for _, e := range ledger {
			used += e.Share
		}
		if used+shares[k] > Whole {
			busy = append(busy, devices[k])
		}
		ledgers[k] = ledger
	}
	if len(busy) > 0 {
		return nil, busy, nil
	}
	for k, d := range devices {
		e := me
		e.Share = shares[k]
		if err := b.write(d, append(ledgers[k], e)); err != nil {
			return nil, nil, err
		}
	}
	return func() error { return b.release(devices, me) }, nil, nil
}

// release removes the leases of holder me on devices.
func (b Book) release(devices []string, me entry) error {
	var errs []error
	for _, d := range devices {
		l, err := lock(b.path(d, ".lock"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ledger, err := b.read(d)
		if err == nil {
			ledger = slices.DeleteFunc(ledger, func(e entry) bool { return e.Holder == me.Holder && e.PID == me.PID })
			err = b.write(d, ledger)
		}
		unlock(l)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Holders lists the live leases on device d, for people ('jikken validate --host').
func (b Book) Holders(d string) ([]Holder, error) {
	ledger, err := b.read(d)
	var out []Holder
	for _, e := range ledger {
		out = append(out, e.Holder)
	}
	return out, err
}

// read returns the live leases of device d: those whose runner still runs.
func (b Book) read(d string) ([]entry, error) {
	data, err := os.ReadFile(b.path(d, ".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the leases of GPU %s: %w", d, err)
	}
	var all []entry
	if err := json.Unmarshal(data, &all); err != nil {
		// A ledger cut short by a crash mid-write cannot happen (it is renamed into place),
		// but one written by hand can: start it again rather than lock the device forever.
		return nil, nil
	}
	return slices.DeleteFunc(all, func(e entry) bool { return !alive(e.PID, e.Start) }), nil
}

func (b Book) write(d string, ledger []entry) error {
	data, err := json.MarshalIndent(ledger, "", "  ")
	if err != nil {
		return err
	}
	p := b.path(d, ".json")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write the leases of GPU %s: %w", d, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("write the leases of GPU %s: %w", d, err)
	}
	return nil
}

var unsafeFile = regexp.MustCompile(`[^A-Za-z0-9_.:-]+`)

func (b Book) path(d, ext string) string {
	return filepath.Join(b.Dir, unsafeFile.ReplaceAllString(d, "_")+ext)
}

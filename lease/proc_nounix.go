//go:build !unix

package lease

import "os"

// Without kill(2) and flock every lease is taken as live, as a lock that errs on the safe
// side, and leases are advisory.
func self() proc                          { return proc{PID: os.Getpid()} }
func (p proc) alive() bool                { return p.PID > 0 }
func (p proc) groupAlive() bool           { return p.PID > 0 }
func belongs(pid, g int) bool             { return pid == g }
func openLock(p string) (*os.File, error) { return os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o444) }
func unlock(f *os.File)                   { f.Close() }

func openHold(p string) (*os.File, error) { return os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o444) }
func held(string) bool                    { return false }

//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests here run git-ghost as separate processes, many at once or killed at random
// moments. They run a few rounds in `go test`; bench/ghost/stress.sh runs the full counts
// (JIKKEN_GHOST_STRESS=full). GIT_GHOST_BIN points them at another git-ghost binary.

// rounds returns the count for a normal test run, or the full one under bench/ghost/stress.sh.
func rounds(short, full int) int {
	if os.Getenv("JIKKEN_GHOST_STRESS") == "full" {
		return full
	}
	return short
}

// lab is a temp directory with an isolated HOME, a bare origin and a bare ghost repository.
type lab struct {
	t           *testing.T
	root, ghost string
	bin         string
	env         []string
	origin      string
}

func newLab(t *testing.T) *lab {
	t.Helper()
	root := t.TempDir()
	l := &lab{t: t, root: root, ghost: "file://" + filepath.Join(root, "ghost.git")}
	l.bin = os.Getenv("GIT_GHOST_BIN")
	if l.bin == "" {
		l.bin = filepath.Join(root, "bin", "git-ghost")
		self, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(l.bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.bin, self, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(root, "home")
	l.env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_GHOST_REPO=" + l.ghost, "JIKKEN_GHOST_CACHE=" + filepath.Join(root, "cache")}
	l.sh(root, `mkdir -p "$HOME" && git config --global init.defaultBranch main && git init -q --bare origin.git && git init -q --bare ghost.git`)
	l.origin = "file://" + filepath.Join(root, "origin.git")
	return l
}

// sh runs a shell script in dir with the lab's environment and returns its trimmed stdout.
// Further arguments are the script's $0, $1, ...
func (l *lab) sh(dir, script string, args ...string) string {
	l.t.Helper()
	out, err := l.cmd(dir, "sh", append([]string{"-ec", script}, args...)...).Output()
	if err != nil {
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = string(ee.Stderr)
		}
		l.t.Fatalf("%s: %v\n%s", script, err, msg)
	}
	return strings.TrimSpace(string(out))
}

func (l *lab) cmd(dir, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = append(cleanEnv(), l.env...)
	return c
}

// ghostCmd is git-ghost with args in dir, its cache at cache.
func (l *lab) ghostCmd(dir, cache string, args ...string) *exec.Cmd {
	c := l.cmd(dir, l.bin, args...)
	c.Env = append(c.Env, "JIKKEN_GHOST_CACHE="+cache)
	return c
}

// cleanEnv is the test's environment without git's repository variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "JIKKEN_GHOST_CACHE=") {
			env = append(env, kv)
		}
	}
	return env
}

// clone makes a clone of origin named name.
func (l *lab) clone(name string) string {
	l.sh(l.root, "git clone -q \"$0\" \"$1\"", l.origin, name)
	return filepath.Join(l.root, name)
}

// TestConcurrentPushesAndPullsOnAColdCache: 16 pushes at once from 16 working trees, then 16
// pulls at once into 16 clones, each set on a cache directory nobody used yet (git ghost's
// cache is per user, so parallel jobs on one home directory share it). Four pushes share each
// ghost, so the same branches are written at the same moment too. No process may fail.
func TestConcurrentPushesAndPullsOnAColdCache(t *testing.T) {
	const n = 16
	l := newLab(t)
	sender := l.clone("seed")
	l.sh(sender, `echo base > a.txt && git add a.txt && git commit -q -m base && git push -q origin main`)
	senders, receivers := make([]string, n), make([]string, n)
	for i := range n {
		senders[i], receivers[i] = l.clone(fmt.Sprintf("s%d", i)), l.clone(fmt.Sprintf("r%d", i))
	}
	failures := 0
	for round := range rounds(1, 10) {
		pushCache := filepath.Join(l.root, fmt.Sprintf("push-cache-%d", round))
		for i, s := range senders {
			l.sh(s, `git checkout -q -- . && git clean -qfd && echo "$0" > a.txt && echo "$0" > "new-$1.txt"`, fmt.Sprintf("round %d ghost %d", round, i%4), strconv.Itoa(i%4))
		}
		outs := parallel(n, func(i int) ([]byte, error) {
			return l.ghostCmd(senders[i], pushCache, "push").CombinedOutput()
		})
		hashes := make([]string, n)
		for i, o := range outs {
			f := strings.Fields(string(o.out))
			if o.err != nil || len(f) != 2 {
				failures++
				t.Errorf("round %d: push %d: %v\n%s", round, i, o.err, o.out)
				continue
			}
			hashes[i] = f[1]
		}
		pullCache := filepath.Join(l.root, fmt.Sprintf("pull-cache-%d", round))
		for _, r := range receivers {
			l.sh(r, `git reset -q --hard origin/main && git clean -qfd`)
		}
		outs = parallel(n, func(i int) ([]byte, error) {
			if hashes[i] == "" {
				return nil, errors.New("no hash to pull")
			}
			return l.ghostCmd(receivers[i], pullCache, "pull", hashes[i]).CombinedOutput()
		})
		for i, o := range outs {
			want := fmt.Sprintf("round %d ghost %d", round, i%4)
			if got, _ := os.ReadFile(filepath.Join(receivers[i], "a.txt")); o.err != nil || strings.TrimSpace(string(got)) != want {
				failures++
				t.Errorf("round %d: pull %d: %v, a.txt = %q, want %q\n%s", round, i, o.err, got, want, o.out)
			}
		}
	}
	t.Logf("%d failures in %d rounds of %d pushes and %d pulls", failures, rounds(1, 10), n, n)
}

type result struct {
	out []byte
	err error
}

// parallel runs f(0..n-1) at the same moment and returns their results.
func parallel(n int, f func(i int) ([]byte, error)) []result {
	res := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res[i].out, res[i].err = f(i)
		}()
	}
	close(start)
	wg.Wait()
	return res
}

// TestSIGKILLDuringPull kills git-ghost and every git it started (the process group) at random
// moments of the pull of a ghost that changes 1,200 files. Right after the kill the receiver
// must be untouched or complete, with no git lock file, unless the kill hit the switch itself
// (the journal is there); either way the next pull must succeed and leave the complete state,
// with no lock file and nothing in git-ghost's state directory.
func TestSIGKILLDuringPull(t *testing.T) {
	l := newLab(t)
	sender := l.clone("sender")
	files := func(dirs, each int, content func(d, f int) string) {
		for d := range dirs {
			for f := range each {
				p := filepath.Join(sender, fmt.Sprintf("pkg%d/f%d.txt", d, f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content(d, f)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	files(30, 50, func(d, f int) string { return fmt.Sprintf("file %d of %d\n", f, d) })
	l.sh(sender, `git add -A && git commit -q -m 1500-files && git push -q origin main`)
	// 1,200 changed files: 1,150 edited, 30 new (one where a file was), 20 deleted.
	files(23, 50, func(d, f int) string { return fmt.Sprintf("file %d of %d\nedited\n", f, d) })
	l.sh(sender, `for f in $(seq 0 19); do git rm -q pkg29/f$f.txt; done
for f in $(seq 0 28); do echo new > pkg28/new$f.txt; done
git rm -q pkg27/f0.txt && mkdir pkg27/f0.txt && echo "a file where a file was" > pkg27/f0.txt/inside
git add pkg28/new0.txt`)
	hash := strings.Fields(l.sh(sender, `"$0" push`, l.bin))[1]

	want := l.clone("reference")
	start := time.Now()
	l.sh(want, `"$0" pull "$1"`, l.bin, hash)
	wantState := l.state(want)
	recv := l.clone("recv")
	baseState := l.state(recv)
	// How long a pull takes, with the ghost still to fetch (even attempts) and with it cached
	// (odd ones): kills fall anywhere in that time. A pull that ends before its kill corrects
	// the estimate and does not count as a kill.
	took := [2]time.Duration{time.Since(start), time.Since(start)}

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("JIKKEN_GHOST_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	kills := rounds(2, 30)
	var untouched, complete, midSwitch, finished int
	for k, attempt := 0, 0; k < kills; attempt++ {
		if attempt > 4*kills {
			t.Fatalf("only %d of %d pulls were killed before they ended (seed %d)", k, attempt, seed)
		}
		l.sh(recv, `git reset -q --hard origin/main && git clean -qfd`)
		cache := filepath.Join(l.root, "recv-cache")
		if attempt%2 == 0 {
			cache = filepath.Join(l.root, fmt.Sprintf("cold-cache-%d", attempt))
		}
		c := l.ghostCmd(recv, cache, "pull", hash)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		began := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(took[attempt%2])))
		time.Sleep(delay)
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
		at := fmt.Sprintf("attempt %d, kill after %v (seed %d)", attempt, delay, seed)

		journal := exists(filepath.Join(recv, ".git", "jikken-ghost", "journal.json"))
		locks := l.locks(recv, false)
		got := l.state(recv)
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			finished++
			took[attempt%2] = time.Since(began)
			if got != wantState || journal || len(locks) > 0 {
				t.Fatalf("%s: a pull that ended by itself left state %v, journal %v, locks %v", at, got, journal, locks)
			}
			continue
		}
		k++
		switch {
		case journal:
			midSwitch++
		case len(locks) > 0:
			t.Errorf("%s: no journal, but lock files %v", at, locks)
		case got == baseState:
			untouched++
		case got == wantState:
			complete++
		default:
			t.Errorf("%s: the receiver is neither untouched nor complete: %v", at, got)
		}
		if out, err := l.ghostCmd(recv, cache, "pull", hash).CombinedOutput(); err != nil {
			t.Fatalf("%s: the next pull failed: %v\n%s", at, err, out)
		}
		if got := l.state(recv); got != wantState {
			t.Fatalf("%s: after the next pull the state is %v, want %v", at, got, wantState)
		}
		left, _ := os.ReadDir(filepath.Join(recv, ".git", "jikken-ghost"))
		if locks := l.locks(recv, true); len(locks) > 0 || len(left) > 0 {
			t.Fatalf("%s: after the next pull, locks %v or %d entries in the state directory are left", at, locks, len(left))
		}
	}
	t.Logf("%d kills (seed %d): %d untouched, %d complete, %d inside the switch (finished by the next pull); %d more pulls ended before their kill", kills, seed, untouched, complete, midSwitch, finished)
}

// state is HEAD, the index's tree and the working tree's tree (untracked files included,
// ignored ones not), read without touching the repository's index.
func (l *lab) state(dir string) [3]string {
	l.t.Helper()
	tmp := filepath.Join(l.t.TempDir(), "index")
	out := l.sh(dir, `cp "$(git rev-parse --git-dir)/index" "$0" && git rev-parse HEAD && GIT_INDEX_FILE="$0" git write-tree && GIT_INDEX_FILE="$0" git add -A && GIT_INDEX_FILE="$0" git write-tree`, tmp)
	f := strings.Fields(out)
	if len(f) != 3 {
		l.t.Fatalf("state of %s: %q", dir, out)
	}
	return [3]string{f[0], f[1], f[2]}
}

// locks lists the lock files in the repository's git directory. Those of git-ghost's scratch
// files in its own state directory, which only the next git-ghost command reads (and clears),
// count only with all.
func (l *lab) locks(dir string, all bool) []string {
	var found []string
	_ = filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "jikken-ghost" && !all {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

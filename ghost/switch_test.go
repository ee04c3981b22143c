package ghost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInterruptedSwitchFinishesOnTheNextCommand stops a pull at every step of its switch, as a
// kill there would, and checks that the next pull (or push, or snapshot) finishes it: the
// receiver ends in the sender's state, with no journal and no lock file left.
func TestInterruptedSwitchFinishesOnTheNextCommand(t *testing.T) {
	w, want, pull, steps := interruptible(t)
	ctx := context.Background()
	if steps < 5 {
		t.Fatalf("the switch took %d steps; the mess should need more", steps)
	}
	for _, stop := range []int{0, 1, steps / 2, steps - 2, steps - 1} {
		recv := receiver(t, w, "recv"+strings.Repeat("x", stop))
		before := stateOf(t, recv)
		interruptSwitch = func(step int) bool { return step == stop }
		err := pull(recv)
		interruptSwitch = nil
		if err == nil || !strings.Contains(err.Error(), "run the pull again") {
			t.Fatalf("stop at step %d: err = %v, want an interrupted switch", stop, err)
		}
		journal := filepath.Join(recv, ".git", stateDirName, journalName)
		if _, err := os.Stat(journal); err != nil {
			t.Fatalf("stop at step %d: no journal left: %v", stop, err)
		}
		if stop == 0 && stateOf(t, recv) != before {
			t.Fatalf("stop before the first step changed the receiver")
		}
		if stop%2 == 0 {
			must(t, pull(recv))
		} else {
			// Any command that reads the working tree finishes the switch first.
			_, err := Take(ctx, recv, SnapshotOptions{})
			must(t, err)
		}
		if got := stateOf(t, recv); got != want {
			t.Fatalf("stop at step %d, then recovery: state %v, want %v", stop, got, want)
		}
		for _, left := range []string{journal, filepath.Join(recv, ".git", "index.lock"), filepath.Join(recv, ".git", stateDirName, stageName)} {
			if _, err := os.Stat(left); err == nil {
				t.Errorf("stop at step %d: %s left behind", stop, left)
			}
		}
	}
}

// interruptible pushes every kind of change with 'push all' and returns the sender's state, a
// pull of it into a given clone, and the number of steps the switch of that pull takes (counted
// in one pull). interruptSwitch is reset when the test ends.
func interruptible(t *testing.T) (w world, want [3]string, pull func(recv string) error, steps int) {
	w = newWorld(t)
	makeMess(t, w.sender)
	ctx := context.Background()
	want = stateOf(t, w.sender)
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Commits: true, Diff: true})
	must(t, err)
	pull = func(recv string) error {
		_, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, FindCommits: true})
		return err
	}
	t.Cleanup(func() { interruptSwitch = nil })
	interruptSwitch = func(int) bool { steps++; return false }
	must(t, pull(receiver(t, w, "count")))
	interruptSwitch = nil
	return w, want, pull, steps
}

// TestLeftoverLocksOfAKilledSwitchAreFinished: a kill inside the install of the index leaves
// index.lock as a second name of the new index, and a kill inside git update-ref leaves the
// branch's lock holding the new commit; both are recognised as the pull's own and finished.
func TestLeftoverLocksOfAKilledSwitchAreFinished(t *testing.T) {
	w, want, pull, steps := interruptible(t)
	recv := receiver(t, w, "recv")
	interruptSwitch = func(step int) bool { return step == steps-2 } // before the index
	if err := pull(recv); err == nil {
		t.Fatal("the interrupted pull succeeded")
	}
	interruptSwitch = nil
	gitDir := filepath.Join(recv, ".git")
	must(t, os.Link(filepath.Join(gitDir, stateDirName, newIndexName), filepath.Join(gitDir, "index.lock")))
	must(t, os.WriteFile(filepath.Join(gitDir, "refs", "heads", "main.lock"), []byte(want[0]+"\n"), 0o644))
	must(t, pull(recv))
	if got := stateOf(t, recv); got != want {
		t.Fatalf("state %v, want %v", got, want)
	}
	for _, lock := range []string{"index.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(gitDir, lock)); err == nil {
			t.Errorf("%s left behind", lock)
		}
	}
}

// TestPullRefusesAnUntrackedFileInTheWay: an ignored or untracked file where the ghost puts
// one, or a file where it needs a directory, stops the pull before anything changes.
func TestPullRefusesAnUntrackedFileInTheWay(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	write(t, w.sender, "new/file.txt", "from the ghost\n")
	write(t, w.sender, "build.log", "tracked on purpose\n")
	git(t, w.sender, "add", "-f", "build.log")
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	for name, file := range map[string]string{"ignored": "build.log", "file for a directory": "new"} {
		t.Run(name, func(t *testing.T) {
			recv := receiver(t, w, strings.ReplaceAll(name, " ", "-"))
			write(t, recv, file, "mine\n")
			before := stateOf(t, recv)
			_, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, Force: true})
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("err = %v, want a refusal naming %s", err, file)
			}
			if stateOf(t, recv) != before {
				t.Fatal("a refused pull changed the receiver")
			}
			if b, _ := os.ReadFile(filepath.Join(recv, file)); string(b) != "mine\n" {
				t.Fatalf("%s = %q after the refusal", file, b)
			}
		})
	}
}

// TestLeftoversOfAKillBeforeTheJournalAreCleared: a pull killed while git wrote its new index
// or a scratch index leaves their lock files in the state directory; the next pull clears them.
func TestLeftoversOfAKillBeforeTheJournalAreCleared(t *testing.T) {
	w := newWorld(t)
	makeMess(t, w.sender)
	ctx := context.Background()
	want := stateOf(t, w.sender)
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Commits: true, Diff: true})
	must(t, err)
	recv := receiver(t, w, "recv")
	state := filepath.Join(recv, ".git", stateDirName)
	for _, f := range []string{newIndexName, newIndexName + ".lock", "tmp-123/tree.index.lock", stageName + "/dir/b.txt"} {
		write(t, state, f, "left by a killed pull\n")
	}
	_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}, FindCommits: true})
	must(t, err)
	if got := stateOf(t, recv); got != want {
		t.Fatalf("state %v, want %v", got, want)
	}
	if left, _ := os.ReadDir(state); len(left) != 0 {
		t.Errorf("%d entries left in %s (%s, ...)", len(left), state, left[0].Name())
	}
}

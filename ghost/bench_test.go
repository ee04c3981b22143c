package ghost

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPushPull times a diff push of 20 changed files in a 200-file repository and a pull
// of it into a fresh clone. bench/ghost/run.sh compares the whole commands with the raw git
// plumbing at a larger size.
func BenchmarkPushPull(b *testing.B) {
	w := newWorld(b)
	for f := 0; f < 200; f++ {
		write(b, w.sender, fmt.Sprintf("pkg/f%d.txt", f), fmt.Sprintf("file %d\n", f))
	}
	git(b, w.sender, "add", "-A")
	git(b, w.sender, "commit", "-q", "-m", "200 files")
	git(b, w.sender, "push", "-q", "origin", "main")
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for f := 0; f < 20; f++ {
			write(b, w.sender, fmt.Sprintf("pkg/f%d.txt", f), fmt.Sprintf("run %d\n", i))
		}
		recv := filepath.Join(w.root, fmt.Sprintf("recv%d", i))
		git(b, w.root, "clone", "-q", "file://"+w.origin, recv)
		b.StartTimer()
		res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}}); err != nil {
			b.Fatal(err)
		}
	}
}

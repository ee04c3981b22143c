// Command checkpoint-bench compares a checkpoint's upload and restore through jikken's
// checkpoint package with raw PUTs and GETs of the same files by a plain minio-go client, with
// the same number of requests in flight, and times the save of an unchanged folder (which
// sends nothing). bench/checkpoint/run.sh starts a MinIO and runs it.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"

	"github.com/jikken-dev/jikken/bench/s3bench"
	"github.com/jikken-dev/jikken/checkpoint"
	"github.com/jikken-dev/jikken/store/s3"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "checkpoint-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	files := flag.Int("files", 1000, "files in the checkpoint")
	mib := flag.Int("mib", 1024, "total size of the checkpoint in MiB")
	rounds := flag.Int("rounds", 3, "rounds; the table shows the median")
	workers := flag.Int("workers", 16, "requests in flight, for both")
	bucket := flag.String("bucket", "bench", "bucket (created if missing)")
	flag.Parse()
	ctx := context.Background()

	cfg, err := s3.LoadConfig(os.Getenv)
	if err != nil {
		return err
	}
	plain, err := s3bench.Plain(ctx, cfg, *bucket)
	if err != nil {
		return err
	}
	blob, err := s3.New(ctx, "s3://"+*bucket+"/jikken", cfg)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "checkpoint-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "ckpt")
	names, err := writeFolder(dir, *files, int64(*mib)<<20)
	if err != nil {
		return err
	}

	var up, upRaw, down, downRaw, incr, some []time.Duration
	var sent, changed int
	for r := range *rounds {
		remote := checkpoint.Remote{Blob: blob, Prefix: fmt.Sprintf("runs/bench/trials/round%d/checkpoint", r), Workers: *workers}
		rawPrefix := fmt.Sprintf("raw/round%d/", r)
		// Alternate which goes first, so neither always meets a colder server.
		steps := []func() error{
			func() error {
				start := time.Now()
				m, _, err := remote.Save(ctx, dir, nil, 1, 0)
				up = append(up, time.Since(start))
				if err != nil {
					return err
				}
				start = time.Now()
				m2, st, err := remote.Save(ctx, dir, m, 1, 0)
				incr = append(incr, time.Since(start))
				if err != nil {
					return err
				}
				if m2 != m {
					return fmt.Errorf("an unchanged folder made a new version")
				}
				sent = st.Uploaded
				// One file in a hundred changed: only those go up.
				for i := 0; i < len(names); i += 100 {
					if err := rewrite(filepath.Join(dir, names[i])); err != nil {
						return err
					}
				}
				start = time.Now()
				_, st, err = remote.Save(ctx, dir, m, 1, 0)
				some = append(some, time.Since(start))
				if err != nil {
					return err
				}
				changed = st.Uploaded
				out := filepath.Join(tmp, "restored")
				start = time.Now()
				err = remote.Restore(ctx, m, out)
				down = append(down, time.Since(start))
				_ = os.RemoveAll(out)
				return err
			},
			func() error {
				start := time.Now()
				err := each(*workers, names, func(n string) error {
					_, err := plain.FPutObject(ctx, *bucket, rawPrefix+n, filepath.Join(dir, n), minio.PutObjectOptions{})
					return err
				})
				upRaw = append(upRaw, time.Since(start))
				if err != nil {
					return err
				}
				out := filepath.Join(tmp, "raw-restored")
				start = time.Now()
				err = each(*workers, names, func(n string) error {
					return plain.FGetObject(ctx, *bucket, rawPrefix+n, filepath.Join(out, n), minio.GetObjectOptions{})
				})
				downRaw = append(downRaw, time.Since(start))
				_ = os.RemoveAll(out)
				return err
			},
		}
		if r%2 == 1 {
			slices.Reverse(steps)
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%d files, %d MiB, %d rounds, %d in flight\tjikken checkpoint\traw minio-go\tratio\n", *files, *mib, *rounds, *workers)
	fmt.Fprintf(tw, "upload (full)\t%s\t%s\t%.2fx\n", median(up), median(upRaw), ratio(up, upRaw))
	fmt.Fprintf(tw, "restore\t%s\t%s\t%.2fx\n", median(down), median(downRaw), ratio(down, downRaw))
	fmt.Fprintf(tw, "upload, unchanged (incremental, %d files sent)\t%s\tvs full %s\t%.2f%%\n", sent, median(incr), median(up), 100*ratio(incr, up))
	fmt.Fprintf(tw, "upload, 1 file in 100 changed (%d files sent)\t%s\tvs full %s\t%.2f%%\n", changed, median(some), median(up), 100*ratio(some, up))
	return tw.Flush()
}

// rewrite gives the file at p new random bytes of the same length.
func rewrite(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	_, err = io.CopyN(f, rand.Reader, st.Size())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeFolder writes n files of random bytes, size bytes in all, in a few sub-folders.
func writeFolder(dir string, n int, size int64) ([]string, error) {
	var names []string
	each := size / int64(n)
	for i := range n {
		name := fmt.Sprintf("layer-%02d/shard-%04d.bin", i%10, i)
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		_, err = io.CopyN(f, rand.Reader, each)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// each runs f on every name, with at most workers at once.
func each(workers int, names []string, f func(string) error) error {
	var g errgroup.Group
	g.SetLimit(workers)
	for _, n := range names {
		g.Go(func() error { return f(n) })
	}
	return g.Wait()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(100 * time.Microsecond)
}

func ratio(a, b []time.Duration) float64 { return float64(median(a)) / float64(median(b)) }

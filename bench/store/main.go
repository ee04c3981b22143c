// Command store-bench compares uploads through jikken's S3 store with a plain minio-go loop of
// the same objects to the same server: 1,000 small trial records and one large artifact.
// bench/store/run.sh starts a MinIO and runs it; see docs/store.md for the figures.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/jikken-dev/jikken/bench/s3bench"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/s3"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "store-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	records := flag.Int("records", 1000, "small trial records to upload")
	bigMiB := flag.Int("artifact-mib", 256, "size of the large artifact in MiB")
	rounds := flag.Int("rounds", 3, "rounds; the table shows the median")
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
	js, err := s3.New(ctx, "s3://"+*bucket+"/jikken", cfg)
	if err != nil {
		return err
	}
	runs := store.Runs{Blob: js}

	recs := trialRecords(*records)
	bodies := make([][]byte, len(recs))
	for i, r := range recs {
		b, _ := json.MarshalIndent(r, "", "  ")
		bodies[i] = append(b, '\n')
	}
	tmp, err := os.MkdirTemp("", "store-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	big := filepath.Join(tmp, "model.bin")
	if err := writeRandom(big, int64(*bigMiB)<<20); err != nil {
		return err
	}

	phases := []struct {
		name   string
		jikken func(round int) error
		plain  func(round int) error
	}{
		{
			fmt.Sprintf("%d trial records (Runs.WriteTrial)", len(recs)),
			func(round int) error {
				for _, r := range recs {
					r.Run = fmt.Sprintf("bench-%d", round)
					if err := runs.WriteTrial(ctx, r); err != nil {
						return err
					}
				}
				return nil
			},
			func(round int) error {
				for i, r := range recs {
					key := fmt.Sprintf("plain/runs/bench-%d/trials/%s/trial.json", round, r.Name)
					if _, err := plain.PutObject(ctx, *bucket, key, bytes.NewReader(bodies[i]), int64(len(bodies[i])), minio.PutObjectOptions{}); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			fmt.Sprintf("one %d MiB artifact (store.PutFile)", *bigMiB),
			func(round int) error {
				return store.PutFile(ctx, js, fmt.Sprintf("runs/bench-%d/trials/t/artifacts/model.bin", round), big)
			},
			func(round int) error {
				_, err := plain.FPutObject(ctx, *bucket, fmt.Sprintf("plain/runs/bench-%d/trials/t/artifacts/model.bin", round), big, minio.PutObjectOptions{})
				return err
			},
		},
	}

	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "upload\tjikken s3 store\tplain minio-go\tratio\t\n")
	for _, p := range phases {
		var tj, tp []time.Duration
		for round := range *rounds {
			// Alternate who goes first, so that warm-up and server state favour neither.
			first, second := p.jikken, p.plain
			if round%2 == 1 {
				first, second = p.plain, p.jikken
			}
			d1, err := timed(func() error { return first(round) })
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			d2, err := timed(func() error { return second(round) })
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			if round%2 == 1 {
				d1, d2 = d2, d1
			}
			tj, tp = append(tj, d1), append(tp, d2)
		}
		mj, mp := median(tj), median(tp)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fx\t\n", p.name, mj.Round(time.Millisecond), mp.Round(time.Millisecond), float64(mj)/float64(mp))
	}
	return tw.Flush()
}

func timed(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// trialRecords makes records shaped like the runner's, about 600 bytes each as JSON.
func trialRecords(n int) []*store.TrialRecord {
	out := make([]*store.TrialRecord, n)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		code, seed := 0, int64(i%5)
		end := start.Add(time.Duration(i) * time.Second)
		out[i] = &store.TrialRecord{
			Name: fmt.Sprintf("sweep-%04d", i), Index: i, Group: "sweep", Status: store.Succeeded,
			Params: map[string]any{"algo": []string{"a", "b", "c"}[i%3], "lr": 0.001 * float64(i%10+1)},
			Seed:   &seed, ExitCode: &code, Backend: "local",
			Attempts: []store.Attempt{{N: 1, Started: start, Finished: end, ExitCode: &code}},
			Started:  &start, Finished: &end,
		}
	}
	return out
}

func writeRandom(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

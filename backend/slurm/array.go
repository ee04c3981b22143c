package slurm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jikken-dev/jikken/runner"
)

// maxArray is the most tasks one array gets: Slurm's default MaxArraySize is 1001.
const maxArray = 1000

// arrayScript is the batch script of a job array. Task i runs the attempt on line i of the list
// given as its argument (trial, attempt and folder, tab-separated). The attempt's environment
// and command come NUL-separated from a file in its folder, so no value is read by a shell;
// bash reads that file (POSIX sh cannot read NUL-separated data).
const arrayScript = `#!/bin/bash
# Written by jikken: one task of a job array runs one attempt of a trial. Which attempt is
# line $SLURM_ARRAY_TASK_ID of the list given as the argument; its environment, command and
# arguments are in its folder's slurm-task.args, NUL-separated.
mapfile -t lines < "$1" || exit 125
line=${lines[$SLURM_ARRAY_TASK_ID]}
dir=${line#*$'\t'}
dir=${dir#*$'\t'}
exec >"$dir/stdout.log" 2>"$dir/stderr.log" || exit 125
mapfile -d '' -t args < "$dir/slurm-task.args" || exit 125
cd "$dir" || exit 125
exec env "${args[@]}"
`

// arrayComment labels an array's jobs with the run and the list that maps tasks to trials.
func arrayComment(run, list string) string { return "jikken run=" + run + " array=" + list }

// parseArrayComment reads what arrayComment wrote.
func parseArrayComment(c string) (run, list string, ok bool) {
	rest, found := strings.CutPrefix(c, "jikken run=")
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, " array=")
}

// taskOf reads which trial and attempt task id ("123_4") of an array runs, from its list.
func taskOf(list, id string) (trial string, attempt int, ok bool) {
	_, idx, found := strings.Cut(id, "_")
	i, err := strconv.Atoi(idx)
	if !found || err != nil {
		return "", 0, false
	}
	f, err := os.Open(list)
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 0; sc.Scan(); n++ {
		if n == i {
			fields := strings.SplitN(sc.Text(), "\t", 3)
			if len(fields) != 3 {
				return "", 0, false
			}
			a, err := strconv.Atoi(fields[1])
			return fields[0], a, err == nil
		}
	}
	return "", 0, false
}

// batch is attempts with the same request waiting to be submitted together.
type batch struct {
	reqs []*request
	once sync.Once
}

type request struct {
	a    *runner.Attempt
	done chan result
}

type result struct {
	p   *process
	err error
}

// enqueue adds a to the batch of its request and waits for the batch's submission.
func (b *Backend) enqueue(a *runner.Attempt) (runner.Process, error) {
	key := strings.Join(b.submitArgs(a.Trial), "\x00")
	r := &request{a: a, done: make(chan result, 1)}
	b.bmu.Lock()
	bt := b.batches[key]
	if bt == nil {
		bt = &batch{}
		b.batches[key] = bt
		time.AfterFunc(b.cfg.Linger, func() { b.flush(key, bt) })
	}
	bt.reqs = append(bt.reqs, r)
	full := len(bt.reqs) >= maxArray
	b.bmu.Unlock()
	if full {
		go b.flush(key, bt)
	}
	res := <-r.done
	if res.err != nil {
		return nil, res.err
	}
	return res.p, nil
}

// flush submits bt once: alone, an attempt is a job of its own; together, one array.
func (b *Backend) flush(key string, bt *batch) {
	bt.once.Do(func() {
		b.bmu.Lock()
		if b.batches[key] == bt {
			delete(b.batches, key)
		}
		reqs := bt.reqs
		b.bmu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if len(reqs) == 1 {
			p, err := b.submitOne(ctx, reqs[0].a)
			reqs[0].done <- result{p, err}
			return
		}
		procs, err := b.submitArray(ctx, reqs)
		for i, r := range reqs {
			if err != nil {
				r.done <- result{err: err}
				continue
			}
			r.done <- result{p: procs[i]}
		}
	})
}

var arraySeq atomic.Int64

// submitArray submits reqs as one job array, task i running reqs[i]'s attempt.
func (b *Backend) submitArray(ctx context.Context, reqs []*request) ([]*process, error) {
	first := reqs[0].a
	dir := filepath.Join(filepath.Dir(first.Dir), fmt.Sprintf("slurm-array-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), arraySeq.Add(1)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("slurm: make the array's folder: %w", err)
	}
	var list bytes.Buffer
	for _, r := range reqs {
		a := r.a
		var args bytes.Buffer
		for _, kv := range b.environ(a.Env) {
			args.WriteString(kv)
			args.WriteByte(0)
		}
		for _, arg := range append([]string{"/bin/sh", filepath.Join(a.Dir, "slurm-job.sh"), workdir(a)}, argv(a.Trial.Cmd)...) {
			args.WriteString(arg)
			args.WriteByte(0)
		}
		if err := os.WriteFile(filepath.Join(a.Dir, "slurm-task.args"), args.Bytes(), 0o600); err != nil {
			return nil, fmt.Errorf("slurm: write the environment of %s: %w", a.Trial.Name, err)
		}
		fmt.Fprintf(&list, "%s\t%d\t%s\n", a.Trial.Name, a.N, a.Dir)
	}
	listPath := filepath.Join(dir, "tasks")
	scriptPath := filepath.Join(dir, "slurm-array.sh")
	envPath := filepath.Join(dir, "slurm-array.env")
	for path, data := range map[string][]byte{
		listPath: list.Bytes(), scriptPath: []byte(arrayScript),
		// The tasks' own environments are in their args files; this is what finds bash and env.
		envPath: []byte("PATH=/usr/local/bin:/usr/bin:/bin\x00"),
	} {
		if err := os.WriteFile(path, data, 0o755); err != nil {
			return nil, fmt.Errorf("slurm: write the array's files: %w", err)
		}
	}
	tasks := "0-" + strconv.Itoa(len(reqs)-1)
	if b.cfg.ArrayLimit > 0 {
		tasks += "%" + strconv.Itoa(b.cfg.ArrayLimit)
	}
	args := append(b.submitArgs(first.Trial),
		"--parsable",
		"--array="+tasks,
		"--job-name="+jobName(first.RunID),
		"--comment="+arrayComment(first.RunID, listPath),
		// What Slurm itself says about a task (a cancellation, a node failure).
		"--output="+filePattern(dir)+"/task-%a.log",
		"--export=ALL",
		"--export-file="+envPath,
		scriptPath, listPath)
	out, err := b.slurmIn(ctx, dir, "sbatch", args...)
	if err == nil {
		var id string
		if id, err = jobID(out); err == nil {
			left := atomic.Int64{}
			left.Store(int64(len(reqs)))
			procs := make([]*process, len(reqs))
			for i, r := range reqs {
				procs[i] = &process{b: b, id: id + "_" + strconv.Itoa(i), run: r.a.RunID, trial: r.a.Trial.Name, queued: r.a.Queued, memory: r.a.Trial.Resources.Memory, done: make(chan struct{}),
					onEnd: func() {
						if left.Add(-1) == 0 {
							_ = os.RemoveAll(dir)
						}
					}}
				b.watch(procs[i])
			}
			return procs, nil
		}
	}
	_ = os.RemoveAll(dir)
	names := make([]string, 0, 3)
	for _, r := range reqs[:min(3, len(reqs))] {
		names = append(names, r.a.Trial.Name)
	}
	return nil, fmt.Errorf("slurm submit an array of %d attempts (%s...): %w", len(reqs), strings.Join(names, ", "), err)
}

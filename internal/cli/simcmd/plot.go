package simcmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/sim/simplot"
)

func newPlotCmd(f *cmdutil.Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "plot OUTDIR",
		Short: "Draw PNG charts of a finished run (utilisation, queue, JCT, per-user distributions and GPU shares)",
		Long: `plot reads the files 'jikken sim run' wrote to a folder and writes next to them:
  utilisation.png         requested fraction of each resource over time
  queue.png               pending and running pods over time
  jct_cdf.png             distribution of job completion times
  users_jct_cdf.png       the same, one line per user
  users_wait_cdf.png      distribution of waits (submission to first start) per user
  users_slowdown_cdf.png  distribution of slowdowns (JCT / duration) per user
  user_share.png          each user's share of the GPUs over time
Jobs are read from jobs.csv (a gang is one job); folders written before jobs.csv existed are
plotted from pods.csv, without the per-user share.`,
		Example: `  jikken sim run examples/sim/users.yaml --dir out && jikken sim plot out`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlot(f, args[0], format)
		},
	}
	cmdutil.FormatFlag(cmd, &format, "text", "json")
	return cmd
}

func readTable(path string) (*simplot.Table, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plot: %w; run 'jikken sim run SCENARIO --dir DIR' first", err)
	}
	defer file.Close()
	t, err := simplot.ReadTable(file)
	if err != nil {
		return nil, fmt.Errorf("plot: %s: %w", path, err)
	}
	return t, nil
}

// chart is one file to draw.
type chart struct {
	file string
	draw func(io.Writer) error
}

func runPlot(f *cmdutil.Factory, dir, format string) error {
	timeline, err := readTable(filepath.Join(dir, "timeline.csv"))
	if err != nil {
		return err
	}
	jobsFile := filepath.Join(dir, "jobs.csv")
	if _, err := os.Stat(jobsFile); err != nil {
		jobsFile = filepath.Join(dir, "pods.csv")
	}
	jobs, err := readTable(jobsFile)
	if err != nil {
		return err
	}
	charts := []chart{
		{"utilisation.png", func(w io.Writer) error { return simplot.Utilisation(w, timeline, "Requested share of capacity") }},
		{"queue.png", func(w io.Writer) error { return simplot.Queue(w, timeline, "Pending and running pods") }},
		{"jct_cdf.png", func(w io.Writer) error { return simplot.JCTCDF(w, jobs, "Job completion time") }},
		{"users_jct_cdf.png", func(w io.Writer) error {
			return simplot.CDFs(w, "Job completion time per user", "job completion time (s, log scale)", simplot.ByUser(jobs, "jct_s", 0))
		}},
		// Waits of zero are common; shifting by a second keeps them on the log axis.
		{"users_wait_cdf.png", func(w io.Writer) error {
			return simplot.CDFs(w, "Wait per user", "wait + 1 s (log scale)", simplot.ByUser(jobs, "wait_s", 1))
		}},
		{"users_slowdown_cdf.png", func(w io.Writer) error {
			return simplot.CDFs(w, "Slowdown per user", "slowdown: JCT / duration (log scale)", simplot.ByUser(jobs, "slowdown", 0))
		}},
	}
	if shares, err := readTable(filepath.Join(dir, "user_share.csv")); err == nil {
		charts = append(charts, chart{"user_share.png", func(w io.Writer) error { return simplot.UserShare(w, shares, "Share of the GPUs per user") }})
	}
	written, err := drawCharts(dir, charts)
	if err != nil {
		return err
	}
	return listFiles(f, format, written)
}

// drawCharts writes each chart into dir and returns the paths written.
func drawCharts(dir string, charts []chart) ([]string, error) {
	var written []string
	for _, c := range charts {
		path := filepath.Join(dir, c.file)
		if err := writeFile(path, c.draw); err != nil {
			return written, fmt.Errorf("plot %s: %w", c.file, err)
		}
		written = append(written, path)
	}
	return written, nil
}

func listFiles(f *cmdutil.Factory, format string, written []string) error {
	if format == "json" {
		return cmdutil.WriteJSON(f.IO.Out, map[string][]string{"files": written})
	}
	for _, w := range written {
		fmt.Fprintln(f.IO.Out, "wrote", w)
	}
	return nil
}

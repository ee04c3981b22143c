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
		Short: "Draw PNG charts of a finished run (utilisation, queue, JCT distribution)",
		Long: `plot reads timeline.csv and pods.csv from a folder written by 'jikken sim run' and writes
utilisation.png (requested fraction of each resource over time), queue.png (pending and running
pods over time) and jct_cdf.png (distribution of job completion times) next to them.`,
		Example: `  jikken sim run examples/sim/gavel.yaml --dir out && jikken sim plot out`,
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

func runPlot(f *cmdutil.Factory, dir, format string) error {
	timeline, err := readTable(filepath.Join(dir, "timeline.csv"))
	if err != nil {
		return err
	}
	pods, err := readTable(filepath.Join(dir, "pods.csv"))
	if err != nil {
		return err
	}
	charts := []struct {
		file string
		draw func(io.Writer) error
	}{
		{"utilisation.png", func(w io.Writer) error { return simplot.Utilisation(w, timeline, "Requested share of capacity") }},
		{"queue.png", func(w io.Writer) error { return simplot.Queue(w, timeline, "Pending and running pods") }},
		{"jct_cdf.png", func(w io.Writer) error { return simplot.JCTCDF(w, pods, "Job completion time") }},
	}
	var written []string
	for _, c := range charts {
		path := filepath.Join(dir, c.file)
		if err := writeFile(path, c.draw); err != nil {
			return err
		}
		written = append(written, path)
	}
	if format == "json" {
		return cmdutil.WriteJSON(f.IO.Out, map[string][]string{"files": written})
	}
	for _, w := range written {
		fmt.Fprintln(f.IO.Out, "wrote", w)
	}
	return nil
}

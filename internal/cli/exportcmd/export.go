package exportcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/backend/kubernetes"
	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/internal/cmdutil/expflags"
	"github.com/jikken-dev/jikken/runner"
	"github.com/jikken-dev/jikken/store"
)

// NewCmd returns the `export` command group.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Render an experiment for another workflow engine",
	}
	cmd.AddCommand(newArgoCmd(f))
	return cmd
}

// ArgoOptions are the flags of `jikken export argo`.
type ArgoOptions struct {
	f    *cmdutil.Factory
	File string
	// Format is yaml or json; Out the file to write (default stdout).
	Format        string
	Out           string
	out           *cmdutil.PathOutput
	Namespace     string
	ExecutorImage string
	GitImage      string
	StoreSecret   string
	ServiceAcct   string
	ImageHasCode  bool
	NoRecord      bool
	Jobs          int
	FailFast      bool
	Experiment    expflags.Flags
}

func newArgoCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ArgoOptions{f: f}
	cmd := &cobra.Command{
		Use:   "argo FILE",
		Short: "Write an Argo Workflow that runs the experiment and stores its results",
		Long: `Export argo expands FILE into trials and writes an Argo Workflow (to stdout, or --out FILE; -o json for JSON): a DAG
with one task per trial, after/depends edges as Argo depends expressions, services as daemon
steps, retries as retryStrategy, -j as parallelism, resources as requests and limits. Every pod
runs the trial through 'jikken trial-exec', which uploads the trial's outputs and record to the
store (--store, an s3:// URL the cluster reaches, credentials from --store-secret). The run is
recorded in the store now, so once the workflow ran, 'jikken results RUN' reads it back.`,
		Example: `  jikken export argo sweep.jsonnet --store s3://bucket/runs --store-secret jikken-s3 --out wf.yaml
  argo submit wf.yaml && jikken results latest --store s3://bucket/runs`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if err := o.out.Resolve(f.IO); err != nil {
				return err
			}
			o.Format, o.Out = o.out.Format, o.out.Path
			return runArgo(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	o.out = cmdutil.AddPathOutput(cmd, "out", "", "write the workflow to this file (default stdout)", "yaml", "json")
	fl.StringVar(&o.Namespace, "namespace", os.Getenv("JIKKEN_K8S_NAMESPACE"), "namespace of the workflow (default: argo submit's)")
	fl.StringVar(&o.ExecutorImage, "executor-image", os.Getenv("JIKKEN_K8S_EXECUTOR_IMAGE"), "the jikken image whose init container installs the executor")
	fl.StringVar(&o.GitImage, "git-image", os.Getenv("JIKKEN_K8S_GIT_IMAGE"), "image with git for the code-snapshot checkout")
	fl.StringVar(&o.StoreSecret, "store-secret", os.Getenv("JIKKEN_K8S_STORE_SECRET"), "Secret holding the store's credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)")
	fl.StringVar(&o.ServiceAcct, "service-account", os.Getenv("JIKKEN_K8S_SERVICE_ACCOUNT"), "service account of the workflow's pods")
	fl.BoolVar(&o.ImageHasCode, "image-has-code", false, "the trial images contain the code: skip the code-snapshot checkout")
	fl.BoolVar(&o.NoRecord, "no-record", false, "do not record the run in the store (the YAML only)")
	fl.IntVarP(&o.Jobs, "jobs", "j", 4, "how many trials run at once (the workflow's parallelism)")
	fl.BoolVar(&o.FailFast, "fail-fast", false, "stop scheduling trials once one fails")
	o.Experiment.Add(cmd)
	return cmd
}

func runArgo(ctx context.Context, o *ArgoOptions) error {
	if o.Jobs < 1 {
		return cmdutil.UsageError("-j must be at least 1")
	}
	opts, err := o.Experiment.Options(o.f)
	if err != nil {
		return err
	}
	exp, err := experiment.Load(o.File, opts)
	if err != nil {
		return err
	}
	runID := runner.NewRunID(exp.Name, time.Now())
	if exp.UsesRunID {
		opts.RunID = runID
		if exp, err = experiment.Load(o.File, opts); err != nil {
			return err
		}
	}
	blob, err := store.Open(ctx, o.f.StoreURL)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(blob.Location(), "s3://") && !o.NoRecord {
		fmt.Fprintf(o.f.IO.ErrOut, "warning: store %s is not an s3:// URL; the workflow's pods must reach it to upload results\n", blob.Location())
	}
	host, _ := os.Hostname()
	m := &store.Manifest{
		RunID: runID, Experiment: exp.Name, File: exp.Path, Form: exp.Form,
		Created: time.Now().UTC(), Host: host, User: userName(),
		Backend: "argo", Options: store.RunOptions{Jobs: o.Jobs, FailFast: o.FailFast, ExtStr: opts.ExtStr, TLAStr: opts.TLAStr},
		Sources: exp.Sources, Evaluated: exp.Evaluated, Trials: exp.Trials,
	}
	cfg := kubernetes.Config{
		Namespace: o.Namespace, ExecutorImage: o.ExecutorImage, GitImage: o.GitImage,
		StoreURL: blob.Location(), StoreSecret: o.StoreSecret, ServiceAccount: o.ServiceAcct, ImageHasCode: o.ImageHasCode,
	}
	wf, err := cfg.WorkflowOf(m)
	if err != nil {
		return err
	}
	// status reads the Workflow back by these; resume and kill refuse the run with its name.
	m.Options.Backend = map[string]string{"workflow": wf.Metadata.Name}
	if o.Namespace != "" {
		m.Options.Backend["namespace"] = o.Namespace
	}
	var y []byte
	if o.Format == "json" {
		if y, err = json.MarshalIndent(wf, "", "  "); err == nil {
			y = append(y, '\n')
		}
	} else {
		y, err = wf.YAML()
	}
	if err != nil {
		return err
	}
	if !o.NoRecord {
		runs := store.Runs{Blob: blob}
		if err := runs.WriteManifest(ctx, m); err != nil {
			return fmt.Errorf("record run: %w", err)
		}
		now := time.Now().UTC()
		if err := runs.WriteState(ctx, runID, &store.RunState{Status: store.Running, Started: now}); err != nil {
			return fmt.Errorf("record run: %w", err)
		}
	}
	if o.Out == "" {
		_, err = o.f.IO.Out.Write(y)
		return err
	}
	if err := os.WriteFile(o.Out, y, 0o644); err != nil {
		return err
	}
	abs, _ := filepath.Abs(o.Out)
	fmt.Fprintf(o.f.IO.ErrOut, "run %s: %d trials written to %s; submit with: argo submit %s (workflow %s)\n", runID, len(m.Trials), abs, o.Out, wf.Metadata.Name)
	return nil
}

func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jikken-dev/jikken/internal/cmdutil"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/ui"
)

// uiOptions are the inputs of `jikken ui`.
type uiOptions struct {
	Factory *cmdutil.Factory
	Addr    string
	Token   string
	Format  string
	// AllowDelete offers to delete runs from their pages, each after typing its id.
	AllowDelete bool
	// ready is called with the URL once the server listens (tests).
	ready func(url string)
}

func newUICmd(f *cmdutil.Factory) *cobra.Command {
	opts := &uiOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Browse the store's runs, trials, logs and statistics in a web browser",
		Long: `UI serves the runs of the store as web pages: the runs with their status, each run's trials
(params, seed, status, attempts, exit code, duration, final metrics; sortable and filterable),
each trial's attempts with their logs and its stored files, and the rank tests, effect sizes and
critical-difference diagram of 'jikken compare', for one run or pooled across runs. Pages of runs
in progress update by themselves, whichever machine the runner works on.

The pages only read the store, unless --allow-delete offers to delete runs (each after typing
its id; never a run whose runner is alive). The server listens on 127.0.0.1 unless --addr says
otherwise; on any other address it requires a token (--token, or one made up and printed in the
URL).
Every page's data is also JSON for scripts: /api/runs, /api/runs/RUN,
/api/runs/RUN/trials/TRIAL, /api/runs/RUN/stats?metric=M&by=COL&pair_by=COL&dir=min,
/api/compare?run=A&run=B&metric=M.`,
		Example: `  jikken ui
  jikken ui --store s3://lab/jikken --addr 127.0.0.1:9000
  jikken ui --addr 0.0.0.0:8080 --token "$(openssl rand -hex 16)"
  jikken ui --addr 127.0.0.1:0 -o json   # a free port; prints {"url": ...}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUI(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "address to listen on (HOST:PORT; port 0 picks a free one)")
	cmd.Flags().BoolVar(&opts.AllowDelete, "allow-delete", false, "offer to delete runs (each after typing its id; never a run whose runner is alive)")
	cmd.Flags().StringVar(&opts.Token, "token", "", "token every request must carry (default: none on loopback, a random one elsewhere)")
	cmdutil.FormatFlag(cmd, &opts.Format, "text", "json")
	return cmd
}

func runUI(ctx context.Context, opts *uiOptions) error {
	format, err := cmdutil.CheckFormat(opts.Format, "text", "json")
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return cmdutil.UsageError("--addr %q: want HOST:PORT, e.g. 127.0.0.1:8080", opts.Addr)
	}
	loopback := isLoopback(host)
	token := opts.Token
	if !loopback && token == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		token = hex.EncodeToString(b)
	}
	loc := opts.Factory.StoreURL
	if !strings.Contains(loc, "://") || strings.HasPrefix(loc, "file://") {
		// A folder that is not there is a mistyped --store, not an empty store: the pages would
		// only say there are no runs.
		dir := strings.TrimPrefix(loc, "file://")
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("no store at %s: the folder does not exist; pass --store (or set $JIKKEN_STORE) to the folder or s3:// URL your runs are in", dir)
		}
	}
	b, err := store.Open(ctx, loc)
	if err != nil {
		return err
	}
	me, _ := os.Hostname()
	srv, err := ui.New(store.Runs{Blob: b}, ui.Options{Token: token, LoopbackOnly: loopback, Host: me, AllowDelete: opts.AllowDelete})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("ui: %w; pick another address with --addr (port 0 takes a free one)", err)
	}
	url := "http://" + ln.Addr().String() + "/"
	if token != "" {
		url += "?token=" + token
	}
	ios := opts.Factory.IO
	if format == "json" {
		if err := cmdutil.WriteJSON(ios.Out, map[string]string{"url": url, "store": b.Location()}); err != nil {
			ln.Close()
			return err
		}
	} else {
		fmt.Fprintf(ios.Out, "serving %s at %s\n", b.Location(), url)
		if !loopback {
			fmt.Fprintf(ios.ErrOut, "listening beyond this machine: anyone with the token can read the store's runs; the traffic is plain HTTP\n")
		}
		fmt.Fprintln(ios.ErrOut, "press Ctrl-C to stop")
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	if opts.ready != nil {
		opts.ready(url)
	}
	select {
	case err := <-done:
		return fmt.Errorf("ui: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

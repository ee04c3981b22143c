// Package app builds a jikken binary with your own simulator plugins, without a fork: the way
// a team builds kube-scheduler with out-of-tree plugins. A main package of a few lines,
//
//	func main() { os.Exit(app.Main(app.WithSimPlugin("GPUClass", gpuclass.New))) }
//
// gives a jikken whose `sim run` and `sim compare` accept GPUClass at any extension point of a
// kube-default scenario, with its arguments under scheduler.pluginConfig. examples/sim/plugin
// is a complete example.
//
// A kube-scheduler framework plugin (k8s.io/kube-scheduler/framework) registers the same way,
// with the factory it gives kube-scheduler's app.WithPlugin:
//
//	func main() { os.Exit(app.Main(app.WithFrameworkPlugin("GPUClass", gpuclass.New))) }
//
// and kube-framework scenarios name it (examples/sim/framework).
package app

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/jikken-dev/jikken/internal/cli"
	"github.com/jikken-dev/jikken/internal/iostreams"
	"github.com/jikken-dev/jikken/sim/kubehost"
	"github.com/jikken-dev/jikken/sim/scheduler"
)

// Option configures the binary.
type Option func(*options)

type options struct {
	plugins   map[string]scheduler.PluginFactory
	framework map[string]kubehost.PluginFactory
	errs      []string
}

// WithSimPlugin registers a simulator plugin factory under name, the name scenarios use.
func WithSimPlugin(name string, factory scheduler.PluginFactory) Option {
	return func(o *options) {
		register(o, "WithSimPlugin", name, factory, factory == nil, scheduler.StockPlugins(), o.plugins)
	}
}

// WithFrameworkPlugin registers a kube-scheduler framework plugin factory under name, the name
// kube-framework scenarios use. The factory has the type kube-scheduler's registry takes, so
// the one given to k8s.io/kubernetes/cmd/kube-scheduler/app.WithPlugin fits unchanged.
func WithFrameworkPlugin(name string, factory kubehost.PluginFactory) Option {
	return func(o *options) {
		register(o, "WithFrameworkPlugin", name, factory, factory == nil, kubehost.StockPlugins(), o.framework)
	}
}

// register adds a factory under name to into, or notes why it cannot: no name or factory
// (missing), a stock plugin's name, or a name registered before.
func register[F any](o *options, opt, name string, factory F, missing bool, stock []string, into map[string]F) {
	_, taken := into[name]
	switch {
	case name == "" || missing:
		o.errs = append(o.errs, fmt.Sprintf("%s(%q): the name and the factory must be set", opt, name))
	case slices.Contains(stock, name):
		o.errs = append(o.errs, fmt.Sprintf("%s(%q): a stock plugin has that name; choose another", opt, name))
	case taken:
		o.errs = append(o.errs, fmt.Sprintf("%s(%q): registered twice", opt, name))
	default:
		into[name] = factory
	}
}

func build(opts []Option) (cli.Plugins, error) {
	o := &options{plugins: map[string]scheduler.PluginFactory{}, framework: map[string]kubehost.PluginFactory{}}
	for _, opt := range opts {
		opt(o)
	}
	if len(o.errs) > 0 {
		return cli.Plugins{}, fmt.Errorf("jikken: %s", o.errs[0])
	}
	return cli.Plugins{Sim: o.plugins, Framework: o.framework}, nil
}

// Main runs jikken with the process's arguments and the given options, and returns the exit
// code for os.Exit.
func Main(opts ...Option) int {
	plugins, err := build(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return cli.MainWith(plugins)
}

// run is Main on given streams and arguments, for tests.
func run(ctx context.Context, ios *iostreams.IOStreams, args []string, opts ...Option) int {
	plugins, err := build(opts)
	if err != nil {
		fmt.Fprintln(ios.ErrOut, err)
		return 1
	}
	return cli.RunWith(ctx, ios, args, plugins)
}

package cli_test

import (
	"context"
	"fmt"

	"github.com/jikken-dev/jikken/runner"
)

// widgets is a backend registered by this test package, as any backend's package registers
// itself: it runs trials as the local backend does, keeps "widgets" of each run, and has
// settings of its own. The backend_registered script shows that the commands take all of it
// from its registration, with no change to internal/cli.
type widgets struct {
	runner.Backend
	zone string
}

// widgetSettings are the widgets backend's settings: one recorded with the run, one not.
type widgetSettings struct {
	Zone  string `flag:"widget-zone" record:"zone" was:"widget_zone" help:"zone of the widgets"`
	Shape string `flag:"widget-shape" help:"shape of the widgets"`
}

func (w *widgets) Name() string { return "widgets" }

// Settings is what a run records: the zone.
func (w *widgets) Settings() map[string]string { return map[string]string{"zone": w.zone} }

// DeleteRun deletes a run's widgets: two, in the zone it was opened for.
func (w *widgets) DeleteRun(ctx context.Context, runID string) (int, error) {
	if w.zone == "" {
		return 0, fmt.Errorf("no zone: the run's recorded zone was not read")
	}
	return 2, nil
}

func init() {
	local, _ := runner.Lookup("local")
	runner.Register(runner.Descriptor{
		Name:     "widgets",
		Settings: func() any { return &widgetSettings{} },
		Caps:     runner.Capabilities{OnThisHost: true, DeletesRuns: true},
		Noun:     "widget",
		LostLog:  "a widget ate it",
		Open: func(ctx context.Context, env runner.Env, s any) (runner.Backend, error) {
			b, err := local.Open(ctx, env, nil)
			return &widgets{Backend: b, zone: s.(*widgetSettings).Zone}, err
		},
	})
}

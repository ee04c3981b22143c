package cli

import "github.com/jikken-dev/jikken/internal/cli/simcmd"

func init() { register(simcmd.NewCmd) }

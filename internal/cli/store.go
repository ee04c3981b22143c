package cli

import "github.com/jikken-dev/jikken/internal/cli/storecmd"

func init() { register(storecmd.NewCmd) }

package cli

import "github.com/jikken-dev/jikken/internal/cli/ghostcmd"

func init() { register(ghostcmd.NewCmd) }

package cli

import "github.com/jikken-dev/jikken/internal/cli/execcmd"

func init() { register(execcmd.NewCmd) }

package cli

import "github.com/jikken-dev/jikken/internal/cli/exportcmd"

func init() {
	exportcmd.Version = Version
	register(exportcmd.NewCmd)
}

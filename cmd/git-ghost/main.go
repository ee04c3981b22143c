// Command git-ghost sends the exact state of a working tree through a ghost git repository; on
// PATH it also runs as `git ghost`. See `git-ghost --help` and docs/ghost.md.
package main

import (
	"os"

	"github.com/jikken-dev/jikken/internal/cli/ghostcmd"
)

func main() { os.Exit(ghostcmd.Main()) }

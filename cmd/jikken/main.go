// Command jikken runs reproducible experiments; see `jikken --help`.
package main

import (
	"os"

	"github.com/jikken-dev/jikken/internal/cli"
)

func main() { os.Exit(cli.Main()) }

// Package layers holds no code: its test keeps the repository's import layers (see
// docs/architecture.md), so that the runner's pure core stays free of I/O and the store stays
// free of the experiment parser and of git.
package layers

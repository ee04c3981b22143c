// Package layers holds no code: its test keeps the repository's import layers (see
// docs/architecture.md), so that the runner's pure core stays free of I/O, the store stays free
// of the experiment parser and of git, and the commands name no backend outside their one
// import list.
package layers

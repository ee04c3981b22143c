// Package version says which jikken is running, from what the Go toolchain stamped into the
// binary (module version, VCS revision and whether the working tree had changes), so every run,
// trial record and executor image can name the exact code that produced it.
package version

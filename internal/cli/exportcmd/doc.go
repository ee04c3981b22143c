// Package exportcmd is `jikken export`: it renders an experiment for another engine (an Argo
// Workflow) and records the run in the store so `jikken results` reads it back.
package exportcmd

package experiment

import "github.com/jikken-dev/jikken/trial"

// The trial spec lives in package trial, a leaf the runner's core and the store share without
// linking the parser; these names keep experiment.Trial and its parts for the parser's callers.
type (
	Trial      = trial.Trial
	Checkpoint = trial.Checkpoint
	Toleration = trial.Toleration
	Command    = trial.Command
	Dependency = trial.Dependency
	Condition  = trial.Condition
	Restart    = trial.Restart
	Health     = trial.Health
	Resources  = trial.Resources
	Duration   = trial.Duration
)

// Defaults and choices of a trial's spec (see package trial).
const (
	DefaultRequeues         = trial.DefaultRequeues
	DefaultCheckpointBefore = trial.DefaultCheckpointBefore
	DefaultCheckpointEvery  = trial.DefaultCheckpointEvery
	DefaultCheckpointMax    = trial.DefaultCheckpointMax

	Started   = trial.Started
	Healthy   = trial.Healthy
	Completed = trial.Completed
	Succeeded = trial.Succeeded

	RestartNo        = trial.RestartNo
	RestartOnFailure = trial.RestartOnFailure
	RestartAlways    = trial.RestartAlways
)

// CheckpointSignals are the signals a trial may ask to be warned with.
var CheckpointSignals = trial.CheckpointSignals

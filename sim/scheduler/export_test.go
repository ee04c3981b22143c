package scheduler

// SetExhaustive turns the framework's shortcuts off, for equivalence tests.
func SetExhaustive(f *Framework) { f.exhaustive = true }

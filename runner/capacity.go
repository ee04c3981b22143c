package runner

// MemoryReserve is the memory a host keeps from its trials for the system and the runner: a
// tenth of it, at least 1 GiB. Admission by memory counts what is left, so trials whose
// requests add up to the whole memory do not start together.
func MemoryReserve(host int64) int64 {
	return max(host/10, 1<<30)
}

// TrialMemory is the memory a host's trials may hold at once.
func TrialMemory(host int64) int64 {
	return max(0, host-MemoryReserve(host))
}

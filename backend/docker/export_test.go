package docker

// Hooks for the integration tests (package docker_test).
var (
	InputArchive   = inputArchive
	ExtractOutputs = extractOutputs
)

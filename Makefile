.PHONY: test-k8s
# test-k8s builds (or reuses) the control plane under ~/.cache/jikken-test/bin and runs the
# Kubernetes backend's tests and the CLI's cluster scripts (internal/cli/testdata/cluster) against it.
test-k8s:
	JIKKEN_K8S_BIN="$$(scripts/ci/k8s.sh | tail -n 1)" go test -count=1 -timeout 40m -run 'TestCluster' ./backend/kubernetes/... ./internal/cli ./sim/fidelity

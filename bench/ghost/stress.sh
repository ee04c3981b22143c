#!/usr/bin/env bash
# The full counts of the tests in cmd/git-ghost/stress_test.go (go test runs a few rounds):
# 10 rounds of 16 concurrent pushes and 16 concurrent pulls on a cold cache, and 30 SIGKILLs at
# random moments of the pull of a ghost that changes 1,200 files. Prints each test's summary.
#
#   bench/ghost/stress.sh                 (from the module root)
#   GIT_GHOST_BIN=/path/to/git-ghost bench/ghost/stress.sh     (test another build)
#   JIKKEN_GHOST_KILL_SEED=N bench/ghost/stress.sh             (replay the kill moments)
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $(git --version)"
JIKKEN_GHOST_STRESS=full go test ./cmd/git-ghost -run 'TestConcurrentPushesAndPullsOnAColdCache|TestSIGKILLDuringPull' \
	-count=1 -v -timeout 60m 2>&1 | grep -v '^=== RUN' || true
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after"

#!/bin/sh
# Live metrics: a trial logging 100,000 points as fast as it can, alone, under the runner (local
# backend, folder store) and under the executor (S3 store on a local MinIO), and a trial logging
# 100 points a second read back every 100 ms. Prints a table: the trial's own time and slowdown,
# live chunks and PUTs per 1,000 points, and the time from a point's write to its being readable.
# Usage: bench/metrics/run.sh [-n N] [-rounds R] [-latency-points N] [-rate R]
# Needs the MinIO binary: $JIKKEN_MINIO, else it is built (or reused) by scripts/ci/minio.sh.
set -eu
cd "$(dirname "$0")/../.."

. bench/minio.sh

go build -o "$work/metrics-bench" ./bench/metrics
with_s3 "$work/metrics-bench" -bucket bench "$@"

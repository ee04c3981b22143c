#!/bin/sh
# Uploads 1,000 trial records and one 256 MiB artifact to a local MinIO, through jikken's s3
# store and through a plain minio-go loop, and prints a table of median times (3 rounds).
# Usage: bench/store/run.sh [-records N] [-artifact-mib M] [-rounds R]
# Needs the MinIO binary: $JIKKEN_MINIO, else it is built (or reused) by scripts/ci/minio.sh.
set -eu
cd "$(dirname "$0")/../.."

. bench/minio.sh

go build -o "$work/store-bench" ./bench/store
with_s3 "$work/store-bench" "$@"

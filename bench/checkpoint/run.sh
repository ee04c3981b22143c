#!/bin/sh
# Uploads and restores a checkpoint folder (default 1,000 files, 1 GiB) to a local MinIO through
# jikken's checkpoint package and through raw PUTs/GETs of a plain minio-go client, then saves
# the unchanged folder again (incremental), and prints a table of median times.
# Usage: bench/checkpoint/run.sh [-files N] [-mib M] [-rounds R] [-workers W]
# Needs the MinIO binary: $JIKKEN_MINIO, else it is built (or reused) by scripts/ci/minio.sh.
set -eu
cd "$(dirname "$0")/../.."

. bench/minio.sh

go build -o "$work/checkpoint-bench" ./bench/checkpoint
with_s3 "$work/checkpoint-bench" "$@"

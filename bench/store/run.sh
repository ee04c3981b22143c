#!/bin/sh
# Uploads 1,000 trial records and one 256 MiB artifact to a local MinIO, through jikken's s3
# store and through a plain minio-go loop, and prints a table of median times (3 rounds).
# Usage: bench/store/run.sh [-records N] [-artifact-mib M] [-rounds R]
# Needs the MinIO binary: $JIKKEN_MINIO, else it is built (or reused) by scripts/ci/minio.sh.
set -eu
cd "$(dirname "$0")/../.."

minio=${JIKKEN_MINIO:-$(scripts/ci/minio.sh)}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
MINIO_ROOT_USER=benchuser MINIO_ROOT_PASSWORD=bench-secret-123 MINIO_BROWSER=off MINIO_UPDATE=off \
	"$minio" server --quiet --address "127.0.0.1:$port" --console-address 127.0.0.1:0 "$work/data" >"$work/minio.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT INT TERM
until curl -fs "http://127.0.0.1:$port/minio/health/ready" >/dev/null 2>&1; do
	kill -0 $pid 2>/dev/null || { cat "$work/minio.log" >&2; exit 1; }
	sleep 0.2
done

go build -o "$work/store-bench" ./bench/store
AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_REGION=us-east-1 JIKKEN_S3_PATH_STYLE=true \
	AWS_ACCESS_KEY_ID=benchuser AWS_SECRET_ACCESS_KEY=bench-secret-123 JIKKEN_S3_CONFIG=/dev/null \
	TMPDIR="$work" "$work/store-bench" "$@"

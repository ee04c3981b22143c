#!/bin/sh
# Builds the pinned MinIO server from source (or reuses the cached build) and prints its path.
# Usage: JIKKEN_MINIO=$(scripts/ci/minio.sh)
# The binary is for tests only (store/s3, internal/cli/storecmd, bench/store); MinIO is not a
# dependency of jikken's go.mod: it is installed outside the module. A cold build takes several
# minutes on 2 cores; later calls return at once.
set -eu

MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
BIN_DIR=${JIKKEN_TEST_BIN:-${HOME}/.cache/jikken-test/bin}
BIN=$BIN_DIR/minio
STAMP=$BIN_DIR/minio.version

if [ -x "$BIN" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$MINIO_VERSION" ]; then
	echo "$BIN"
	exit 0
fi

mkdir -p "$BIN_DIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "minio.sh: building github.com/minio/minio@$MINIO_VERSION into $BIN_DIR (several minutes when cold)" >&2
# Outside any module, so jikken's go.mod and go.sum are not touched.
(cd "$work" && GOWORK=off GOFLAGS=-mod=mod GOBIN="$BIN_DIR" go install "github.com/minio/minio@$MINIO_VERSION") >&2
echo "$MINIO_VERSION" > "$STAMP"
echo "$BIN"

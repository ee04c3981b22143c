# Sourced by the benchmarks that need S3 (bench/store, bench/metrics): starts a MinIO of its own on
# a free loopback port with its data in a fresh $work folder, removed with it on exit, and defines
# with_s3 CMD..., which runs CMD with the environment that points jikken's s3 store at it.
# Needs the MinIO binary: $JIKKEN_MINIO, else it is built (or reused) by scripts/ci/minio.sh.
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

with_s3() {
	AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_REGION=us-east-1 JIKKEN_S3_PATH_STYLE=true \
		AWS_ACCESS_KEY_ID=benchuser AWS_SECRET_ACCESS_KEY=bench-secret-123 JIKKEN_S3_CONFIG=/dev/null \
		TMPDIR="$work" "$@"
}

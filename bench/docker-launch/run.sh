#!/bin/sh
# docker-launch: time to create, start, wait for and remove N containers of one scratch image
# running `true`, three ways on the same engine: `jikken run` (an N-trial matrix on the docker
# backend), a plain loop over the Engine API client (the engine's own pace), and docker-compose
# with N services when it is installed (up -d, wait for all, down). Same concurrency J for
# jikken and the loop; compose uses its own (COMPOSE_PARALLEL_LIMIT, default 64).
#
#   bench/docker-launch/run.sh [N] [J]      (default 100 8; JIKKEN_SRC=DIR to build from DIR)
set -eu
N=${1:-100}
J=${2:-8}
cd "$(dirname "$0")/../.."
command -v docker >/dev/null || { echo "docker-launch: needs the docker CLI" >&2; exit 1; }
command -v busybox >/dev/null || { echo "docker-launch: needs busybox (apt-get install busybox-static)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "docker-launch: no docker engine reachable" >&2; exit 1; }

tmp=$(mktemp -d)
image=jikken-bench-busybox:$$
cleanup() {
	(cd "$tmp/compose" 2>/dev/null && docker-compose -p jikkenbench$$ down --remove-orphans >/dev/null 2>&1) || true
	docker image rm -f "$image" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/image"
cp "$(command -v busybox)" "$tmp/image/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n' > "$tmp/image/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$image" "$tmp/image" >/dev/null 2>&1
# JIKKEN_SRC: build from another checkout (e.g. `git archive HEAD` when the working tree has
# work in progress that does not build).
src=${JIKKEN_SRC:-.}
(cd "$src" && go build -o "$tmp/jikken" ./cmd/jikken && go build -o "$tmp/sdk-loop" ./bench/docker-launch)

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l | xargs printf '%.2f'; }

cat > "$tmp/launch.jsonnet" <<JSONNET
{ name: "launch", matrix: { name: "c", params: { i: std.range(1, $N) }, image: "$image", cmd: ["true"] } }
JSONNET
t0=$(now)
JIKKEN_STORE="$tmp/store" "$tmp/jikken" run "$tmp/launch.jsonnet" --backend docker -j "$J" >/dev/null 2>"$tmp/jikken.log" || { cat "$tmp/jikken.log" >&2; exit 1; }
jikken=$(elapsed "$t0" "$(now)")
echo "jikken: $jikken s" >&2

sdk=$("$tmp/sdk-loop" -image "$image" -n "$N" -j "$J")
echo "SDK loop: $sdk s" >&2

compose=-
if command -v docker-compose >/dev/null; then
	mkdir -p "$tmp/compose"
	{
		echo 'version: "3"'
		echo 'services:'
		i=1
		while [ "$i" -le "$N" ]; do
			printf '  c%d:\n    image: %s\n    command: ["true"]\n' "$i" "$image"
			i=$((i + 1))
		done
	} > "$tmp/compose/docker-compose.yml"
	# `up` attached to 100 services hangs in docker-compose 1.29 here: start them detached and
	# wait for every container instead.
	t0=$(now)
	(
		cd "$tmp/compose"
		docker-compose -p jikkenbench$$ up -d >/dev/null 2>&1
		docker wait $(docker-compose -p jikkenbench$$ ps -q) >/dev/null
		docker-compose -p jikkenbench$$ down >/dev/null 2>&1 || echo "docker-launch: docker-compose down failed" >&2
	)
	compose=$(elapsed "$t0" "$(now)")
	echo "docker-compose: $compose s" >&2
fi

ratio() { [ "$1" = - ] && echo - || echo "$1 / $sdk" | bc -l | xargs printf '%.2fx'; }
printf '%-28s %10s %12s %10s\n' "$N containers, -j $J" seconds "per container" "vs SDK"
printf '%-28s %10s %12s %10s\n' "plain SDK loop" "$sdk" "$(echo "$sdk / $N" | bc -l | xargs printf '%.3f')" "1.00x"
printf '%-28s %10s %12s %10s\n' "jikken run --backend docker" "$jikken" "$(echo "$jikken / $N" | bc -l | xargs printf '%.3f')" "$(ratio "$jikken")"
if [ "$compose" != - ]; then
	printf '%-28s %10s %12s %10s\n' "docker-compose up + down" "$compose" "$(echo "$compose / $N" | bc -l | xargs printf '%.3f')" "$(ratio "$compose")"
else
	printf '%-28s %10s\n' "docker-compose" "not installed"
fi

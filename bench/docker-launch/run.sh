#!/bin/sh
# docker-launch: time to create, start, wait for and remove N containers of one scratch image
# running `true`, three ways on the same engine: `jikken run` (an N-trial matrix on the docker
# backend), a plain loop over the Engine API client (the engine's own pace), and docker-compose
# with N services when it is installed (up -d, wait for all, down). jikken and the loop run at
# most J containers at once, alternating for ROUNDS rounds (median reported); compose runs once
# with COMPOSE_PARALLEL_LIMIT=J and is given up on after COMPOSE_TIMEOUT seconds.
#
#   bench/docker-launch/run.sh [N] [J]      (default 100 8)
#   env: ROUNDS (default 3), COMPOSE_TIMEOUT (default 600), JIKKEN_SRC=DIR (build from DIR,
#        e.g. a `git archive HEAD` export when the working tree has work in progress)
set -eu
N=${1:-100}
J=${2:-8}
ROUNDS=${ROUNDS:-3}
COMPOSE_TIMEOUT=${COMPOSE_TIMEOUT:-600}
cd "$(dirname "$0")/../.."
command -v docker >/dev/null || { echo "docker-launch: needs the docker CLI" >&2; exit 1; }
command -v busybox >/dev/null || { echo "docker-launch: needs busybox (apt-get install busybox-static)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "docker-launch: no docker engine reachable" >&2; exit 1; }

tmp=$(mktemp -d)
image=jikken-bench-busybox:$$
project=jikkenbench$$
cleanup() {
	(cd "$tmp/compose" 2>/dev/null && docker-compose -p "$project" down --remove-orphans >/dev/null 2>&1) || true
	docker image rm -f "$image" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 1" INT TERM

mkdir -p "$tmp/image"
cp "$(command -v busybox)" "$tmp/image/busybox"
printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n' > "$tmp/image/Dockerfile"
DOCKER_BUILDKIT=0 docker build -q -t "$image" "$tmp/image" >/dev/null 2>&1
src=${JIKKEN_SRC:-.}
(cd "$src" && go build -o "$tmp/jikken" ./cmd/jikken && go build -o "$tmp/sdk-loop" ./bench/docker-launch)

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l | xargs printf '%.2f'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cat > "$tmp/launch.jsonnet" <<JSONNET
{ name: "launch", matrix: { name: "c", params: { i: std.range(1, $N) }, image: "$image", cmd: ["true"] } }
JSONNET
: > "$tmp/sdk.times"
: > "$tmp/jikken.times"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	s=$("$tmp/sdk-loop" -image "$image" -n "$N" -j "$J")
	echo "$s" >> "$tmp/sdk.times"
	t0=$(now)
	JIKKEN_STORE="$tmp/store" "$tmp/jikken" run "$tmp/launch.jsonnet" --backend docker -j "$J" >/dev/null 2>"$tmp/jikken.log" || { cat "$tmp/jikken.log" >&2; exit 1; }
	j=$(elapsed "$t0" "$(now)")
	echo "$j" >> "$tmp/jikken.times"
	echo "round $r: SDK loop $s s, jikken $j s" >&2
	r=$((r + 1))
done
sdk=$(median < "$tmp/sdk.times")
jikken=$(median < "$tmp/jikken.times")

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
	# `up` attached to many services hangs in docker-compose 1.29: start them detached and wait
	# for every container instead.
	t0=$(now)
	if (
		cd "$tmp/compose"
		# (set -e does not apply inside an if's condition: check each step.)
		COMPOSE_PARALLEL_LIMIT=$J timeout "$COMPOSE_TIMEOUT" docker-compose -p "$project" up -d >/dev/null 2>&1 || exit 1
		docker wait $(docker-compose -p "$project" ps -q) >/dev/null || exit 1
		docker-compose -p "$project" down >/dev/null 2>&1 || exit 1
	); then
		compose=$(elapsed "$t0" "$(now)")
	else
		compose="not done in $COMPOSE_TIMEOUT s"
	fi
	echo "docker-compose: $compose" >&2
fi

per() { echo "$1 / $N" | bc -l | xargs printf '%.3f'; }
ratio() { echo "$1 / $sdk" | bc -l | xargs printf '%.2fx'; }
printf '%-30s %12s %14s %8s\n' "$N containers, -j $J" "seconds" "per container" "vs SDK"
printf '%-30s %12s %14s %8s\n' "plain SDK loop (median of $ROUNDS)" "$sdk" "$(per "$sdk")" "1.00x"
printf '%-30s %12s %14s %8s\n' "jikken run (median of $ROUNDS)" "$jikken" "$(per "$jikken")" "$(ratio "$jikken")"
case $compose in
-) printf '%-30s %12s\n' "docker-compose" "not installed" ;;
hung*) printf '%-30s %12s\n' "docker-compose up -d; down" "$compose" ;;
*) printf '%-30s %12s %14s %8s\n' "docker-compose up -d; down" "$compose" "$(per "$compose")" "$(ratio "$compose")" ;;
esac

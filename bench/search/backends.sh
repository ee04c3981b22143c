#!/bin/bash
# backends.sh: the same search (same seed, same -j) on several backends, and whether each gives
# the same history (trial, status, params, values, in number order) as the first.
#
#   bench/search/backends.sh [TRIALS] [JOBS] [BACKEND...]     (defaults: 60 4 local docker slurm)
#
# docker needs an engine and a static busybox (the image is FROM scratch); slurm needs a cluster
# (SLURM_CONF; scripts/ci/slurm.sh makes a one-node one).
set -euo pipefail
TRIALS=${1:-60}
JOBS=${2:-4}
shift 2 || true
backends=("${@:-local docker slurm}")
[ $# -eq 0 ] && backends=(local docker slurm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cmd="for s in 1 2 3; do echo ::metric loss=\$(awk -v x={{x}} -v y={{y}} -v s=\$s 'BEGIN{print (x-1)*(x-1)+(y+2)*(y+2)+3-s}'); sleep 0.02; done"
for b in "${backends[@]}"; do
	image=""
	if [ "$b" = docker ]; then
		mkdir -p img && cp "$(command -v busybox)" img/busybox
		printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n' > img/Dockerfile
		DOCKER_BUILDKIT=0 docker build -q -t jikken-bench-search:1 img >/dev/null 2>&1
		image='image: "jikken-bench-search:1",'
	fi
	cat > "$b.jsonnet" <<JSONNET
{ name: "backends", search: { name: "s", $image cmd: "$cmd",
  space: { x: { low: -5, high: 5 }, y: { low: -5, high: 5 } },
  objective: { metric: "loss", direction: "min" }, sampler: "tpe", trials: $TRIALS, seed: 7 } }
JSONNET
	t0=$(date +%s.%N)
	jikken run "$b.jsonnet" --store "st-$b" -j "$JOBS" --backend "$b" >"$b.log" 2>&1 || { tail -3 "$b.log"; exit 1; }
	t1=$(date +%s.%N)
	jikken search show latest --store "st-$b" -o json | jq -c '[.trials[] | {trial, status, params, values}]' > "$b.history"
	same=yes
	cmp -s "${backends[0]}.history" "$b.history" || same=NO
	echo "$b: $TRIALS trials in $(echo "$t1 - $t0" | bc) s; same history as ${backends[0]}: $same; $(jikken search show latest --store "st-$b" | grep '^best')"
done
echo "load: $(cat /proc/loadavg)"

#!/bin/bash
# overhead.sh: the wall time of N trivial trials run as a search, next to the same number run
# as a grid (a matrix), both with -j JOBS on the local backend: what the search costs the
# runner (suggestions, journaling each suggestion before its start, reading final values).
#
#   bench/search/overhead.sh [N] [JOBS] [SAMPLER]      (defaults: 2000 2 tpe)
set -euo pipefail
N=${1:-2000}
JOBS=${2:-2}
SAMPLER=${3:-tpe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > grid.jsonnet <<JSONNET
{ name: "grid", matrix: { name: "g", params: { x: [i / $N for i in std.range(0, $N - 1)] }, cmd: "echo ::metric loss={{x}}" } }
JSONNET
cat > search.jsonnet <<JSONNET
{ name: "search", search: { name: "s", cmd: "echo ::metric loss={{x}}", space: { x: { low: 0, high: 1 } },
  objective: "loss", sampler: "$SAMPLER", trials: $N, seed: 1 } }
JSONNET
secs() { local t0 t1; t0=$(date +%s.%N); jikken run "$1" --store "st-$1" -j "$JOBS" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
g=$(secs grid.jsonnet)
s=$(secs search.jsonnet)
echo "$N trivial trials, -j $JOBS: grid ${g}s, search ($SAMPLER) ${s}s, ratio $(echo "scale=2; $s / $g" | bc)"
echo "load: $(cat /proc/loadavg)"

#!/bin/bash
# overhead.sh: the wall time of N trivial trials run as a search, next to the same number run
# as a grid (a matrix), both with -j JOBS on the local backend: what the search costs the
# runner (suggestions, journaling each suggestion before its start, reading final values).
#
#   bench/search/overhead.sh [N] [JOBS] [SAMPLER] [ROUNDS]      (defaults: 2000 2 tpe 1)
#
# With PARALLEL=P each round also runs the search with `parallel: P` (P > JOBS: the next trials
# are suggested and journaled while every slot is busy, so a slot that frees starts one at once).
#
# Each round runs the grid, then the search, with each binary of JIKKEN in turn (default:
# jikken; several, space-separated, to compare builds side by side); the last lines are each
# binary's medians over the rounds, and its total search time over its total grid time. A shared
# machine moves single runs by 2x: use rounds.
set -euo pipefail
N=${1:-2000}
JOBS=${2:-2}
SAMPLER=${3:-tpe}
ROUNDS=${4:-1}
read -r -a bins <<<"${JIKKEN:-jikken}"
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
if [ -n "${PARALLEL:-}" ]; then
  sed "s/seed: 1 }/seed: 1, parallel: $PARALLEL }/" search.jsonnet > ahead.jsonnet
  grep -q "parallel: $PARALLEL" ahead.jsonnet
fi
# Every run gets a store of its own, all removed at the end: removing one just before the next
# run would charge that run for the file system's cleanup (docs/runner.md, "Overhead").
n=0
secs() {
  local t0 t1
  n=$((n + 1))
  t0=$(date +%s.%N)
  "$1" run "$2" --store "st-$n" -j "$JOBS" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "$N trivial trials, -j $JOBS, $SAMPLER; load before: $(cat /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for b in "${bins[@]}"; do
    g=$(secs "$b" grid.jsonnet)
    s=$(secs "$b" search.jsonnet)
    ratio=$(echo "scale=3; $s / $g" | bc)
    a=- ahead=-
    if [ -n "${PARALLEL:-}" ]; then
      a=$(secs "$b" ahead.jsonnet)
      ahead=$(echo "scale=3; $a / $g" | bc)
    fi
    echo "round $r $b: grid ${g}s, search ${s}s, ratio $ratio; parallel ${PARALLEL:--} ${a}s, ratio $ahead; load $(cut -d' ' -f1 /proc/loadavg)"
    echo "$g $s $ratio $a $ahead" >> "times-$(echo "$b" | tr / _)"
  done
done
for b in "${bins[@]}"; do
  f="times-$(echo "$b" | tr / _)"
  echo "median of $ROUNDS, $b: grid $(cut -d' ' -f1 "$f" | median)s, search $(cut -d' ' -f2 "$f" | median)s, ratio $(cut -d' ' -f3 "$f" | median); all rounds' search time over all rounds' grid time $(awk '{g+=$1; s+=$2} END {printf "%.3f", s/g}' "$f")"
  [ -n "${PARALLEL:-}" ] && echo "  with parallel $PARALLEL: search $(cut -d' ' -f4 "$f" | median)s, ratio $(cut -d' ' -f5 "$f" | median)"
done
echo "load after: $(cat /proc/loadavg)"

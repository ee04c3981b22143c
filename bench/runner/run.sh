#!/usr/bin/env bash
# Runner overhead: N trivial trials (`true`) on the local backend with the cap at J, next to
# `seq N | xargs -P J -I{} /bin/true` in the same run. Prints a table of trials per second
# (median of R alternating repetitions).
#
#   bench/runner/run.sh            # N=2000 J=2 R=3
#   N=500 R=5 bench/runner/run.sh
set -euo pipefail
N=${N:-2000} J=${J:-2} R=${R:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -C "$root" -o "$work/jikken" ./cmd/jikken
cat > "$work/trivial.jsonnet" <<JSONNET
{ name: "trivial", matrix: { name: "t", params: { i: std.range(1, $N) }, cmd: "true" } }
JSONNET

now() { date +%s.%N; }
declare -a tj tx
for r in $(seq "$R"); do
  s=$(now); "$work/jikken" --store "$work/store-$r" run "$work/trivial.jsonnet" -j "$J" -o json > "$work/out-$r.json"; e=$(now)
  grep -c '"exit_code": 0' "$work/out-$r.json" | grep -qx "$N" || { echo "jikken run $r: not every trial succeeded" >&2; exit 1; }
  tj+=("$(echo "$e - $s" | bc -l)")
  s=$(now); seq "$N" | xargs -P "$J" -I{} /bin/true; e=$(now)
  tx+=("$(echo "$e - $s" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mj=$(median "${tj[@]}"); mx=$(median "${tx[@]}")
printf '%-40s %10s %12s\n' "command ($N trials, cap $J, median of $R)" "seconds" "trials/s"
printf '%-40s %10.2f %12.0f\n' "jikken run (local backend)" "$mj" "$(echo "$N / $mj" | bc -l)"
printf '%-40s %10.2f %12.0f\n' "seq | xargs -P $J /bin/true" "$mx" "$(echo "$N / $mx" | bc -l)"
printf 'jikken / xargs time ratio: %.2f\n' "$(echo "$mj / $mx" | bc -l)"

#!/usr/bin/env bash
# Runner overhead: N trivial trials (`true`) on the local backend with the cap at J, next to
# `seq N | xargs -P J -I{} /bin/true` in the same run, alternating, R rounds. Prints the median
# wall and CPU (user + system, children included) time of each and their ratios, and the load
# average before and after.
#
#   bench/runner/run.sh            # N=2000 J=2 R=5
#   N=500 R=3 bench/runner/run.sh
set -euo pipefail
N=${N:-2000} J=${J:-2} R=${R:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -C "$root" -o "$work/jikken" ./cmd/jikken
cat > "$work/trivial.jsonnet" <<JSONNET
{ name: "trivial", matrix: { name: "t", params: { i: std.range(1, $N) }, cmd: "true" } }
JSONNET

# timed CMD...: prints "wall cpu" in seconds for CMD and everything it started.
timed() {
	/usr/bin/time -f '%e %U %S' -o "$work/time" "$@" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; return 1; }
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/time"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Each round's store is kept until the end: on ext4 without a journal (the root file system of
# this project's CI machines) every new inode is searched past the inodes deleted in the last 5 to
# 30 seconds, so removing a round's 10,000 files just before the next round charged jikken, and
# not xargs, which creates none, for the benchmark's own cleanup (it doubled jikken's system time).
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
declare -a jw jc xw xc
for r in $(seq "$R"); do
	read -r w c < <(timed "$work/jikken" --store "$work/store-$r" run "$work/trivial.jsonnet" -j "$J" -o json)
	[ "$(grep -c '"exit_code": 0' "$work/out")" = "$N" ] || { echo "jikken run $r: not every trial succeeded" >&2; exit 1; }
	jw+=("$w") jc+=("$c")
	read -r w c < <(timed sh -c "seq $N | xargs -P $J -I{} /bin/true")
	xw+=("$w") xc+=("$c")
done
mjw=$(median "${jw[@]}") mjc=$(median "${jc[@]}") mxw=$(median "${xw[@]}") mxc=$(median "${xc[@]}")
printf '%-44s %9s %9s %10s\n' "command ($N trials, cap $J, median of $R)" "wall s" "CPU s" "trials/s"
printf '%-44s %9.2f %9.2f %10.0f\n' "jikken run (local backend, folder store)" "$mjw" "$mjc" "$(echo "$N / $mjw" | bc -l)"
printf '%-44s %9.2f %9.2f %10.0f\n' "seq | xargs -P $J -I{} /bin/true" "$mxw" "$mxc" "$(echo "$N / $mxw" | bc -l)"
printf 'jikken / xargs: wall %.2f, CPU %.2f\n' "$(echo "$mjw / $mxw" | bc -l)" "$(echo "$mjc / $mxc" | bc -l)"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Submission on Slurm: N trivial trials (`true`) through `jikken run --backend slurm -j N`, next
# to one `sbatch --array=1-N` of the same command, alternating, R rounds. Prints the median
# wall time of each from start to the last job's end, their ratio, how many Slurm commands
# each issued (counted by wrappers put first on PATH), and the load average before and after.
# The array's end is seen by this script polling squeue every 0.1 s (not counted, and not
# sbatch --wait, whose own polling backs off to tens of seconds). Needs a cluster
# (scripts/ci/slurm.sh) whose nodes share $TMPDIR.
#
#   bench/slurm/run.sh             # N=200 R=3
#   N=1000 R=1 bench/slurm/run.sh
set -euo pipefail
N=${N:-200} R=${R:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -C "$root" -o "$work/jikken" ./cmd/jikken
cat > "$work/trivial.jsonnet" <<JSONNET
{ name: "trivial", matrix: { name: "t", params: { i: std.range(1, $N) }, cmd: "true" } }
JSONNET

# Wrappers that log each Slurm command before running the real one.
mkdir "$work/shim"
for c in sbatch squeue scontrol scancel sacct sinfo; do
	real=$(command -v "$c")
	printf '#!/bin/sh\necho %s >> "%s/calls"\nexec %s "$@"\n' "$c" "$work" "$real" > "$work/shim/$c"
	chmod +x "$work/shim/$c"
done
now() { date +%s.%N; }
calls() { if [ -f "$work/calls" ]; then wc -l < "$work/calls"; else echo 0; fi; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
declare -a jw aw jn an
for r in $(seq "$R"); do
	rm -f "$work/calls"
	t0=$(now)
	PATH="$work/shim:$PATH" "$work/jikken" --store "$work/store-$r" run "$work/trivial.jsonnet" --backend slurm -j "$N" -o json > "$work/out" 2> "$work/err" || { tail "$work/err" >&2; exit 1; }
	t1=$(now)
	[ "$(grep -c '"exit_code": 0' "$work/out")" = "$N" ] || { echo "jikken run $r: not every trial succeeded" >&2; exit 1; }
	jw+=("$(echo "$t1 - $t0" | bc -l)") jn+=("$(calls)")
	jbreak=$(sort "$work/calls" | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')
	rm -rf "$work/store-$r"

	rm -f "$work/calls"
	mkdir -p "$work/array"
	t0=$(now)
	id=$(PATH="$work/shim:$PATH" sbatch --parsable --array=1-"$N" -o "$work/array/%a.out" --wrap=true)
	while [ -n "$(squeue -h -r -j "$id" -o %i 2>/dev/null | head -n 1)" ]; do sleep 0.1; done
	t1=$(now)
	aw+=("$(echo "$t1 - $t0" | bc -l)") an+=("$(calls)")
	rm -rf "$work/array"
done
mjw=$(median "${jw[@]}") maw=$(median "${aw[@]}")
printf '%-48s %9s %14s\n' "command ($N trials, median of $R)" "wall s" "slurm commands"
printf '%-48s %9.2f %14s\n' "jikken run --backend slurm -j $N" "$mjw" "$(median "${jn[@]}")"
printf '%-48s %9.2f %14s\n' "sbatch --array=1-$N" "$maw" "$(median "${an[@]}")"
printf 'jikken / array: wall %.2f\n' "$(echo "$mjw / $maw" | bc -l)"
echo "jikken's commands in its last round: ${jbreak%, }"
echo "load average before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"

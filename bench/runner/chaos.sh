#!/usr/bin/env bash
# Chaos check of the runner: SIGKILL it at random moments and resume it each time, on N trials
# that each start a background child and write a 1 MiB artifact. At the end: every trial
# succeeded once with its own artifact (0 lost, 0 duplicated, no mix of two attempts), no
# process of the run is alive, and no attempt folder, temporary file, code copy or registered
# git worktree is left.
#
#   bench/runner/chaos.sh                 # N=60 trials, KILLS=30
#   N=20 KILLS=8 bench/runner/chaos.sh    # the shorter version CI runs (run_chaos.txtar)
#   SEED=42 bench/runner/chaos.sh         # replay the same kill times
#
# JIKKEN names the binary to test (default: build ./cmd/jikken).
set -euo pipefail
N=${N:-60} KILLS=${KILLS:-30} J=${J:-4} SEED=${SEED:-$$}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
run=""
cleanup() {
	# Whatever a failed check left running must not outlive the script.
	if [ -n "$run" ]; then
		for e in /proc/[0-9]*/environ; do
			if { tr "\\0" "\\n" < "$e"; } 2> /dev/null | grep -qx "JIKKEN_RUN_ID=$run"; then
				p=${e#/proc/}; kill -KILL "${p%/environ}" 2>/dev/null || true
			fi
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
if [ -z "${JIKKEN:-}" ]; then
	go build -C "$root" -o "$work/bin/jikken" ./cmd/jikken
	JIKKEN=$work/bin/jikken
fi
RANDOM=$SEED

cd "$work"
mkdir repo && cd repo
git init -q
git config user.name chaos && git config user.email chaos@example.com
cat > chaos.jsonnet <<JSONNET
{
  name: "chaos",
  matrix: {
    name: "t",
    params: { i: std.range(1, $N) },
    // A background child, a 1 MiB artifact and its checksum, a random duration.
    cmd: "sleep 600 & head -c 1048576 /dev/urandom > \$JIKKEN_OUTPUT_DIR/artifact.bin && " +
         "sha256sum < \$JIKKEN_OUTPUT_DIR/artifact.bin | cut -c1-64 > \$JIKKEN_OUTPUT_DIR/sha.txt && " +
         "sleep 0.\$((RANDOM % 5)) && echo ::metric done={{i}}",
  },
}
JSONNET
git add chaos.jsonnet && git commit -qm chaos
echo "// an uncommitted change: the run uses a code snapshot" >> chaos.jsonnet
export JIKKEN_STORE=$work/repo/.jikken

pause() { sleep "0.$(printf '%02d' $((RANDOM % 90 + 5)))"; }
started=$(date +%s.%N)
"$JIKKEN" run chaos.jsonnet -j "$J" -o json > /dev/null 2>> runner.log &
pid=$!
until ls .jikken/runs/*/manifest.json > /dev/null 2>&1; do sleep 0.02; done
run=$(basename "$(dirname .jikken/runs/*/manifest.json)")
pause
kill -KILL "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
for k in $(seq 2 "$KILLS"); do
	"$JIKKEN" resume "$run" -o json > /dev/null 2>> runner.log &
	pid=$!
	pause
	kill -KILL "$pid" 2> /dev/null || true
	wait "$pid" 2> /dev/null || true
done
"$JIKKEN" resume "$run" -o json > final.json 2>> runner.log || { echo "final resume failed:"; tail -20 runner.log; exit 1; }
took=$(echo "$(date +%s.%N) - $started" | bc -l)

fail=0
check() { # check NAME GOT WANT
	if [ "$2" = "$3" ]; then printf '  ok    %-48s %s\n' "$1" "$2"; else printf '  FAIL  %-48s %s (want %s)\n' "$1" "$2" "$3"; fail=1; fi
}
trials=.jikken/runs/$run/trials
succeeded=$("$JIKKEN" results "$run" -o csv | grep -c ',succeeded,' || true)
lost=0 duplicated=0 mixed=0
for i in $(seq 1 "$N"); do
	d=$trials/t-$i
	if [ ! -f "$d/artifact.bin" ] || [ ! -f "$d/sha.txt" ]; then lost=$((lost + 1)); continue; fi
	[ "$(sha256sum < "$d/artifact.bin" | cut -c1-64)" = "$(cat "$d/sha.txt")" ] || mixed=$((mixed + 1))
	[ "$(grep -c '"name":"done"' "$d/metrics.jsonl")" = 1 ] || duplicated=$((duplicated + 1))
done
alive=0
for e in /proc/[0-9]*/environ; do
	if { tr "\\0" "\\n" < "$e"; } 2> /dev/null | grep -qx "JIKKEN_RUN_ID=$run"; then alive=$((alive + 1)); fi
done
echo "chaos: $N trials, $KILLS SIGKILLs of the runner (seed $SEED), done in $(printf '%.1f' "$took") s"
check "trials succeeded" "$succeeded" "$N"
check "results lost" "$lost" 0
check "results duplicated" "$duplicated" 0
check "artifacts mixed from two attempts" "$mixed" 0
check "trial processes alive afterwards" "$alive" 0
check "attempt folders left" "$(find ".jikken/.work/$run" -mindepth 1 -type d ! -path '*/code*' 2> /dev/null | wc -l)" 0
check "code copies left" "$(find .jikken/.work -maxdepth 2 -name 'code*' 2> /dev/null | wc -l)" 0
check "temporary files left" "$(find .jikken -name '.tmp-*' | wc -l)" 0
check "registered git worktrees besides the repository" "$(($(git worktree list | wc -l) - 1))" 0
exit $fail

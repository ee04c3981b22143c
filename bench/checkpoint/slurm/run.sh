#!/bin/sh
# The Slurm acceptance of preemptible trials: a trial counts to 600 steps (0.1 s each), saving
# a checkpoint every 50; its 40 s time limit (timeout, warned with USR1 8 s before) ends its
# first attempt at about step 300-350. It must finish in two attempts, the second starting from
# the last checkpoint, with at most 650 steps computed in all. Prints each attempt's lines.
# Usage: SLURM_CONF=... bench/checkpoint/slurm/run.sh [--store s3://bucket/prefix]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$here/../../.."
go build -o "$work/jikken" ./cmd/jikken
cp "$here/count600.sh" "$here/count600.jsonnet" "$work/"
cd "$work"
store=${1:-}
[ "$store" = --store ] && store=$2 || store="$work/store"
./jikken run count600.jsonnet --backend slurm --store "$store"
for a in 1 2 3; do
	./jikken logs --store "$store" latest count --attempt "$a" 2>/dev/null | grep -E "starts at|warned|done at" || true
	./jikken logs --store "$store" latest count --attempt "$a" 2>/dev/null | grep computed | tail -n 1 || true
done
cat /proc/loadavg

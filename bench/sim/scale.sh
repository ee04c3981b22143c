#!/bin/sh
# Issue 20's scale case: 1,000,000 philly jobs on 10,000 nodes x 8 GPUs under kube-default
# (examples/sim/philly-10k.yaml: philly-1k.yaml with ten times the nodes and jobs), run
# through the CLI under /usr/bin/time. With binaries as arguments it runs each in turn, ROUNDS
# times (default 3), alternating, to compare builds in one session; without, it builds
# ./cmd/jikken and runs it once. Each run prints: binary, CPU user, CPU sys, wall, peak RSS
# (KiB), the 1-minute load average before the run, and the determinism hash.
#
#   bench/sim/scale.sh
#   ROUNDS=3 bench/sim/scale.sh /tmp/jk-old /tmp/jk-new
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
cd "$root"
if [ $# -eq 0 ]; then
	go build -o "$out/jikken" ./cmd/jikken
	set -- "$out/jikken"
	ROUNDS=${ROUNDS:-1}
fi
echo "binary user_s sys_s wall_s max_rss_kib load1 determinism_hash"
for round in $(seq "${ROUNDS:-3}"); do
	for bin in "$@"; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		/usr/bin/time -f '%U %S %e %M' -o "$out/time" "$bin" sim run examples/sim/philly-10k.yaml \
			--dir "$out/result" --progress=false >/dev/null
		hash=$(sed -n 's/.*"determinism_hash": "\(.*\)".*/\1/p' "$out/result/summary.json")
		echo "$bin $(cat "$out/time") $load $hash"
	done
done

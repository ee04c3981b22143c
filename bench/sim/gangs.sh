#!/bin/sh
# The gang benchmark of issue 21: las on 5,000 gavel jobs (offered load 1.3) with two-node
# gangs on 32 nodes x 4 GPUs; the same with 1 s ticks; and, as the anchor, the same jobs on
# 4 nodes x 32 GPUs, where no job needs a gang. Each run goes through the CLI under
# /usr/bin/time -v.
#
#   bench/sim/gangs.sh            # from anywhere in the repository
#   OUT=/tmp/x bench/sim/gangs.sh # keep the results somewhere else
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d)}
bin=$out/jikken
cd "$root"
go build -o "$bin" ./cmd/jikken
sed 's/^scheduler: {profile: las}$/scheduler: {profile: las}\ntick: 1/' bench/sim/las-gangs.yaml >"$out/las-gangs-tick1.yaml"
sed 's/count: 32, capacity: {cpu: "64", memory: 512Gi, nvidia.com\/gpu: "4"}/count: 4, capacity: {cpu: "512", memory: 4096Gi, nvidia.com\/gpu: "32"}/' \
	bench/sim/las-gangs.yaml >"$out/las-no-gangs.yaml"
for case in las-gangs las-gangs-tick1 las-no-gangs; do
	scenario=$out/$case.yaml
	[ $case = las-gangs ] && scenario=bench/sim/las-gangs.yaml
	/usr/bin/time -v "$bin" sim run "$scenario" --dir "$out/$case" --progress=false >"$out/$case.stdout" 2>"$out/$case.time"
	echo "== $case"
	grep -E 'Elapsed \(wall clock\)|User time|System time|Maximum resident set size' "$out/$case.time"
	grep -E '^  "(jobs|pods|events|scheduling_passes|preemptions|wall_s|determinism_hash)"' "$out/$case/summary.json"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

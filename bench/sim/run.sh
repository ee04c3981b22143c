#!/bin/sh
# The simulator benchmark of issue 7: 1,000 nodes x 8 GPUs, 100,000 philly jobs under the
# kube-default profile, run through the CLI. Prints the summary's run-cost fields and
# /usr/bin/time's wall clock, CPU time and peak RSS.
#
#   bench/sim/run.sh            # from anywhere in the repository
#   OUT=/tmp/x bench/sim/run.sh # keep the results somewhere else
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d)}
bin=$out/jikken
cd "$root"
go build -o "$bin" ./cmd/jikken
/usr/bin/time -v "$bin" sim run examples/sim/philly-1k.yaml --dir "$out/result" --progress=false >"$out/stdout" 2>"$out/time.txt"
cat "$out/stdout"
grep -E 'Elapsed \(wall clock\)|User time|System time|Maximum resident set size' "$out/time.txt"
grep -E '^  "(pods|events|wall_s|pods_per_s|events_per_s|peak_rss_bytes|determinism_hash)"' "$out/result/summary.json"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

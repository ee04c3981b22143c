#!/bin/sh
# bench/search/run.sh: jikken's TPE and CMA-ES next to Optuna's (a reference, never a
# dependency: apt-get install -y python3-optuna), on the same problems, budget and seeds,
# sequential, best value found per seed; then the one-sided Wilcoxon signed-rank test of
# jikken's stats package ("jikken worse" at alpha 0.05), and the suggestion latency of both
# TPEs from 1,000 and 10,000 finished trials with 64 running.
#
#   bench/search/run.sh                      # 30 seeds, 200 trials, six problems
#   SEEDS=5 bench/search/run.sh              # a quicker look
#   SAMPLERS=tpe LATENCY=0 bench/search/run.sh
#
# Results land in $OUT (bench/search/results): one CSV per implementation and sampler,
# compare-<sampler>.md, latency.csv and load.txt (the load average before and after).
set -eu
cd "$(dirname "$0")/../.."
SEEDS=${SEEDS:-30}
TRIALS=${TRIALS:-200}
PROBLEMS=${PROBLEMS:-sphere:2,rastrigin:2,rosenbrock:2,ackley:2,rosenbrock:10,rastrigin:10}
SAMPLERS=${SAMPLERS:-tpe cmaes}
LATENCY=${LATENCY:-1}
PY=${PYTHON:-/usr/bin/python3}
OUT=${OUT:-bench/search/results}
mkdir -p "$OUT"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/search-bench" ./bench/search
"$PY" -c 'import optuna' || { echo "run.sh: Optuna is missing; apt-get install -y python3-optuna" >&2; exit 1; }

echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" > "$OUT/load.txt"
for s in $SAMPLERS; do
	"$BIN/search-bench" run -sampler "$s" -problems "$PROBLEMS" -seeds "$SEEDS" -trials "$TRIALS" > "$OUT/jikken-$s.csv"
	"$PY" bench/search/optuna_ref.py run --sampler "$s" --problems "$PROBLEMS" --seeds "$SEEDS" --trials "$TRIALS" \
		> "$OUT/optuna-$s.csv" 2> "$OUT/optuna-$s.err"
	"$BIN/search-bench" compare "$OUT/jikken-$s.csv" "$OUT/optuna-$s.csv" > "$OUT/compare-$s.md"
	echo "## $s: jikken vs Optuna, $SEEDS seeds, $TRIALS trials"
	cat "$OUT/compare-$s.md"
done
if [ "$LATENCY" = 1 ]; then
	{
		echo "impl,sampler,dims,history,p50_ms,p99_ms"
		"$BIN/search-bench" latency -dims 10
		"$PY" bench/search/optuna_ref.py latency --dims 10
	} > "$OUT/latency.csv"
	cat "$OUT/latency.csv"
fi
echo "end $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> "$OUT/load.txt"
cat "$OUT/load.txt"

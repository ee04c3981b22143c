#!/bin/sh
# Re-runs the comparison of docs/sim.md with the Tiresias simulator (Gu et al., NSDI 2019):
# its public trace 60_job.csv on clusters of 2, 4 and 32 nodes x 4 GPUs, under fifo, srtf and
# las, run by Tiresias's own simulator (Python 2.7) and by jikken. Tiresias's code and trace are
# fetched here, never committed.
#
#   bench/sim/tiresias.sh                          # clones Tiresias from GitHub
#   TIRESIAS_DIR=/path/to/Tiresias bench/sim/tiresias.sh
#   PYTHON2=/opt/python2.7/bin/python2.7 bench/sim/tiresias.sh
#
# Tiresias runs with its "count" placement (GPUs are counted, not placed on nodes). jikken runs
# the same jobs twice: on one pooled node with all the GPUs (the same model), and on real 4-GPU
# nodes, where 8-GPU jobs are two-node gangs. Policies: fifo = Tiresias fifo, srtf = shortest,
# las = dlas-gpu, las-time = dlas, with Tiresias's queue limits (3250 and 7200 GPU-seconds or
# seconds), and gittins = dlas-gpu-gittins with Tiresias's service samples (yarn-gput1000.csv)
# and quantum (3250 GPU-seconds).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
commit=959f9b08f44fa1b4f2b3aed79b01e4d439264a94
work=${OUT:-$(mktemp -d)}
py=${PYTHON2:-python2.7}
if ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (2, 7))' 2>/dev/null; then
	echo "tiresias.sh: Tiresias needs Python 2.7; set PYTHON2 to a python2.7 binary" >&2
	exit 2
fi
src=${TIRESIAS_DIR:-}
if [ -z "$src" ]; then
	src=$work/Tiresias
	git clone -q https://github.com/SymbioticLab/Tiresias "$src"
	git -C "$src" checkout -q "$commit"
fi
sim=$src/simulator
[ -f "$sim/60_job.csv" ] || { echo "tiresias.sh: no simulator/60_job.csv under $src" >&2; exit 2; }

# jobs.py imports numpy but uses it only in commented-out code: an empty module satisfies it.
mkdir -p "$work/stub" "$work/tiresias"
: >"$work/stub/numpy.py"

cd "$root"
go build -o "$work/jikken" ./cmd/jikken

# The trace, as jikken reads it: one row per job; on 4-GPU nodes, 8-GPU jobs become gangs of
# two 4-GPU pods.
awk -F, 'NR > 1 { printf "%s,u,%s,%s,1,1Gi,%s,0,\n", $1, $3, $6, $2 }' "$sim/60_job.csv" |
	(echo name,user,submit_s,duration_s,cpu,memory,gpu,priority,gang; cat) >"$work/pooled.csv"
awk -F, 'NR > 1 { if ($2 > 4) { for (i = 0; i < $2 / 4; i++) printf "%s-%d,u,%s,%s,1,1Gi,4,0,%s\n", $1, i, $3, $6, $1 }
	else printf "%s,u,%s,%s,1,1Gi,%s,0,\n", $1, $3, $6, $2 }' "$sim/60_job.csv" |
	(echo name,user,submit_s,duration_s,cpu,memory,gpu,priority,gang; cat) >"$work/nodes.csv"

# mean FILE COLUMN: the mean of a CSV column (Tiresias's job.csv has JCT in column 8, jikken's
# jobs.csv jct_s in column 9).
mean() { awk -F, -v c="$2" 'NR > 1 { s += $c; n++ } END { printf "%.2f", s / n }' "$1"; }

printf '%-8s %-8s %10s %10s %10s %8s %8s\n' cluster policy tiresias pooled nodes tir_s jikken_s
for nodes in 2 4 32; do
	printf 'num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,%d,4,40,256\n' "$nodes" >"$work/n${nodes}g4.csv"
	for policy in fifo srtf las las-time gittins; do
		case $policy in
		fifo) schedule=fifo ;;
		srtf) schedule=shortest ;;
		las) schedule=dlas-gpu ;;
		las-time) schedule=dlas ;;
		gittins) schedule=dlas-gpu-gittins ;;
		esac
		log=$work/tiresias/n${nodes}g4-$schedule
		t0=$(date +%s.%N)
		(cd "$sim" && PYTHONPATH=$work/stub "$py" run_sim.py --cluster_spec="$work/n${nodes}g4.csv" --scheme=count \
			--trace_file=60_job.csv --schedule=$schedule --log_path="$log" >"$log.out" 2>&1)
		t1=$(date +%s.%N)
		for model in pooled nodes; do
			if [ $model = pooled ]; then count=1 gpus=$((nodes * 4)); else count=$nodes gpus=4; fi
			cat >"$work/$model-$nodes-$policy.yaml" <<EOF
name: tiresias-60-$model
seed: 1
cluster:
  nodeGroups: [{name: n, count: $count, capacity: {cpu: "64", memory: 256Gi, nvidia.com/gpu: "$gpus"}}]
workload: [{trace: {path: $work/$model.csv}}]
scheduler: {profile: $policy, lasThresholds: [3250, 7200], gittins: {samples: $sim/yarn-gput1000.csv, quantum: 3250}}
sample: 0
EOF
			"$work/jikken" sim run "$work/$model-$nodes-$policy.yaml" --dir "$work/out-$model-$nodes-$policy" --progress=false >/dev/null
		done
		t2=$(date +%s.%N)
		printf '%-8s %-8s %10s %10s %10s %8.2f %8.2f\n' "${nodes}x4" $policy "$(mean "$log/job.csv" 8)" \
			"$(mean "$work/out-pooled-$nodes-$policy/jobs.csv" 9)" "$(mean "$work/out-nodes-$nodes-$policy/jobs.csv" 9)" \
			"$(echo "$t1 - $t0" | bc)" "$(echo "($t2 - $t1) / 2" | bc -l)"
	done
done
echo "outputs in $work; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/bash
# kill.sh: SIGKILL a search's runner at random moments, resume it each time, and compare the
# final history with an uninterrupted run of the same search (same seed).
#
#   bench/search/kill.sh [KILLS] [TRIALS] [JOBS] [BACKEND]     (defaults: 30 200 4 local)
#
# Needs jikken on PATH (go build -o /usr/local/bin/jikken ./cmd/jikken) and jq. Prints the
# figures and exits non-zero when the histories differ or a trial is lost or run twice.
set -eu
KILLS=${1:-30}
TRIALS=${2:-200}
JOBS=${3:-4}
BACKEND=${4:-local}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
image=""
if [ "$BACKEND" = docker ]; then
	image='image: "jikken-bench-search:1",'
	mkdir img && cp "$(command -v busybox)" img/busybox
	printf 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n' > img/Dockerfile
	DOCKER_BUILDKIT=0 docker build -q -t jikken-bench-search:1 img >/dev/null
fi
# The objective: a 2-D quadratic (products, not ^: busybox awk has no math library), a few intermediate points, a short sleep so kills land mid-trial.
cat > tune.jsonnet <<JSONNET
{ name: "killbench", search: { name: "s", $image
  cmd: "for s in 1 2 3; do echo ::metric loss=\$(awk -v x={{x}} -v y={{y}} -v s=\$s 'BEGIN{print (x-1)*(x-1)+(y+2)*(y+2)+3-s}'); sleep 0.02; done",
  space: { x: { low: -5, high: 5 }, y: { low: -5, high: 5 } },
  objective: { metric: "loss", direction: "min" }, sampler: "tpe", trials: $TRIALS, seed: 7 } }
JSONNET
history() { jikken search show "$1" --store "$2" -o json | jq -c '[.trials[] | {trial, status, params, values}]'; }

t0=$(date +%s.%N)
if ! jikken run tune.jsonnet --store ref -j "$JOBS" --backend "$BACKEND" >ref.log 2>&1; then
	tail -5 ref.log
	exit 1
fi
t1=$(date +%s.%N)
history latest ref > want

kills=0
jikken run tune.jsonnet --store killed -j "$JOBS" --backend "$BACKEND" >/dev/null 2>&1 &
pid=$!
# Kills start once the run is recorded: before that there is nothing to resume.
until ls killed/runs/*/manifest.json >/dev/null 2>&1; do sleep 0.01; done
run=$(basename "$(dirname killed/runs/*/manifest.json)")
while [ "$kills" -lt "$KILLS" ]; do
	# A random moment: 50 to 549 ms into this runner's life.
	sleep "0.$(printf '%03d' $(( $(od -An -N2 -tu2 /dev/urandom) % 500 + 50 )) | cut -c1-3)"
	if ! kill -0 "$pid" 2>/dev/null; then
		break # it finished before this kill
	fi
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	kills=$((kills + 1))
	jikken resume "$run" --store killed --backend "$BACKEND" >/dev/null 2>&1 &
	pid=$!
done
wait "$pid" 2>/dev/null || true
jikken resume "$run" --store killed --backend "$BACKEND" >/dev/null 2>&1 || true
history "$run" killed > got

n_want=$(jq length want)
n_got=$(jq length got)
dups=$(jq -r '.[].trial' got | sort | uniq -d | wc -l)
notfinal=$(jq '[.[] | select(.status != "succeeded" and .status != "pruned" and .status != "failed")] | length' got)
echo "backend $BACKEND, -j $JOBS, $TRIALS trials: $kills kills; uninterrupted run $(echo "$t1 - $t0" | bc) s"
echo "trials: uninterrupted $n_want, killed and resumed $n_got; duplicated $dups; not final $notfinal"
echo "load: $(cat /proc/loadavg)"
if cmp -s want got && [ "$dups" = 0 ] && [ "$notfinal" = 0 ]; then
	echo "same history: yes"
else
	echo "same history: NO"
	diff <(jq -c '.[]' want) <(jq -c '.[]' got) | head -5 || true
	exit 1
fi

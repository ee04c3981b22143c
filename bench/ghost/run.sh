#!/usr/bin/env bash
# Times git-ghost push and pull against the raw git plumbing each needs (the lower bound), in
# alternating rounds (ghost, plumbing, ghost, plumbing, ...) so both see the same machine, and
# reports medians of wall and CPU time (user + sys of every process an operation starts).
#
#   bench/ghost/run.sh [runs]        (from the module root; default 7 rounds each)
#   GIT_GHOST_BIN=/path/to/git-ghost bench/ghost/run.sh    (time another build instead)
#
# Three cases: a 2,000-file repository with a 260-file change, with an empty ghost repository
# and with 1,000 earlier ghosts in it (refs packed, written with fast-import), and a 20-file
# repository with a 3-file change, where starting processes is most of the cost. Every pull
# fetches a ghost its cache does not have yet (the receiver's cache is not the sender's), into a
# receiver whose index is not racy (as after any git status), and ends with the changes
# unstaged. The repositories live in a temp dir.
set -euo pipefail

RUNS=${1:-7}
OLD_GHOSTS=1000

MOD=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT

# Built before HOME moves, so the Go module cache is the usual one.
GG=${GIT_GHOST_BIN:-$ROOT/bin/git-ghost}
[ -n "${GIT_GHOST_BIN:-}" ] || (cd "$MOD" && go build -o "$GG" ./cmd/git-ghost)

# Isolation: no user or system git config, fixed identities.
export HOME=$ROOT/home GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
mkdir -p "$HOME"
git config --global init.defaultBranch main
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# measure CMD...: runs it in this shell and sets WALL and CPU (user+sys of everything it
# started) in milliseconds. Only builtins run between the two readings, so their own cost does
# not count; CPU time is the figure to trust on a loaded machine.
cpu_ms() {
	local a b
	times > "$ROOT/times"
	{ read -r _ _; read -r a b; } < "$ROOT/times"
	sec_ms "$a"; local u=$MS
	sec_ms "$b"; REPLY=$(( u + MS ))
}
sec_ms() { # 1m2.345s -> MS=62345
	local v=$1 m s
	m=${v%%m*}; s=${v#*m}; s=${s%s}
	MS=$(( (m * 60 + 10#${s%.*}) * 1000 + 10#${s#*.} ))
}
measure() {
	local c0 t0=${EPOCHREALTIME/./}
	cpu_ms; c0=$REPLY
	"$@"
	local t1=${EPOCHREALTIME/./}
	cpu_ms
	WALL=$(( (t1 - t0) / 1000 )) CPU=$(( REPLY - c0 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
med() { printf '%s\n' "$@" | median; }

# --- the raw plumbing each operation needs ------------------------------------------------
# Only git and the few tools the work needs run as processes; the rest is shell builtins, whose
# cost the measurement leaves out, so the bound is as low as it gets.
raw_push() { # url
	local url=$1 tmp=$ROOT/raw-index cache=$ROOT/raw-push-cache.git tree hash blob t c
	cd "$ROOT/sender"
	cp -p .git/index "$tmp" # -p: keep the mtime, or git trusts stale stat data (racy clean)
	GIT_INDEX_FILE=$tmp git add -A
	tree=$(GIT_INDEX_FILE=$tmp git write-tree)
	git diff --binary HEAD "$tree" > "$ROOT/raw.patch"
	hash=$(sha1sum < "$ROOT/raw.patch")
	blob=$(git --git-dir="$cache" hash-object -w "$ROOT/raw.patch")
	t=$(git --git-dir="$cache" mktree <<< "100644 blob $blob	local-mod.patch")
	c=$(git --git-dir="$cache" commit-tree "$t" <<< "Create ghost commit")
	git --git-dir="$cache" push -q "$url" "$c:refs/heads/raw/$BASE/${hash:0:40}"
}

raw_pull() { # url hash
	local url=$1 hash=$2 tmp=$ROOT/raw-index cache=$ROOT/raw-pull-cache.git sha name ref tree
	cd "$ROOT/raw-receiver"
	git ls-remote "$url" "refs/heads/ghost/*" > "$ROOT/refs"
	while read -r sha name; do [[ $name == */$hash ]] && ref=$name; done < "$ROOT/refs"
	git --git-dir="$cache" fetch -q "$url" "+$ref:refs/ghosts/x"
	git --git-dir="$cache" cat-file blob refs/ghosts/x:local-mod.patch > "$ROOT/raw.patch"
	GIT_INDEX_FILE=$tmp git read-tree HEAD
	GIT_INDEX_FILE=$tmp git apply --cached "$ROOT/raw.patch"
	tree=$(GIT_INDEX_FILE=$tmp git write-tree)
	git read-tree -m -u HEAD "$tree"
}

ghost_push() { cd "$ROOT/sender" && JIKKEN_GHOST_CACHE=$ROOT/push-cache "$GG" --ghost-repo "$1" push > "$ROOT/out"; }
ghost_pull() { cd "$ROOT/receiver" && JIKKEN_GHOST_CACHE=$ROOT/pull-cache "$GG" --ghost-repo "$1" pull "$2"; }

# reset_receiver DIR: back to the base commit, and an index that is not racy (files older than
# it), as a receiver is after any git status.
reset_receiver() {
	cd "$1"
	git reset -q --hard "$BASE"
	git clean -q -fdx
	git ls-files -z | xargs -0 touch -d '-10 seconds'
	git update-index -q --refresh
}

# change k: edit CHANGED files so every push is a new ghost.
change() {
	local k=$1 i
	cd "$ROOT/sender"
	git checkout -q -f main
	git clean -q -fdx
	for ((i = 0; i < CHANGED - CHANGED / 20 - 1; i++)); do
		echo "change $k" >> "pkg$((i / 50))/f$i.txt"
	done
	for ((i = 0; i <= CHANGED / 20; i++)); do
		echo "new $k" > "pkg0/new$i.txt"
	done
}

# 1,000 earlier ghosts in git-ghost's layout, written with fast-import in one process.
make_old_ghosts() {
	local repo=$1 i patch hash
	{
		for ((i = 0; i < OLD_GHOSTS; i++)); do
			patch=$(printf 'diff --git a/old%d b/old%d\nnew file mode 100644\n--- /dev/null\n+++ b/old%d\n@@ -0,0 +1 @@\n+%d\n' $i $i $i $i)
			hash=$(printf '%s\n' "$patch" | sha1sum | cut -c1-40)
			printf 'commit refs/heads/ghost/%s/%s\ncommitter bench <bench@example.com> %d +0000\ndata 20\nCreate ghost commit\n' "$BASE" "$hash" $((1700000000 + i))
			printf 'M 100644 inline local-mod.patch\ndata %d\n%s\n\n' $(( ${#patch} + 1 )) "$patch"
		done
	} | git --git-dir="$repo" fast-import --quiet
	git --git-dir="$repo" pack-refs --all
}

# setup FILES: a sender with FILES files pushed to a new origin, and two receivers.
setup() {
	local files=$1 i
	rm -rf "$ROOT/origin.git" "$ROOT/sender" "$ROOT/receiver" "$ROOT/raw-receiver"
	git init -q --bare "$ROOT/origin.git"
	git clone -q "file://$ROOT/origin.git" "$ROOT/sender" 2>/dev/null
	cd "$ROOT/sender"
	for ((i = 0; i < files; i++)); do
		mkdir -p "pkg$((i / 50))"
		seq -f "line %g of file $i" 1 30 > "pkg$((i / 50))/f$i.txt"
	done
	git add -A
	git commit -q -m "$files files"
	git push -q origin main
	BASE=$(git rev-parse HEAD)
	git clone -q "file://$ROOT/origin.git" "$ROOT/receiver"
	git clone -q "file://$ROOT/origin.git" "$ROOT/raw-receiver"
	for d in sender receiver raw-receiver; do reset_receiver "$ROOT/$d"; done
}

row() { # name ghost-wall plumbing-wall ghost-cpu plumbing-cpu
	printf '%-34s %9d %9d %6.2f   %9d %9d %6.2f\n' "$1" "$2" "$3" "$(echo "$2 / $3" | bc -l)" "$4" "$5" "$(echo "$4 / $5" | bc -l)"
}

printf '%-34s %9s %9s %6s   %9s %9s %6s\n' "" "wall ms" "" "" "cpu ms" "" ""
printf '%-34s %9s %9s %6s   %9s %9s %6s\n' "operation" "ghost" "plumbing" "ratio" "ghost" "plumbing" "ratio"
k=0
for c in "2000 260 0" "2000 260 $OLD_GHOSTS" "20 3 0"; do
	read -r FILES CHANGED ghosts <<< "$c"
	setup "$FILES"
	ghostrepo=$ROOT/ghost-$FILES-$ghosts.git
	git init -q --bare "$ghostrepo"
	[ "$ghosts" -gt 0 ] && make_old_ghosts "$ghostrepo"
	url=file://$ghostrepo
	rm -rf "$ROOT/raw-push-cache.git" "$ROOT/raw-pull-cache.git" "$ROOT/push-cache" "$ROOT/pull-cache"
	git init -q --bare "$ROOT/raw-push-cache.git"
	git init -q --bare "$ROOT/raw-pull-cache.git"
	pw=() pc=() rpw=() rpc=() hashes=()
	for ((r = 0; r < RUNS; r++)); do
		k=$((k + 1)); change $k
		measure ghost_push "$url"
		read -r _ hash < "$ROOT/out"; hashes+=("$hash")
		pw+=("$WALL") pc+=("$CPU")
		k=$((k + 1)); change $k
		measure raw_push "$url"
		rpw+=("$WALL") rpc+=("$CPU")
	done
	for ((r = 0; r < RUNS; r++)); do # ghosts the pulls of the plumbing fetch
		k=$((k + 1)); change $k
		ghost_push "$url"
		read -r _ hash < "$ROOT/out"; hashes+=("$hash")
	done
	qw=() qc=() rqw=() rqc=()
	for ((r = 0; r < RUNS; r++)); do
		reset_receiver "$ROOT/receiver"
		measure ghost_pull "$url" "${hashes[$r]}"
		qw+=("$WALL") qc+=("$CPU")
		reset_receiver "$ROOT/raw-receiver"
		measure raw_pull "$url" "${hashes[$((RUNS + r))]}"
		rqw+=("$WALL") rqc+=("$CPU")
	done
	# One more pull each, untimed, counting the git processes it starts.
	k=$((k + 1)); change $k; ghost_push "$url"; read -r _ hash < "$ROOT/out"
	reset_receiver "$ROOT/receiver"
	GIT_TRACE=$ROOT/trace-ghost ghost_pull "$url" "$hash"
	k=$((k + 1)); change $k; ghost_push "$url"; read -r _ hash < "$ROOT/out"
	reset_receiver "$ROOT/raw-receiver"
	GIT_TRACE=$ROOT/trace-raw raw_pull "$url" "$hash"
	procs="$(grep -c 'trace: built-in: git' "$ROOT/trace-ghost") vs $(grep -c 'trace: built-in: git' "$ROOT/trace-raw")"
	rm -f "$ROOT/trace-ghost" "$ROOT/trace-raw"
	name="$FILES files, $CHANGED changed, $ghosts ghosts"
	row "push, $name" "$(med "${pw[@]}")" "$(med "${rpw[@]}")" "$(med "${pc[@]}")" "$(med "${rpc[@]}")"
	row "pull, $name" "$(med "${qw[@]}")" "$(med "${rqw[@]}")" "$(med "${qc[@]}")" "$(med "${rqc[@]}")"
	echo "  (git processes per pull: $procs)"
done
echo "(median of $RUNS alternating rounds; $(nproc) cores, load average $LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after; $(git --version))"

#!/usr/bin/env bash
# Times ghost push and pull against the raw git plumbing each needs, with an empty ghost
# repository and with 1,000 earlier ghosts in it. The repositories live in a temp dir.
#
#   bench/ghost/run.sh [runs]     (run from the module root; default 7 runs, median reported)
set -euo pipefail

RUNS=${1:-7}
FILES=2000
CHANGED=260
OLD_GHOSTS=1000

MOD=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT

# Built before HOME moves, so the Go module cache is the usual one.
(cd "$MOD" && go build -o "$ROOT/bin/git-ghost" ./cmd/git-ghost)
GG=$ROOT/bin/git-ghost

# Isolation: no user or system git config, a private ghost cache, a fixed identity.
export HOME=$ROOT/home GIT_CONFIG_NOSYSTEM=1 JIKKEN_GHOST_CACHE=$ROOT/cache
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
mkdir -p "$HOME"
git config --global init.defaultBranch main


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

# --- repositories -------------------------------------------------------------------------
git init -q --bare "$ROOT/origin.git"
git clone -q "file://$ROOT/origin.git" "$ROOT/sender" 2>/dev/null
cd "$ROOT/sender"
for ((i = 0; i < FILES; i++)); do
	d=pkg$((i / 50))
	mkdir -p "$d"
	seq -f "line %g of file $i" 1 30 > "$d/f$i.txt"
done
git add -A
git commit -q -m "2000 files"
git push -q origin main
# Files written in the second the index was written are "racily clean": every git command
# re-reads them until the index is refreshed after that second, as any later status does.
sleep 1
git status > /dev/null
BASE=$(git rev-parse HEAD)
git clone -q "file://$ROOT/origin.git" "$ROOT/receiver"
git clone -q "file://$ROOT/origin.git" "$ROOT/raw-receiver"

# change k: edit CHANGED files so every push is a new ghost.
change() {
	local k=$1
	cd "$ROOT/sender"
	git checkout -q -f main
	git clean -q -fdx
	for ((i = 0; i < CHANGED - 10; i++)); do
		echo "change $k" >> "pkg$((i / 50))/f$i.txt"
	done
	for ((i = 0; i < 10; i++)); do
		echo "new $k" > "pkg0/new$i.txt"
	done
}

# 1,000 earlier ghosts in git-ghost's layout, written with fast-import in one process.
make_old_ghosts() {
	local repo=$1
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

# --- the raw plumbing each operation needs ------------------------------------------------
raw_push() { # url
	local url=$1 tmp=$ROOT/raw-index
	cd "$ROOT/sender"
	cp -p .git/index "$tmp" # -p: keep the mtime, or git trusts stale stat data (racy clean)
	GIT_INDEX_FILE=$tmp git add -A
	local tree; tree=$(GIT_INDEX_FILE=$tmp git write-tree)
	git diff --binary HEAD "$tree" > "$ROOT/raw.patch"
	local hash; hash=$(sha1sum < "$ROOT/raw.patch" | cut -c1-40)
	local blob; blob=$(git --git-dir="$ROOT/raw-cache.git" hash-object -w "$ROOT/raw.patch")
	local t; t=$(printf '100644 blob %s\tlocal-mod.patch\n' "$blob" | git --git-dir="$ROOT/raw-cache.git" mktree)
	local c; c=$(echo "Create ghost commit" | git --git-dir="$ROOT/raw-cache.git" commit-tree "$t")
	git --git-dir="$ROOT/raw-cache.git" push -q "$url" "$c:refs/heads/raw/$BASE/$hash"
	rm -f "$tmp"
}

raw_pull() { # url hash
	local url=$1 hash=$2 tmp=$ROOT/raw-index
	cd "$ROOT/raw-receiver"
	local ref; ref=$(git ls-remote "$url" "refs/heads/ghost/*" | awk -v h="$hash" '$2 ~ h {print $2}')
	git --git-dir="$ROOT/raw-cache.git" fetch -q --depth=1 "$url" "+$ref:refs/ghosts/x"
	git --git-dir="$ROOT/raw-cache.git" cat-file blob refs/ghosts/x:local-mod.patch > "$ROOT/raw.patch"
	GIT_INDEX_FILE=$tmp git read-tree HEAD
	GIT_INDEX_FILE=$tmp git apply --cached "$ROOT/raw.patch"
	local tree; tree=$(GIT_INDEX_FILE=$tmp git write-tree)
	git read-tree -m -u HEAD "$tree"
	rm -f "$tmp"
}

reset_receiver() {
	cd "$1"
	git reset -q --hard "$BASE"
	git clean -q -fdx
}

# --- measurement --------------------------------------------------------------------------
row() { # name ghost-wall plumbing-wall ghost-cpu plumbing-cpu
	printf '%-28s %9d %9d %6.2f   %9d %9d %6.2f\n' "$1" "$2" "$3" "$(echo "$2 / $3" | bc -l)" "$4" "$5" "$(echo "$4 / $5" | bc -l)"
}
med() { printf '%s\n' "$@" | median; }
printf '%-28s %9s %9s %6s   %9s %9s %6s\n' "" "wall ms" "" "" "cpu ms" "" ""
printf '%-28s %9s %9s %6s   %9s %9s %6s\n' "operation" "ghost" "plumbing" "ratio" "ghost" "plumbing" "ratio"
k=0
for size in 0 $OLD_GHOSTS; do
	ghostrepo=$ROOT/ghost-$size.git
	git init -q --bare "$ghostrepo"
	[ "$size" -gt 0 ] && make_old_ghosts "$ghostrepo"
	url=file://$ghostrepo
	rm -rf "$ROOT/raw-cache.git" "$JIKKEN_GHOST_CACHE"
	git init -q --bare "$ROOT/raw-cache.git"
	pw=() pc=() rpw=() rpc=() hashes=()
	for ((r = 0; r < 2 * RUNS; r++)); do
		k=$((k + 1)); change $k
		measure "$GG" --ghost-repo "$url" push > "$ROOT/out"
		read -r _ hash < "$ROOT/out"
		hashes+=("$hash")
		[ $r -lt "$RUNS" ] && pw+=("$WALL") pc+=("$CPU")
	done
	for ((r = 0; r < RUNS; r++)); do
		k=$((k + 1)); change $k
		measure raw_push "$url"
		rpw+=("$WALL") rpc+=("$CPU")
	done
	qw=() qc=() rqw=() rqc=()
	for ((r = 0; r < RUNS; r++)); do
		reset_receiver "$ROOT/receiver"
		measure "$GG" --ghost-repo "$url" pull "${hashes[$r]}"
		qw+=("$WALL") qc+=("$CPU")
		reset_receiver "$ROOT/raw-receiver"
		measure raw_pull "$url" "${hashes[$((RUNS + r))]}"
		rqw+=("$WALL") rqc+=("$CPU")
	done
	cw=() cc=()
	for ((r = 0; r < 3; r++)); do
		rm -rf "$ROOT/full-clone"
		measure git clone -q "$url" "$ROOT/full-clone" 2> /dev/null
		cw+=("$WALL") cc+=("$CPU")
	done
	row "push, $size earlier ghosts" "$(med "${pw[@]}")" "$(med "${rpw[@]}")" "$(med "${pc[@]}")" "$(med "${rpc[@]}")"
	row "pull, $size earlier ghosts" "$(med "${qw[@]}")" "$(med "${rqw[@]}")" "$(med "${qc[@]}")" "$(med "${rqc[@]}")"
	printf '%-28s %9d %9s %6s   %9d\n' "full clone, $size ghosts" "$(med "${cw[@]}")" "" "" "$(med "${cc[@]}")"
done
echo "($FILES-file repository, $CHANGED-file change; median of $RUNS runs; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(git --version))"

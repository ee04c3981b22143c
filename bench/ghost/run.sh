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


now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
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
	cp .git/index "$tmp"
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
printf '%-26s %12s %12s %8s\n' "operation" "ghost (ms)" "plumbing" "ratio"
k=0
for size in 0 $OLD_GHOSTS; do
	ghostrepo=$ROOT/ghost-$size.git
	git init -q --bare "$ghostrepo"
	[ "$size" -gt 0 ] && make_old_ghosts "$ghostrepo"
	url=file://$ghostrepo
	rm -rf "$ROOT/raw-cache.git" "$JIKKEN_GHOST_CACHE"
	git init -q --bare "$ROOT/raw-cache.git"
	push_ms=() raw_push_ms=() hashes=()
	for ((r = 0; r < 2 * RUNS; r++)); do
		k=$((k + 1)); change $k
		t0=$(now_ms); out=$("$GG" --ghost-repo "$url" push); t1=$(now_ms)
		hashes+=("${out#* }")
		[ $r -lt "$RUNS" ] && push_ms+=($((t1 - t0)))
	done
	for ((r = 0; r < RUNS; r++)); do
		k=$((k + 1)); change $k
		t0=$(now_ms); raw_push "$url"; t1=$(now_ms)
		raw_push_ms+=($((t1 - t0)))
	done
	pull_ms=() raw_pull_ms=()
	for ((r = 0; r < RUNS; r++)); do
		reset_receiver "$ROOT/receiver"
		t0=$(now_ms); "$GG" --ghost-repo "$url" pull "${hashes[$r]}"; t1=$(now_ms)
		pull_ms+=($((t1 - t0)))
		reset_receiver "$ROOT/raw-receiver"
		t0=$(now_ms); raw_pull "$url" "${hashes[$((RUNS + r))]}"; t1=$(now_ms)
		raw_pull_ms+=($((t1 - t0)))
	done
	clone_ms=()
	for ((r = 0; r < 3; r++)); do
		rm -rf "$ROOT/full-clone"
		t0=$(now_ms); git clone -q "$url" "$ROOT/full-clone" 2>/dev/null; t1=$(now_ms)
		clone_ms+=($((t1 - t0)))
	done
	p=$(printf '%s\n' "${push_ms[@]}" | median); rp=$(printf '%s\n' "${raw_push_ms[@]}" | median)
	q=$(printf '%s\n' "${pull_ms[@]}" | median); rq=$(printf '%s\n' "${raw_pull_ms[@]}" | median)
	c=$(printf '%s\n' "${clone_ms[@]}" | median)
	label="$size earlier ghosts"
	printf '%-26s %12d %12d %8.2f\n' "push, $label" "$p" "$rp" "$(echo "$p / $rp" | bc -l)"
	printf '%-26s %12d %12d %8.2f\n' "pull, $label" "$q" "$rq" "$(echo "$q / $rq" | bc -l)"
	printf '%-26s %12d\n' "full clone, $label" "$c"
done
echo "($FILES-file repository, $CHANGED-file change; median of $RUNS runs; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(git --version))"

#!/usr/bin/env bash
# k8s.sh builds the control plane used by `make test-k8s` from source through
# the Go module proxy and caches it. It is idempotent: binaries already in the
# cache are kept. The last line of stdout is the bin dir, so callers can do
#   export JIKKEN_K8S_BIN=$(scripts/ci/k8s.sh | tail -1)
#
# Built: etcd (scratch module), kube-apiserver, kube-controller-manager and
# kube-scheduler (scratch module with replace lines for the staging modules of
# k8s.io/kubernetes), kwok, the Argo Workflows CRDs copied from the
# argo-workflows module source, and Argo's workflow-controller (scratch module
# repeating the replace lines of argo-workflows' go.mod, which `go install`
# refuses). Nothing is added to jikken's go.mod.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.6.6}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
ARGO_VERSION=${ARGO_VERSION:-v3.7.9}
CACHE=${JIKKEN_TEST_CACHE:-$HOME/.cache/jikken-test}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$CACHE/bin
# One package at a time: the API server alone peaks near 3 GB when linked and
# the machines this runs on have two cores shared with other builds (JIKKEN_BUILD_JOBS raises it).
export GOFLAGS="${GOFLAGS:-} -p=${JIKKEN_BUILD_JOBS:-1} -mod=mod"
export GOTOOLCHAIN=local
mkdir -p "$BIN"

log() { echo "k8s.sh: $*" >&2; }

build_etcd() {
	[[ -x $BIN/etcd ]] && return
	local dir=$CACHE/etcd-build
	log "building etcd $ETCD_VERSION"
	mkdir -p "$dir" && cd "$dir"
	[[ -f go.mod ]] || go mod init jikken-test/etcd-build >&2
	go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
	CGO_ENABLED=0 go build -trimpath -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
	mv "$BIN/etcd.tmp" "$BIN/etcd"
}

# k8s_gomod writes a scratch go.mod that requires k8s.io/kubernetes and
# replaces each staging module (./staging/src/k8s.io/X in upstream's go.mod)
# by its published v0.Y.Z twin.
k8s_gomod() {
	local dir=$1 upstream staging
	upstream=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	staging="v0.${K8S_VERSION#v1.}"
	{
		echo "module jikken-test/k8s-build"
		echo
		echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		echo "replace ("
		grep -oE 'k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$upstream" |
			awk -v v="$staging" '{print "\t" $1 " => " $1 " " v}'
		echo ")"
	} >"$dir/go.mod.tmp"
	mv "$dir/go.mod.tmp" "$dir/go.mod"
}

build_k8s() {
	local dir=$CACHE/k8s-build cmd missing=()
	for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
		[[ -x $BIN/$cmd ]] || missing+=("$cmd")
	done
	((${#missing[@]})) || return 0
	mkdir -p "$dir" && cd "$dir"
	if [[ ! -f go.mod ]]; then
		log "resolving k8s.io/kubernetes $K8S_VERSION"
		k8s_gomod "$dir"
	fi
	for cmd in "${missing[@]}"; do
		log "building $cmd $K8S_VERSION"
		CGO_ENABLED=0 go build -trimpath \
			-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
			-o "$BIN/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd" >&2
		mv "$BIN/$cmd.tmp" "$BIN/$cmd"
	done
}

# build_plugin_scheduler builds kube-scheduler with the example framework plugin GPUClass
# registered (examples/sim/framework/_kube-scheduler), as a team builds its own scheduler: a
# module beside the control plane's with the same replace lines, the plugin's package as a
# module of its own replaced by a copy of its folder. The packages the control plane compiled
# come from the build cache, so this costs the plugin and a link. Rebuilt when the sources change.
build_plugin_scheduler() {
	local src=$ROOT/examples/sim/framework dir=$CACHE/k8s-plugin-build sum
	sum=$(cat "$src/gpuclass/gpuclass.go" "$src/_kube-scheduler/main.go" | sha256sum | cut -c1-16)
	[[ -x $BIN/kube-scheduler-gpuclass && $(cat "$BIN/kube-scheduler-gpuclass.sum" 2>/dev/null) == "$sum" ]] && return
	log "building kube-scheduler $K8S_VERSION with GPUClass"
	rm -rf "$dir" && mkdir -p "$dir/gpuclass" && cd "$dir"
	k8s_gomod "$dir"
	cp "$src/gpuclass/gpuclass.go" gpuclass/
	cp "$src/_kube-scheduler/main.go" .
	printf 'module github.com/jikken-dev/jikken/examples/sim/framework/gpuclass\n\ngo %s\n' \
		"$(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')" >gpuclass/go.mod
	go mod edit -require=github.com/jikken-dev/jikken/examples/sim/framework/gpuclass@v0.0.0 \
		-replace=github.com/jikken-dev/jikken/examples/sim/framework/gpuclass=./gpuclass
	CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
		-o "$BIN/kube-scheduler-gpuclass.tmp" . >&2
	mv "$BIN/kube-scheduler-gpuclass.tmp" "$BIN/kube-scheduler-gpuclass"
	echo "$sum" >"$BIN/kube-scheduler-gpuclass.sum"
}

build_kwok() {
	[[ -x $BIN/kwok ]] && return
	log "building kwok $KWOK_VERSION"
	GOBIN=$BIN CGO_ENABLED=0 GOFLAGS=-p=1 go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" >&2
}

fetch_argo_crds() {
	local out=$CACHE/argo-crds src
	[[ -f $out/argoproj.io_workflows.yaml ]] && return
	log "fetching Argo Workflows $ARGO_VERSION CRDs from module source"
	mkdir -p "$CACHE/argo-dl" "$out" && cd "$CACHE/argo-dl"
	[[ -f go.mod ]] || go mod init jikken-test/argo-dl >&2
	src=$(GOFLAGS= go mod download -json "github.com/argoproj/argo-workflows/v3@$ARGO_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	cp "$src"/manifests/base/crds/full/*.yaml "$out/"
	chmod u+w "$out"/*.yaml
}

build_argo_controller() {
	[[ -x $BIN/workflow-controller ]] && return
	local dir=$CACHE/argo-build src
	log "building Argo workflow-controller $ARGO_VERSION"
	mkdir -p "$dir" && cd "$dir"
	if [[ ! -f go.mod ]]; then
		go mod init jikken-test/argo-build >&2
		src=$(GOFLAGS= go mod download -json "github.com/argoproj/argo-workflows/v3@$ARGO_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		# "replace a => b v" lines of upstream's go.mod, as go mod edit wants them: a=b@v
		sed -n 's/^replace \([^ ]*\) => \([^ ]*\) \([^ ]*\)$/\1=\2@\3/p' "$src" | while read -r r; do
			go mod edit -replace "$r"
		done
	fi
	go get "github.com/argoproj/argo-workflows/v3@$ARGO_VERSION" >&2
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$BIN/workflow-controller.tmp" \
		github.com/argoproj/argo-workflows/v3/cmd/workflow-controller >&2
	mv "$BIN/workflow-controller.tmp" "$BIN/workflow-controller"
}

fetch_argo_crds
build_etcd
build_kwok
build_k8s
build_plugin_scheduler
# Last: the control plane's tests need it less, and it is the longest build after them.
build_argo_controller
ln -sfn "$CACHE/argo-crds" "$BIN/argo-crds"
echo "$BIN"

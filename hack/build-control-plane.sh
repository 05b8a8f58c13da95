#!/usr/bin/env bash
# Builds the pinned control plane (and etcd) from the Go module proxy into
# $KTS_CACHE/kube-$KUBE_VERSION/bin, then links them into _output/bin.
# A second run with the same pin does nothing; a cache that lacks some binaries (one made
# before kube-proxy joined the list, say) gets just those, in one go build.
# The upstream kubelet is not among them: only `make bench` and a cluster node joined with
# the upstream kubelet run it, and they build it (hack/build-control-plane.sh kubelet). (The
# cold build took 13.5 minutes with it and without it: its packages are mostly the others'.)
# Nor is kubemark, upstream's hollow node (cmd/kubemark): hack/hollow.sh builds it the same way
# (hack/build-control-plane.sh kubemark).
source "$(dirname "$0")/lib.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
command -v go >/dev/null || die "go is not installed (need Go >= 1.26 for $KUBE_VERSION)"

kube_dir="$KTS_CACHE/kube-$KUBE_VERSION/bin"
etcd_dir="$KTS_CACHE/etcd-$ETCD_VERSION/bin"
control_plane=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubectl kubeadm)
kube_bins=("${control_plane[@]}")
if [ $# -gt 0 ]; then
  for b in "$@"; do [[ " ${control_plane[*]} kubelet kubemark " = *" $b "* ]] || die "usage: $0 [${control_plane[*]} kubelet kubemark]..."; done
  kube_bins=("$@")
fi

# build_kube BIN...: builds the named commands in one go build (they share most packages)
# and moves each into the cache only once all of them linked.
build_kube() {
  local v=${KUBE_VERSION#v} pkgs=() b
  for b in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  local ld="" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=${v%%.*} -X $p.gitMinor=$(echo "$v" | cut -d. -f2) -X $p.gitTreeState=clean"
  done
  rm -rf "$kube_dir.tmp"; mkdir -p "$kube_dir.tmp"
  if [ $# -ge ${#control_plane[@]} ]; then
    log "building $* $KUBE_VERSION (cold: ~20-30 min on 2 cores; log: $LOGS/build-kube.log)"
  else
    log "building $* $KUBE_VERSION, missing from $kube_dir (log: $LOGS/build-kube.log)"
  fi
  # nice: the machine's 2 cores are shared with running stacks and tests.
  (cd "$KTS_ROOT/hack/tools/kube" && nice -n 10 go build -trimpath -ldflags "-s -w$ld" -o "$kube_dir.tmp/" "${pkgs[@]}") \
    >"$LOGS/build-kube.log" 2>&1 &
  local pid=$!
  while kill -0 $pid 2>/dev/null; do sleep 30; kill -0 $pid 2>/dev/null && log "  still building control plane... ($(ls "$kube_dir.tmp" | wc -l)/$# linked)"; done
  wait $pid || die "control plane build failed (see $LOGS/build-kube.log)"
  mkdir -p "$kube_dir"
  for b in "$@"; do mv -f "$kube_dir.tmp/$b" "$kube_dir/$b"; done
  rm -rf "$kube_dir.tmp"
}

build_etcd() {
  mkdir -p "$etcd_dir.tmp"
  log "building etcd $ETCD_VERSION (log: $LOGS/build-etcd.log)"
  (cd "$KTS_ROOT/hack/tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$etcd_dir.tmp/etcd" go.etcd.io/etcd/server/v3) \
    >"$LOGS/build-etcd.log" 2>&1 || die "etcd build failed (see $LOGS/build-etcd.log)"
  rm -rf "$etcd_dir" && mv "$etcd_dir.tmp" "$etcd_dir"
}

mkdir -p "$LOGS" "$BIN" "$KTS_CACHE"
# One build at a time: nodes joined with the upstream kubelet at once each ask for it (make
# bench-cluster's five joins raced on $kube_dir.tmp); the others wait, then find it built.
build_lock "$KTS_CACHE/kube-$KUBE_VERSION.lock" "control plane"
[ $# -gt 0 ] || [ -x "$etcd_dir/etcd" ] || build_etcd
missing=()
for b in "${kube_bins[@]}"; do [ -x "$kube_dir/$b" ] || missing+=("$b"); done
[ ${#missing[@]} -eq 0 ] || build_kube "${missing[@]}"
for b in "${kube_bins[@]}"; do ln -sf "$kube_dir/$b" "$BIN/$b"; done
[ $# -gt 0 ] || ln -sf "$etcd_dir/etcd" "$BIN/etcd"
log "${*:-control plane binaries} ready in $BIN ($KUBE_VERSION)"

#!/usr/bin/env bash
# Builds the CSI hostpath driver and the sidecars its deploy manifests run (issue 44,
# docs/csi.md), each into $KTS_CACHE/csi-NAME-VERSION/bin at the version hack/versions.env pins,
# as upstream's release-tools/build.make builds them (CGO_ENABLED=0, -X main.version=TAG):
#   - from the released sources in ../shared/third-party (the Go module proxy refuses them;
#     their README), extracted into one Go workspace (below), never into the repo:
#     hostpathplugin, csi-node-driver-registrar, livenessprobe, csi-external-health-monitor-controller
#   - from the Go module proxy: csi-provisioner, csi-attacher, csi-resizer, csi-snapshotter and
#     snapshot-controller. Their go.mod files carry `replace` directives (the snapshotter's
#     points at ./client, a module of its own the module zip leaves out), so each is built
#     from a writable copy of the module's directory, with the client module put at ./client.
# A second run with the same pins does nothing. Then, unless --no-images, makes their images
# (hack/build-images.sh --csi) in the containerd of CONTAINERD_SOCK and pushes them to the registry.
#   hack/build-csi.sh [--no-images] [NAME...]   NAME: only those (hostpath, external-provisioner...)
#   hack/build-csi.sh --print-third-party        where the third-party tarballs are
# KTS_NICE=19 and KTS_GO_P=1 as in hack/build-addons.sh (lowest priority, one core).
source "$(dirname "$0")/lib.sh"

NAMES=(hostpath node-driver-registrar livenessprobe external-health-monitor external-provisioner external-attacher external-resizer external-snapshotter)
images=1 ARGS=() print_tp=""
for a in "$@"; do
  case "$a" in
    --no-images) images="" ;;
    --print-third-party) print_tp=1 ;;
    *) [[ " ${NAMES[*]} " = *" $a "* ]] || die "usage: $0 [--no-images] [${NAMES[*]}]..."; ARGS+=("$a") ;;
  esac
done
[ ${#ARGS[@]} -eq 0 ] || [ -z "$images" ] || die "building some of them only (${ARGS[*]}) needs --no-images: hack/build-images.sh --csi wants them all"
# wanted NAME: NAME was asked for (or nothing was, which asks for every one).
wanted() { [ ${#ARGS[@]} -eq 0 ] || [[ " ${ARGS[*]} " = *" $1 "* ]]; }
export GOTOOLCHAIN=local GOFLAGS="-mod=mod${KTS_GO_P:+ -p=$KTS_GO_P}" CGO_ENABLED=0
command -v go >/dev/null || die "go is not installed (need Go >= 1.26)"
# ../shared/third-party beside the main checkout: a worktree's is found through git's common dir.
THIRD_PARTY=${KTS_THIRD_PARTY:-}
if [ -z "$THIRD_PARTY" ]; then
  for d in "$KTS_ROOT/../shared/third-party" "$(git -C "$KTS_ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)/../../shared/third-party"; do
    [ -d "$d" ] && { THIRD_PARTY=$(cd "$d" && pwd); break; }
  done
fi
[ -d "$THIRD_PARTY" ] || die "no ../shared/third-party beside $KTS_ROOT or its main checkout (KTS_THIRD_PARTY names it)"
if [ -n "$print_tp" ]; then echo "$THIRD_PARTY"; exit 0; fi
CSI=github.com/kubernetes-csi

# src_tarball NAME VERSION SRC: the released tarball NAME-VERSION.tar.gz, extracted as SRC.
src_tarball() {
  local tgz="$THIRD_PARTY/$1-$2.tar.gz"
  [ -f "$tgz" ] || die "$tgz is missing (KTS_THIRD_PARTY names the directory of the third-party tarballs)"
  mkdir -p "$3.x" && tar -xzf "$tgz" -C "$3.x" && mv "$3.x/$1-$2" "$3" && rm -rf "$3.x"
}
# src_module MODULE VERSION SRC: a writable copy of the module's directory (the cache's is read-only).
src_module() {
  local dir; dir=$(go mod download -json "$1@$2" | jq -r .Dir) && [ -d "$dir" ] || die "go mod download $1@$2 failed"
  cp -r "$dir" "$3" && chmod -R u+w "$3"
}
# src_snapshotter MODULE VERSION SRC: the module and, at ./client (its replace), the client module.
src_snapshotter() {
  src_module "$@" && src_module "$CSI/external-snapshotter/client/v8" "$2" "$3/client"
}

# Every source goes into one Go workspace (go.work, its modules unchanged): one version of each
# dependency for all of them, the highest any asks for, so that client-go, the apiserver library,
# gRPC and OpenTelemetry compile once, not once for each sidecar: 12.1 CPU-minutes for the nine
# binaries on a cold cache, where the five external sidecars alone took 26.8 one module at a
# time (docs/csi.md). Their k8s.io modules are v0.36.1 in all of them already; the others differ
# by minor versions. The binaries' own code is the release's. The workspace is made only when a
# binary is missing, and removed after.
WS="$KTS_CACHE/csi-workspace"
# The sources: NAME VERSION SRCFN SRCARG CMD...
SOURCES=(
  "hostpath $CSI_HOSTPATH_VERSION src_tarball csi-driver-host-path hostpathplugin"
  "node-driver-registrar $CSI_NODE_DRIVER_REGISTRAR_VERSION src_tarball node-driver-registrar csi-node-driver-registrar"
  "livenessprobe $CSI_LIVENESSPROBE_VERSION src_tarball livenessprobe livenessprobe"
  "external-health-monitor $CSI_HEALTH_MONITOR_VERSION src_tarball external-health-monitor csi-external-health-monitor-controller"
  "external-provisioner $CSI_PROVISIONER_VERSION src_module $CSI/external-provisioner/v6 csi-provisioner"
  "external-attacher $CSI_ATTACHER_VERSION src_module $CSI/external-attacher/v4 csi-attacher"
  "external-resizer $CSI_RESIZER_VERSION src_module $CSI/external-resizer/v2 csi-resizer"
  "external-snapshotter $CSI_SNAPSHOTTER_VERSION src_snapshotter $CSI/external-snapshotter/v8 csi-snapshotter snapshot-controller"
)
# missing: the wanted sources whose binaries are not all in $KTS_CACHE/csi-NAME-VERSION/bin.
missing() {
  local s name version cmds
  for s in "${SOURCES[@]}"; do
    read -r name version _ _ cmds <<< "$s"
    # shellcheck disable=SC2086  # the commands, one word each
    if wanted "$name" && ! have_bins "$KTS_CACHE/csi-$name-$version/bin" $cmds; then echo "$s"; fi
  done
}
# make_workspace: every source in $WS/NAME (wanted or not: the versions chosen must not depend
# on what is built) and $WS/go.work using each module (the snapshotter's client too).
make_workspace() {
  local s name version srcfn srcarg
  rm -rf "$WS"; mkdir -p "$WS"
  printf 'go 1.26.0\n\nuse (\n' > "$WS/go.work"
  for s in "${SOURCES[@]}"; do
    read -r name version srcfn srcarg _ <<< "$s"
    "$srcfn" "$srcarg" "$version" "$WS/$name" || die "cannot get the source of $name $version"
    printf '\t./%s\n' "$name" >> "$WS/go.work"
  done
  printf '\t./external-snapshotter/client\n)\n' >> "$WS/go.work"
}
# csi_from_source OUTDIR VERSION: the commands (CMDS) of the module it runs in, as
# release-tools/build.make builds them: static, the release in main.version.
csi_from_source() {
  local c
  for c in $CMDS; do
    go build -trimpath -ldflags "-s -w -X main.version=$2 -extldflags -static" -o "$1/$c" "./cmd/$c" || return
  done
}

apt_install jq
mkdir -p "$LOGS" "$KTS_CACHE"
t0=$SECONDS
todo=$(missing)
if [ -n "$todo" ]; then
  build_lock "$WS.lock" csi
  todo=$(missing)
fi
if [ -n "$todo" ]; then
  make_workspace
  # Workspace mode refuses -mod=mod; the sums of the versions it chooses go to go.work.sum.
  export GOWORK="$WS/go.work" GOFLAGS="${KTS_GO_P:+-p=$KTS_GO_P}"
  while read -r name version _ _ cmds; do
    # shellcheck disable=SC2086  # the commands, one word each
    CMDS=$cmds cached_build "csi-$name" "$version" "$KTS_CACHE/csi-$name-$version/bin" "$WS/$name" csi_from_source $cmds
  done <<< "$todo"
  rm -rf "$WS"
fi
built=()
for s in "${SOURCES[@]}"; do
  read -r name version _ <<< "$s"
  if wanted "$name"; then built+=("$name-$version"); fi
done
log "CSI binaries ready in $KTS_CACHE (${built[*]}) after $((SECONDS - t0))s"
[ -z "$images" ] || exec bash "$KTS_ROOT/hack/build-images.sh" --csi

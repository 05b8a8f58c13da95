#!/usr/bin/env bash
# Builds the add-ons of a kubeadm cluster of kubelet-ts nodes from the Go module proxy,
# each from its tools module under hack/tools/ at the version pinned in hack/versions.env,
# into $KTS_CACHE/NAME-VERSION/bin (hack/build-images.sh --cluster makes their images):
#   - coredns-$COREDNS_VERSION/bin/coredns: CoreDNS, static (its image is the binary alone)
#   - flannel-$FLANNEL_VERSION/bin/{flanneld,install-conf}: flannel's daemon and the helper
#     its DaemonSet's init container runs to install the CNI config (cgo: on amd64 flannel's
#     udp backend is C, and flanneld always links it)
#   - cni-plugins-$CNI_PLUGINS_VERSION/bin/flannel: the flannel CNI plugin, static (an init
#     container copies it onto the node's /opt/cni/bin, where containerd runs it)
#   - local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION/bin/local-path-provisioner:
#     rancher's local-path-provisioner, static (its image, hack/images/local-path.sh, and
#     manifests/addons/local-path-storage.yaml: the StorageClass local-path)
#   - registry-$REGISTRY_VERSION/bin/registry: the CNCF distribution registry, static (hack/registry.sh
#     runs it beside the stack as the registry the nodes pull from)
#   - otelcol-$OTELCOL_VERSION/bin/otelcol: an OpenTelemetry Collector of the OTLP receiver and the
#     file exporter (hack/tools/otelcol), the collector the kubelet's `tracing` sends to
#     (test/e2e/tracing.test.ts runs it); only when named, as only that test needs it
# A second run with the same pins does nothing.
#   hack/build-addons.sh [NAME...]   only those (cni-plugins flannel coredns local-path-provisioner registry
#                                    otelcol; default: every one but otelcol)
# KTS_NICE=19 and KTS_GO_P=1 build at the lowest priority on one core (a build beside a
# test run); by default a build takes the whole machine.
source "$(dirname "$0")/lib.sh"

export GOTOOLCHAIN=local GOFLAGS="-mod=mod${KTS_GO_P:+ -p=$KTS_GO_P}"
ADDONS=(cni-plugins flannel coredns local-path-provisioner registry otelcol)
for a in "$@"; do [[ " ${ADDONS[*]} " = *" $a "* ]] || die "usage: $0 [${ADDONS[*]}]..."; done
ARGS=("$@")
# wanted NAME: NAME was asked for (or nothing was, which asks for every one but otelcol).
wanted() { { [ ${#ARGS[@]} -eq 0 ] && [ "$1" != otelcol ]; } || [[ " ${ARGS[*]} " = *" $1 "* ]]; }
command -v go >/dev/null || die "go is not installed (need Go >= 1.26)"
command -v gcc >/dev/null || apt_install gcc libc6-dev   # flanneld's cgo
command -v readelf >/dev/null || apt_install binutils    # the static check below

# build_addon NAME MODULE VERSION BUILD BIN...: unless $KTS_CACHE/NAME-VERSION/bin holds every
# BIN, checks that hack/tools/NAME/go.mod requires MODULE at VERSION (the cache is keyed by
# the pin, so the two must agree) and builds it with the function BUILD OUTDIR run there
# (hack/lib.sh cached_build). A build of NAME already running (`make e2e` starts one in the
# background) is waited for first (hack/lib.sh build_lock).
build_addon() {
  local name=$1 module=$2 version=$3 build=$4; shift 4
  local dir="$KTS_CACHE/$name-$version/bin" mod="$KTS_ROOT/hack/tools/$name"
  ! have_bins "$dir" "$@" || return 0
  mkdir -p "$KTS_CACHE"
  build_lock "$KTS_CACHE/$name-$version.lock" "$name"
  ! have_bins "$dir" "$@" || return 0
  local have
  have=$(cd "$mod" && go list -m -f '{{.Version}}' "$module" 2>/dev/null) \
    || die "cannot read the version of $module from $mod/go.mod"
  [ "$have" = "$version" ] \
    || die "$mod/go.mod requires $module $have but hack/versions.env pins $version: make them agree"
  cached_build "$name" "$version" "$dir" "$mod" "$build" "$@"
}

# The flannel CNI plugin of containernetworking/plugins (hack/tools/cni-plugins/go.mod says
# why not flannel-io/cni-plugin). Static: it runs on the node, outside any image.
build_cni_flannel() {
  CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
    -o "$1/flannel" github.com/containernetworking/plugins/plugins/meta/flannel
}

# flanneld needs cgo (see the header); install-conf is built the same way and runs in the
# same image, which carries libc for flanneld anyway. The vpc replace in
# hack/tools/flannel/go.mod is what lets it build from this proxy at all.
build_flannel() {
  CGO_ENABLED=1 go build -trimpath \
    -ldflags "-s -w -X github.com/flannel-io/flannel/pkg/version.Version=$FLANNEL_VERSION" \
    -o "$1/flanneld" github.com/flannel-io/flannel &&
  CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" \
    -o "$1/install-conf" github.com/flannel-io/flannel/cmd/install_conf
}

# CoreDNS as its Makefile builds it: no cgo, the grpcnotrace tag, and the release tag and
# commit in the version it reports (the commit comes from the proxy's record of the tag;
# without it the version still reads right).
build_coredns() {
  local commit
  commit=$(go list -m -f '{{with .Origin}}{{.Hash}}{{end}}' "github.com/coredns/coredns@$COREDNS_VERSION" | cut -c1-8) || commit=""
  CGO_ENABLED=0 go build -trimpath -tags grpcnotrace \
    -ldflags "-s -w -X github.com/coredns/coredns/coremain.gitTag=$COREDNS_VERSION -X github.com/coredns/coredns/coremain.GitCommit=$commit" \
    -o "$1/coredns" github.com/coredns/coredns
}

# rancher/local-path-provisioner as its scripts/build builds it: no cgo, static, the release
# in main.VERSION (what --version prints).
build_local_path() {
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION" \
    -o "$1/local-path-provisioner" github.com/rancher/local-path-provisioner
}

# The distribution registry as its Makefile builds it: no cgo, the release in its version package.
build_registry() {
  CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    -o "$1/registry" github.com/distribution/distribution/v3/cmd/registry
}

# The collector as the Collector Builder (ocb) builds a distribution: the module's own main
# package, no cgo, static; the release in what --version prints. Its core modules must be of
# the release the cache is keyed by, as the file exporter is (build_addon checks that one).
build_otelcol() {
  local core
  core=$(go list -m -f '{{.Version}}' go.opentelemetry.io/collector/otelcol) || return 1
  [ "$core" = "$OTELCOL_VERSION" ] \
    || { echo "go.mod requires go.opentelemetry.io/collector/otelcol $core, not $OTELCOL_VERSION: keep one release" >&2; return 1; }
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$OTELCOL_VERSION" -o "$1/otelcol" .
}

mkdir -p "$LOGS"
ready=()
if wanted cni-plugins; then
  build_addon cni-plugins github.com/containernetworking/plugins "$CNI_PLUGINS_VERSION" build_cni_flannel flannel
  ready+=("cni-plugins-$CNI_PLUGINS_VERSION")
fi
if wanted flannel; then
  build_addon flannel github.com/flannel-io/flannel "$FLANNEL_VERSION" build_flannel flanneld install-conf
  ready+=("flannel-$FLANNEL_VERSION")
fi
if wanted coredns; then
  build_addon coredns github.com/coredns/coredns "$COREDNS_VERSION" build_coredns coredns
  ready+=("coredns-$COREDNS_VERSION")
fi
if wanted local-path-provisioner; then
  build_addon local-path-provisioner github.com/rancher/local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION" \
    build_local_path local-path-provisioner
  lpp="$KTS_CACHE/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION/bin/local-path-provisioner"
  # Static, as upstream's: its image (hack/images/local-path.sh) carries no shared libraries.
  if readelf -lW "$lpp" 2>/dev/null | grep -q 'Requesting program interpreter'; then
    die "$lpp is dynamically linked (see $LOGS/build-local-path-provisioner.log)"
  fi
  v=$("$lpp" --version 2>&1) || die "$lpp --version failed: $(head -3 <<<"$v")"
  [[ $v = *" $LOCAL_PATH_PROVISIONER_VERSION" ]] || die "$lpp --version says '$v', want $LOCAL_PATH_PROVISIONER_VERSION"
  ready+=("local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION")
fi
if wanted registry; then
  build_addon registry github.com/distribution/distribution/v3 "$REGISTRY_VERSION" build_registry registry
  ready+=("registry-$REGISTRY_VERSION")
fi
if wanted otelcol; then
  # Keyed by the file exporter's version: the contrib component, whose release the core's follow.
  build_addon otelcol github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter "$OTELCOL_VERSION" \
    build_otelcol otelcol
  ready+=("otelcol-$OTELCOL_VERSION")
fi
log "add-ons ready in $KTS_CACHE: ${ready[*]}"

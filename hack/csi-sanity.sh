#!/usr/bin/env bash
# csi-sanity (kubernetes-csi/csi-test, the CSI spec's conformance checks of a driver) against the
# CSI hostpath driver deployed on the local cluster of kubelet-ts nodes (hack/cluster/csi-hostpath.sh):
#   - builds cmd/csi-sanity of github.com/kubernetes-csi/csi-test/v5 at CSI_TEST_VERSION
#     (hack/versions.env) from the Go module proxy into $KTS_CACHE/csi-sanity-VERSION/bin, as
#     hack/build-csi.sh builds the sidecars (CGO_ENABLED=0, static); a second run builds nothing;
#   - finds the node csi-hostpathplugin-0 runs on and runs csi-sanity in that node's namespaces
#     (hack/cluster/lib.sh in_node) against the driver's socket there,
#     /var/lib/kubelet/plugins/csi-hostpath/csi.sock (the plugin's hostPath in the driver's
#     deploy manifests, what node-driver-registrar registers with the kubelet). Its target and
#     staging directories are under /var/lib/kubelet/plugins/kts-csi-sanity, which the driver's
#     container shares with the node (its plugins-dir hostPath, Bidirectional), so that what the
#     driver mounts there is what csi-sanity checks.
# The driver runs Controller, Node and Identity on the one socket, as csi-sanity needs.
#   hack/csi-sanity.sh [--build-only] [CSI-SANITY-ARGS...]   e.g. -ginkgo.focus=Node -ginkgo.v
# Writes the JUnit report to _output/cluster/logs/csi-sanity.xml; exits with csi-sanity's status.
source "$(dirname "$0")/cluster/lib.sh"

build_only=""
[ "${1:-}" = --build-only ] && { build_only=1; shift; }
export GOTOOLCHAIN=local GOFLAGS="-mod=mod${KTS_GO_P:+ -p=$KTS_GO_P}" CGO_ENABLED=0
command -v go >/dev/null || die "go is not installed (need Go >= 1.26)"
apt_install jq

MODULE=github.com/kubernetes-csi/csi-test/v5
TOP="$KTS_CACHE/csi-sanity-$CSI_TEST_VERSION"
SANITY="$TOP/bin/csi-sanity"

# build_sanity: unless built already, from a writable copy of the module's directory (the
# module cache's is read-only), at KTS_NICE priority when set.
build_sanity() {
  [ -x "$SANITY" ] && return 0
  mkdir -p "$KTS_CACHE" "$LOGS"
  build_lock "$TOP.lock" csi-sanity
  [ -x "$SANITY" ] && return 0
  local logf="$LOGS/build-csi-sanity.log" start=$SECONDS dir
  log "building csi-sanity $CSI_TEST_VERSION (log: $logf)"
  rm -rf "$TOP/src" "$TOP/bin.tmp"; mkdir -p "$TOP/bin.tmp"
  (
    lower_priority
    dir=$(go mod download -json "$MODULE@$CSI_TEST_VERSION" | jq -r .Dir) && [ -d "$dir" ] || { echo "go mod download $MODULE@$CSI_TEST_VERSION failed"; exit 1; }
    cp -r "$dir" "$TOP/src" && chmod -R u+w "$TOP/src" && cd "$TOP/src" &&
      go build -trimpath -ldflags "-s -w -X main.VERSION=$CSI_TEST_VERSION -extldflags -static" -o "$TOP/bin.tmp/csi-sanity" ./cmd/csi-sanity
  ) >"$logf" 2>&1 || die "csi-sanity build failed (see $logf)"
  rm -rf "${TOP:?}/bin" && mv "$TOP/bin.tmp" "$TOP/bin" && rm -rf "$TOP/src"
  log "built csi-sanity $CSI_TEST_VERSION in $((SECONDS - start))s"
}

build_sanity
[ -z "$build_only" ] || { echo "$SANITY"; exit 0; }

need_root
[ -f "$CLUSTER_KUBECONFIG" ] || die "no cluster ($CLUSTER_KUBECONFIG is missing: hack/cluster/up.sh)"
node=$(ckubectl get pod csi-hostpathplugin-0 -o jsonpath='{.spec.nodeName}' 2>/dev/null) || true
[ -n "$node" ] || die "the CSI hostpath driver is not deployed (hack/cluster/csi-hostpath.sh apply)"
ckubectl wait --for=condition=Ready --timeout=120s pod/csi-hostpathplugin-0 >/dev/null \
  || die "csi-hostpathplugin-0 is not Ready (kubectl get pod csi-hostpathplugin-0)"
SOCK=/var/lib/kubelet/plugins/csi-hostpath/csi.sock
BASE=/var/lib/kubelet/plugins/kts-csi-sanity
in_node "$node" test -S "$SOCK" || die "no CSI socket at $SOCK on $node"
mkdir -p "$CLUSTER_LOGS"
report="$CLUSTER_LOGS/csi-sanity.xml"
log "csi-sanity $CSI_TEST_VERSION against csi-hostpath on $node ($SOCK)"
# clean_base: what a failed check left mounted under BASE goes, then the directories (never rm
# through a mount). csi-sanity makes the mount and staging directories itself (a mkdir that
# fails when they exist) and removes them after each check.
clean_base() {
  # shellcheck disable=SC2016 # expanded by the node's bash
  in_node "$node" bash -c 'for m in $(findmnt -rn -o TARGET | grep "^$1/" | sort -r); do umount "$m" || umount -l "$m"; done
    findmnt -rn -o TARGET | grep -q "^$1/" || rm -rf "$1"' _ "$BASE" || true
}
clean_base
in_node "$node" mkdir -p "$BASE" || die "cannot make $BASE on $node"
rc=0
in_node "$node" "$SANITY" \
  -csi.endpoint "unix://$SOCK" \
  -csi.mountdir "$BASE/mount" \
  -csi.stagingdir "$BASE/staging" \
  -ginkgo.junit-report "$report" \
  "$@" || rc=$?
clean_base
log "csi-sanity exited $rc (JUnit report: $report)"
exit $rc

#!/usr/bin/env bash
# Builds the upstream conformance tests of the pinned release from the Go module proxy
# into $KTS_CACHE/conformance-$KUBE_VERSION/bin: e2e.test (`go test -c` of
# k8s.io/kubernetes/test/e2e), e2e_node.test (of test/e2e_node, for hack/node-conformance.sh),
# agnhost, nonewprivs' nnp, sample-apiserver, sample-device-plugin and dra-test-driver
# (static, for their images; the last is upstream's DRA test driver, test/e2e/dra/test-driver)
# and the ginkgo CLI of the version the tests were written against (it runs e2e.test in
# parallel). Only what is missing is built.
# kubectl comes from the control plane build of the same pin. A second run does nothing.
# With names (hack/build-conformance.sh sample-device-plugin), only those: hack/up.sh builds
# the sample device plugin so, for the image every set imports (hack/build-images.sh), and
# hack/cluster/up.sh the DRA test driver too, for the image the cluster's set (--cluster) adds.
# One build at a time: a run that misses a binary waits for a build already running (`make e2e`
# starts one in the background), then builds what is still missing.
source "$(dirname "$0")/lib.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
command -v go >/dev/null || die "go is not installed (need Go >= 1.26 for $KUBE_VERSION)"

dir="$KTS_CACHE/conformance-$KUBE_VERSION/bin"
mod="$KTS_ROOT/hack/tools/conformance"
mkdir -p "$LOGS" "$BIN" "$dir"
# Each binary: its package and how it is linked (static for the images' roots).
declare -A pkgs=([e2e.test]=k8s.io/kubernetes/test/e2e [e2e_node.test]=k8s.io/kubernetes/test/e2e_node [agnhost]=k8s.io/kubernetes/test/images/agnhost
  [nnp]=k8s.io/kubernetes/test/images/nonewprivs [sample-apiserver]=k8s.io/sample-apiserver
  [sample-device-plugin]=k8s.io/kubernetes/test/images/sample-device-plugin
  [dra-test-driver]=k8s.io/kubernetes/test/e2e/dra/test-driver
  [ginkgo]=github.com/onsi/ginkgo/v2/ginkgo)
bins=(e2e.test e2e_node.test agnhost nnp sample-apiserver sample-device-plugin dra-test-driver ginkgo)
if [ $# -gt 0 ]; then
  for b in "$@"; do [ -n "${pkgs[$b]:-}" ] || die "usage: $0 [${bins[*]}]..."; done
  bins=("$@")
fi
missing() { todo=(); for b in "${bins[@]}"; do [ -x "$dir/$b" ] || todo+=("$b"); done; }
missing
# Another run may be building them (hack/lib.sh build_lock): wait for it, then look again.
[ ${#todo[@]} -eq 0 ] || { build_lock "$dir/.lock" "conformance (log: $LOGS/build-conformance.log)"; missing; }
if [ ${#todo[@]} -gt 0 ]; then
  v=${KUBE_VERSION#v}; ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=${v%%.*} -X $p.gitMinor=$(echo "$v" | cut -d. -f2) -X $p.gitTreeState=clean"
  done
  if [[ " ${todo[*]} " = *" e2e.test "* ]]; then
    log "building ${todo[*]} of $KUBE_VERSION (cold: ~15 min on 2 cores; log: $LOGS/build-conformance.log)"
  else
    log "building ${todo[*]} of $KUBE_VERSION (log: $LOGS/build-conformance.log)"
  fi
  (
    cd "$mod" || exit 1
    for b in "${todo[@]}"; do
      case $b in
        # -vet=off: `go test -c` vets the package and, for vet's facts, every package it
        # imports (cmd/go's addTestVet): on a cold cache that made client-go/rest's test binary
        # a third slower (166 s, 125 without), and e2e.test imports ~2000 packages. The binary
        # needs none of it.
        e2e.test|e2e_node.test) go test -c -vet=off -trimpath -ldflags "-s -w$ld" -o "$dir/$b.tmp" "${pkgs[$b]}" ;;
        ginkgo) go build -trimpath -ldflags "-s -w" -o "$dir/$b.tmp" "${pkgs[$b]}" ;;
        *) CGO_ENABLED=0 go build -trimpath -ldflags "-s -w$ld" -o "$dir/$b.tmp" "${pkgs[$b]}" ;;
      esac && mv "$dir/$b.tmp" "$dir/$b" || exit 1
    done
  ) >"$LOGS/build-conformance.log" 2>&1 &
  pid=$! n=0
  # Polled every second, so that a quick build (hack/up.sh's one binary) does not wait 30 s.
  while kill -0 $pid 2>/dev/null; do
    sleep 1; n=$((n + 1))
    [ $((n % 30)) -ne 0 ] || ! kill -0 $pid 2>/dev/null \
      || log "  still building conformance tests... ($(for b in "${todo[@]}"; do [ -x "$dir/$b" ] && echo "$b"; done | wc -l)/${#todo[@]} linked)"
  done
  wait $pid || die "conformance build failed (see $LOGS/build-conformance.log)"
fi
for b in "${bins[@]}"; do ln -sf "$dir/$b" "$BIN/$b"; done
log "${bins[*]} ready in $BIN ($KUBE_VERSION)"

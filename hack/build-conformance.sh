#!/usr/bin/env bash
# Builds the upstream conformance tests of the pinned release from the Go module proxy
# into $KTS_CACHE/conformance-$KUBE_VERSION/bin: e2e.test (`go test -c` of
# k8s.io/kubernetes/test/e2e), agnhost and nonewprivs' nnp (static, for their images) and the ginkgo
# CLI of the version the tests were written against (it runs e2e.test in parallel).
# kubectl comes from the control plane build of the same pin. A second run does nothing.
source "$(dirname "$0")/lib.sh"

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
command -v go >/dev/null || die "go is not installed (need Go >= 1.26 for $KUBE_VERSION)"

dir="$KTS_CACHE/conformance-$KUBE_VERSION/bin"
mod="$KTS_ROOT/hack/tools/conformance"
mkdir -p "$LOGS" "$BIN"
bins=(e2e.test agnhost nnp ginkgo)
missing() { local b; for b in "${bins[@]}"; do [ -x "$dir/$b" ] || return 0; done; return 1; }
if missing; then
  v=${KUBE_VERSION#v}; ld=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=${v%%.*} -X $p.gitMinor=$(echo "$v" | cut -d. -f2) -X $p.gitTreeState=clean"
  done
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  log "building e2e.test, agnhost and ginkgo $KUBE_VERSION (cold: ~15 min on 2 cores; log: $LOGS/build-conformance.log)"
  (
    cd "$mod" &&
    go test -c -trimpath -ldflags "-s -w$ld" -o "$dir.tmp/e2e.test" k8s.io/kubernetes/test/e2e &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir.tmp/agnhost" k8s.io/kubernetes/test/images/agnhost &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir.tmp/nnp" k8s.io/kubernetes/test/images/nonewprivs &&
    go build -trimpath -ldflags "-s -w" -o "$dir.tmp/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
  ) >"$LOGS/build-conformance.log" 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null; do sleep 30; kill -0 $pid 2>/dev/null && log "  still building conformance tests... ($(ls "$dir.tmp" | wc -l)/${#bins[@]} linked)"; done
  wait $pid || die "conformance build failed (see $LOGS/build-conformance.log)"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
for b in "${bins[@]}"; do ln -sf "$dir/$b" "$BIN/$b"; done
log "conformance binaries ready in $BIN ($KUBE_VERSION)"

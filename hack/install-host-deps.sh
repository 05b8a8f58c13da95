#!/usr/bin/env bash
# Installs what the local stack needs on the host: Debian packages (runtime, CNI,
# networking tools, a C toolchain for the pause image) and crictl, built from the
# Go module proxy (no release download is reachable) into $KTS_CACHE.
source "$(dirname "$0")/lib.sh"
need_root

apt_install containerd runc containernetworking-plugins iptables conntrack socat \
  iproute2 procps util-linux kmod openssl ca-certificates curl jq \
  busybox-static gcc libc6-dev make tar gzip

# crictl: operators and hack/down.sh use it to talk CRI to containerd.
crictl_dir="$KTS_CACHE/crictl-$CRICTL_VERSION"
if [ ! -x "$crictl_dir/crictl" ]; then
  command -v go >/dev/null || die "go is not installed (needed to build crictl $CRICTL_VERSION)"
  mkdir -p "$LOGS" "$crictl_dir.tmp"
  log "building crictl $CRICTL_VERSION (log: $LOGS/build-crictl.log)"
  (cd "$KTS_ROOT/hack/tools/crictl" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=${CRICTL_VERSION#v}" \
      -o "$crictl_dir.tmp/crictl" sigs.k8s.io/cri-tools/cmd/crictl) >"$LOGS/build-crictl.log" 2>&1 \
    || die "crictl build failed (see $LOGS/build-crictl.log)"
  rm -rf "$crictl_dir" && mv "$crictl_dir.tmp" "$crictl_dir"
fi
mkdir -p "$BIN"
ln -sf "$crictl_dir/crictl" "$BIN/crictl"
# Without this file crictl probes several sockets and warns on every call; keep an operator's own.
[ -f /etc/crictl.yaml ] || printf 'runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 10\n' \
  "$CONTAINERD_SOCK" "$CONTAINERD_SOCK" > /etc/crictl.yaml
log "host dependencies ready (crictl $CRICTL_VERSION in $BIN)"

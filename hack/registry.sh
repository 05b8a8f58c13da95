#!/usr/bin/env bash
# The registry the nodes pull from: the CNCF distribution registry (hack/build-addons.sh
# registry) on the host at $REGISTRY, an address of kts0 that the local stack's containerd and
# every cluster node's reach (their default route is the host). No outside registry is
# reachable, so it holds the images hack/build-images.sh builds, each under the path of the
# registry its name points at ($REGISTRY/registry.k8s.io/pause:3.10.1, ...), and every
# containerd tries it first for those registries (registry_hosts in hack/lib.sh). A pull then
# really goes over the wire: imagePullPolicy Always, a removed image pulled back, an image
# volume. Its storage is in the cache, so it survives `make down` as the image tarballs do.
#   hack/registry.sh [start]   starts it, or reuses the one running
#   hack/registry.sh stop
source "$(dirname "$0")/lib.sh"
need_root

REGISTRY_BIN="$KTS_CACHE/registry-$REGISTRY_VERSION/bin/registry"
conf="$LOCAL/registry.yml"

case "${1:-start}" in
  stop) stop_bg registry; exit 0 ;;
  start) ;;
  *) die "usage: $0 [start|stop]" ;;
esac

"$KTS_ROOT/hack/build-addons.sh" registry
apt_install curl
host_address
mkdir -p "$LOCAL" "$KTS_CACHE/registry"
# OTEL: the registry traces to an OTLP collector by default; there is none.
cat > "$conf.new" <<YAML
# Written by hack/registry.sh; edits are overwritten.
version: 0.1
log: {level: info, formatter: text, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $KTS_CACHE/registry}
  delete: {enabled: true}
http:
  addr: $REGISTRY
YAML
registry_ok() { curl -sf --max-time 2 "http://$REGISTRY/v2/" >/dev/null; }
if running registry && cmp -s "$conf.new" "$conf"; then
  rm -f "$conf.new"
  registry_ok && { log "registry already running on $REGISTRY"; exit 0; }
fi
stop_bg registry
mv "$conf.new" "$conf"
port_free "${REGISTRY##*:}" registry
log "starting the registry $REGISTRY_VERSION on $REGISTRY (log: $LOGS/registry.log)"
start_bg registry env OTEL_TRACES_EXPORTER=none "$REGISTRY_BIN" serve "$conf"
wait_for 30 registry registry_ok

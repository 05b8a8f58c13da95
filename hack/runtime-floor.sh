#!/usr/bin/env bash
# runtime-floor.sh start|stop|status: a third containerd of the stack's build, with no kubelet, for
# test/bench/floor.ts (issue #47: the runtime's own floor in `make bench`): the bench's pods are
# created on it straight through CRI, so that each kubelet's pod start can be read as a ratio
# of what the same burst costs the runtime alone.
#
# Everything is its own, as hack/upstream-kubelet.sh's containerd: root $CTRD_ROOT-floor, state,
# socket and runc root under /run/containerd-floor (netns mounts there too), a CNI conf dir with
# a bridge kts-br2 on FLOOR_SUBNET (10.87.0.0/24: neither the cluster's 10.88.0.0/16 nor the
# service range), host-local data in /var/lib/cni-floor, the pods' cgroups under /floor, their
# logs in /var/log/pods-floor. The images are copied from the stack's containerd (no registry
# is reachable). `stop` removes every sandbox, container, netns, mount, cgroup, the bridge and
# its NAT rules, and all that state: the host is as before `start`.
# Log: _output/local/logs/containerd-floor.log.
source "$(dirname "$0")/lib.sh"
need_root

FLOOR_CTD_DIR="$LOCAL/containerd-floor"
FLOOR_CTD_ROOT=$CTRD_ROOT-floor
FLOOR_CTD_STATE=/run/containerd-floor
FLOOR_SOCK="$FLOOR_CTD_STATE/containerd.sock"
FLOOR_CNI_DIR="$LOCAL/cni-floor/net.d"
FLOOR_CNI_DATA=/var/lib/cni-floor
FLOOR_NETWORK=kubelet-floor
FLOOR_BRIDGE=kts-br2
FLOOR_SUBNET="${FLOOR_SUBNET:-10.87.0.0/24}"
# What test/bench/floor.ts uses: the pods' cgroup root and log dir.
FLOOR_CGROUP=floor
FLOOR_POD_LOGS=/var/log/pods-floor
IMAGES=("$(pause_image)" docker.io/library/busybox:1.36)

floor_ctr() { "$CTR" --address "$FLOOR_SOCK" -n k8s.io "$@"; }
floor_sock_ok() { [ -S "$FLOOR_SOCK" ] && "$CTR" --address "$FLOOR_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }
main_sock_ok() { [ -S "$CONTAINERD_SOCK" ] && "$CTR" --address "$CONTAINERD_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }
cgroup_dirs() { local d; for d in /sys/fs/cgroup/*/; do [ -f "$d/cgroup.procs" ] && echo "${d%/}/$FLOOR_CGROUP"; done; return 0; }

copy_image() {
  local out
  out=$(ctr_k8s images export "$2" "$1" 2>&1) || { echo "${out##*$'\n'} (is it built? hack/build-images.sh)"; return 1; }
  floor_ctr images import "$2" 2>&1
}

start() {
  if running containerd-floor && floor_sock_ok; then log "containerd-floor already running (pid $(cat "$PIDS/containerd-floor.pid"))"; return 0; fi
  main_sock_ok || die "the stack's containerd is not running on $CONTAINERD_SOCK: run make up"
  stop   # what a run that did not finish left
  mkdir -p "$FLOOR_CTD_DIR" "$FLOOR_CNI_DIR" "$FLOOR_CNI_DATA" "$FLOOR_POD_LOGS"
  runtime_toml by=hack/runtime-floor.sh root="$FLOOR_CTD_ROOT" state="$FLOOR_CTD_STATE" sock="$FLOOR_SOCK" \
    runc_root="$FLOOR_CTD_STATE/runc" netns_under_state=true cni_bin=/usr/lib/cni cni_conf="$FLOOR_CNI_DIR" \
    > "$FLOOR_CTD_DIR/config.toml"
  # The bridge as the kubelets' (src/network/cni-config.ts, upstream-kubelet.sh write_conflist).
  cat > "$FLOOR_CNI_DIR/10-$FLOOR_NETWORK.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "$FLOOR_NETWORK",
  "plugins": [
    {
      "type": "bridge", "bridge": "$FLOOR_BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$FLOOR_SUBNET" }]], "routes": [{ "dst": "0.0.0.0/0" }], "dataDir": "$FLOOR_CNI_DATA/networks" }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } },
    { "type": "loopback" }
  ]
}
JSON
  log "starting containerd-floor ($RUNTIME; log: $LOGS/containerd-floor.log)"
  mkdir -p "$LOGS"; : > "$LOGS/containerd-floor.log"
  start_bg containerd-floor env PATH="$CTRD_PATH:$PATH" "$CTRD" --config "$FLOOR_CTD_DIR/config.toml"
  wait_for 30 containerd-floor floor_sock_ok
  local img tar err
  tar=$(mktemp "$FLOOR_CTD_DIR/image.XXXXXX.tar")
  for img in "${IMAGES[@]}"; do
    floor_ctr images check "name==$img" 2>/dev/null | grep -q complete && continue
    err=$(copy_image "$img" "$tar") || { sleep 1; err=$(copy_image "$img" "$tar"); } \
      || { rm -f "$tar"; die "cannot copy $img from $CONTAINERD_SOCK into $FLOOR_SOCK: ${err##*$'\n'}"; }
  done
  rm -f "$tar"
  log "containerd-floor up on $FLOOR_SOCK (pid $(cat "$PIDS/containerd-floor.pid")), pods on $FLOOR_BRIDGE $FLOOR_SUBNET"
}

# Best effort and quiet when already gone: stop is also start's cleanup.
stop() {
  local crictl=(crictl --runtime-endpoint "unix://$FLOOR_SOCK" --image-endpoint "unix://$FLOOR_SOCK" --timeout 30s)
  if floor_sock_ok && [ -n "$("${crictl[@]}" pods -q 2>/dev/null)" ]; then
    log "removing the pod sandboxes left in containerd-floor"
    "${crictl[@]}" rmp -af >/dev/null 2>&1 || log "crictl rmp -af on $FLOOR_SOCK failed"
  fi
  stop_bg containerd-floor 30
  local root id pid m
  for root in "$FLOOR_CTD_STATE"/runc/*; do
    [ -d "$root" ] || continue
    for id in $("$RUNC" --root "$root" list -q 2>/dev/null); do "$RUNC" --root "$root" delete -f "$id" >/dev/null 2>&1; done
  done
  for pid in $(pgrep -f '^/[^ ]*/containerd-shim-runc-v2 ' || true); do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-address $FLOOR_SOCK " && kill -KILL "$pid" 2>/dev/null
  done
  for m in $(awk '{print $2}' /proc/self/mounts | grep -E "^($FLOOR_CTD_STATE|$FLOOR_CTD_ROOT|$FLOOR_POD_LOGS)(/|$)" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"
  done
  if ip link show "$FLOOR_BRIDGE" >/dev/null 2>&1; then ip link del "$FLOOR_BRIDGE"; fi
  local rule chain
  while read -r rule; do
    chain=${rule##* -j }
    eval "iptables -t nat -D ${rule#-A }" 2>/dev/null
    iptables -t nat -F "$chain" 2>/dev/null; iptables -t nat -X "$chain" 2>/dev/null
  done < <(iptables -t nat -S POSTROUTING 2>/dev/null | grep -F "name: \\\"$FLOOR_NETWORK\\\"" || true)
  rm -rf "$FLOOR_CNI_DATA" "$LOCAL/cni-floor" /var/lib/cni/results/"$FLOOR_NETWORK"-* 2>/dev/null
  local dir
  for dir in "$FLOOR_CTD_ROOT" "$FLOOR_CTD_STATE" "$FLOOR_POD_LOGS"; do
    [ -d "$dir" ] || continue
    if awk '{print $2}' /proc/self/mounts | grep -qE "^$dir(/|$)"; then log "mounts remain under $dir: not removing it"; else rm -rf --one-file-system "$dir"; fi
  done
  rm -rf "$FLOOR_CTD_DIR"
  for dir in $(cgroup_dirs); do [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null; done
  for dir in $(cgroup_dirs); do [ -d "$dir" ] && log "cannot remove cgroup $dir (processes left in it?)"; done
  return 0
}

case "${1:-}" in
  start) start ;;
  stop) stop; log "containerd-floor stopped, its pods and state removed" ;;
  status) if running containerd-floor; then echo "containerd-floor running (pid $(cat "$PIDS/containerd-floor.pid"), $FLOOR_SOCK)"; else echo "containerd-floor stopped"; exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac

#!/usr/bin/env bash
# kubelet.sh start|stop|restart|status: runs kubelet-ts (dist/cli/main.js on _output/bin/node)
# under hack/supervise.sh, which restarts it when it exits as systemd would.
# Log: _output/local/logs/kubelet-ts.log. Writes _output/local/kubelet-config.yaml
# (with featureGates from KTS_FEATURE_GATES=Name=bool,..., and the fields in the file
# KTS_CONFIG_EXTRA names). KTS_KUBELET_FLAGS: more flags of the kubelet's own (the credential
# provider test's --image-credential-provider-*), split on spaces.
source "$(dirname "$0")/lib.sh"
need_root
name=kubelet-ts
child_pid="$PIDS/$name.child.pid"

write_config() {
  cat > "$LOCAL/kubelet-config.yaml" <<YAML
# Written by hack/kubelet.sh; edits are overwritten.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
cgroupDriver: cgroupfs
# As kubeadm writes it: the client certificate is renewed before it expires.
rotateCertificates: true
# This host is cgroup v1, which the kubelet (upstream's, and kubelet-ts) refuses by default since 1.35.
failCgroupV1: false
clusterDomain: cluster.local
clusterDNS:
- 10.96.0.10
authentication:
  x509:
    clientCAFile: $PKI/ca.crt
# No imagefs.available eviction (as kind's nodes): the image filesystem is the host's, whose free
# share sits near the default 15%, and a node under DiskPressure reclaims every unused image
# mid-test. The root dir is a filesystem of its own: nodefs keeps upstream's defaults (the chaos
# slice fills it and expects DiskPressure), as does memory. The eviction tests set their own.
evictionHard: {memory.available: 100Mi, nodefs.available: 10%, nodefs.inodesFree: 5%, imagefs.available: "0%"}
YAML
  # KTS_FEATURE_GATES=Name=bool,...: e.g. EventedPLEG=false for the bench's relist-only run.
  if [ -n "${KTS_FEATURE_GATES:-}" ]; then
    echo "featureGates:" >> "$LOCAL/kubelet-config.yaml"
    local g; for g in ${KTS_FEATURE_GATES//,/ }; do echo "  ${g%%=*}: ${g#*=}" >> "$LOCAL/kubelet-config.yaml"; done
  fi
  # KTS_CONFIG_EXTRA=FILE: more KubeletConfiguration fields (the eviction tests' thresholds). A
  # one-line field of the stack's own that it sets again is its (YAML keys must be unique).
  if [ -n "${KTS_CONFIG_EXTRA:-}" ]; then
    local k; for k in $(grep -oE '^[A-Za-z]+:' "$KTS_CONFIG_EXTRA" | tr -d :); do sed -i "/^$k: [^ ]/d" "$LOCAL/kubelet-config.yaml"; done
    cat "$KTS_CONFIG_EXTRA" >> "$LOCAL/kubelet-config.yaml"
  fi
}

# root_fs: mounts the root dir's own filesystem (KUBELET_ROOT_IMG of hack/lib.sh), made on first
# use. A root dir still on the host's filesystem is taken over once it has no mounts beneath.
root_fs() {
  mkdir -p "$KUBELET_ROOT"
  findmnt -rn -o SOURCE,TARGET | awk -v t="$KUBELET_ROOT" '$2 == t && $1 ~ /^\/dev\/loop/ {f = 1} END {exit !f}' && return 0
  [ -z "$(awk -v r="$KUBELET_ROOT/" 'index($2, r) == 1' /proc/self/mounts)" ] \
    || die "$KUBELET_ROOT is on the host's filesystem with pods' mounts beneath it: run make down once (the root dir moves to a filesystem of its own)"
  while mountpoint -q "$KUBELET_ROOT"; do umount "$KUBELET_ROOT" || die "cannot unmount $KUBELET_ROOT"; done
  apt_install e2fsprogs
  if [ ! -f "$KUBELET_ROOT_IMG" ]; then
    truncate -s "$KUBELET_ROOT_SIZE" "$KUBELET_ROOT_IMG" && mkfs.ext4 -q -m 0 -F "$KUBELET_ROOT_IMG" \
      || { rm -f "$KUBELET_ROOT_IMG"; die "cannot make a $KUBELET_ROOT_SIZE ext4 image at $KUBELET_ROOT_IMG"; }
  fi
  # discard: what is freed inside is freed in the sparse image too.
  mount -o loop,discard "$KUBELET_ROOT_IMG" "$KUBELET_ROOT" || die "cannot mount $KUBELET_ROOT_IMG on $KUBELET_ROOT"
  # Shared, as a systemd host's mounts are (this one's / is private): else the kubelet's rshared
  # bind of its root dir stacks on a private mount, and containerd, which looks at the first of
  # the two, refuses Bidirectional volumeMounts ("... is not a shared mount"; hack/cluster/node.sh).
  mount --make-rshared "$KUBELET_ROOT" || die "cannot make $KUBELET_ROOT a shared mount"
  log "$KUBELET_ROOT: a filesystem of its own, $KUBELET_ROOT_SIZE ($KUBELET_ROOT_IMG)"
}

start() {
  if running $name; then log "$name already running (supervisor pid $(cat "$PIDS/$name.pid"))"; return 0; fi
  [ -x "$BIN/node" ] || die "$BIN/node is missing: run hack/install-node.sh"
  [ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
  [ -s "$LOCAL/bootstrap-kubelet.conf" ] || die "$LOCAL/bootstrap-kubelet.conf is missing: run hack/join-objects.sh"
  mkdir -p "$LOCAL" /etc/kubernetes/manifests /etc/cni/net.d
  root_fs
  write_config
  save_kernel_tunables
  log "starting $name (log: $LOGS/$name.log)"
  # The malloc and V8 settings as in the shebang of src/cli/main.ts
  # (less resident memory); KTS_NODE_FLAGS: more node/V8 flags, for make bench's BENCH_NODE_FLAGS.
  KTS_SUPERVISE_CHILD_PID_FILE="$child_pid" start_bg $name "$KTS_ROOT/hack/supervise.sh" \
    env MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 \
    "$BIN/node" --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50 ${KTS_NODE_FLAGS:-} "$KTS_ROOT/dist/cli/main.js" \
    --bootstrap-kubeconfig "$LOCAL/bootstrap-kubelet.conf" --kubeconfig "$LOCAL/kubelet.kubeconfig" \
    --config "$LOCAL/kubelet-config.yaml" \
    --hostname-override "$NODE_NAME" --node-ip "$KTS_IP" \
    --container-runtime-endpoint "unix://$CONTAINERD_SOCK" --root-dir "$KUBELET_ROOT" --network-plugin kubenet --v 2 \
    ${KTS_KUBELET_FLAGS:-}
  sleep 1
  running $name || die "$name supervisor exited at once (see $LOGS/$name.log)"
}

# Only the supervisor gets TERM: it forwards it to the kubelet once and waits for it.
stop() {
  running $name || { rm -f "$PIDS/$name.pid" "$child_pid"; return 0; }
  local pid; pid=$(cat "$PIDS/$name.pid")
  log "stopping $name (supervisor pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local end=$((SECONDS + 20))
  while alive "$pid" && [ $SECONDS -lt $end ]; do sleep 0.2; done
  alive "$pid" && log "$name did not stop in 20s: killing it"
  # Whatever is left in its process group (start_bg made the supervisor the leader),
  # e.g. a grandchild the kubelet left behind.
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$PIDS/$name.pid" "$child_pid"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) if running $name; then echo "$name running (supervisor $(cat "$PIDS/$name.pid"), kubelet $(cat "$child_pid" 2>/dev/null))"; else echo "$name stopped"; exit 1; fi ;;
  *) die "usage: $0 start|stop|restart|status" ;;
esac

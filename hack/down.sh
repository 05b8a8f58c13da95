#!/usr/bin/env bash
# Full reset of the local cluster: stops kubelet-ts, removes every CRI pod while containerd
# still runs, stops the control plane and containerd, then removes what pods leave on the
# host (netns, CNI IPs, bridge, iptables chains, mounts, cgroups), the kts0 interface,
# the kubelet's CNI conflist, etcd's data, /var/lib/kubelet and its filesystem's image, pod
# logs (/var/log/pods), and the static pod files a chaos run left.
# Keeps the PKI, logs, images and build caches. Safe to run twice: every step tolerates
# things already gone, and only a step that cannot make progress is reported.
source "$(dirname "$0")/lib.sh"
need_root
mkdir -p "$LOGS"
# The cluster's nodes mount their own dirs over the host's /var/lib/kubelet and
# /var/local-path-provisioner in their mount namespaces: removing those directories here (below)
# would detach the nodes' mounts, and their kubelets would go on in the host's (taking its pods'
# directories for orphans). `make down` removes the cluster first.
# (And its systemd nodes, hack/cluster/systemd.sh: their kubelets write the kernel settings
# restored below.)
if compgen -G "/run/kts/ns/*.mnt" >/dev/null \
  || { command -v podman >/dev/null && [ -n "$(podman ps -aq --filter label=kts.cluster.node 2>/dev/null)" ]; }; then
  die "the local cluster's nodes are up: run hack/cluster/down.sh first (make down runs both)"
fi
set +e   # Best effort from here on: one stuck item must not stop the rest of the cleanup.

"$KTS_ROOT/hack/kubelet.sh" stop
# The static pod files of a chaos run (test/chaos/churn.ts writes chaos-NS-NAME.json into the
# staticPodPath of hack/kubelet.sh and removes them at its end): a run killed midway leaves
# them, and the next kubelet would start their pods again. Only those: the rest may be an operator's.
for f in /etc/kubernetes/manifests/chaos-*; do
  [ -e "$f" ] && { log "removing the chaos run's static pod file $f"; rm -f "$f"; }
done
# The binaries of the runtime the stack came up with (RUNTIME then).
use_runtime "$(recorded_runtime "$LOCAL/containerd")"

# CRI pods live in containerd's database across restarts (a leaked sandbox name blocks the
# next pod of that name), so when our containerd is not running, start it just to clean up.
sock_ok() { [ -S "$CONTAINERD_SOCK" ] && "$CTR" --address "$CONTAINERD_SOCK" --connect-timeout 2s version >/dev/null 2>&1; }
if ! sock_ok && [ -f "$LOCAL/containerd/config.toml" ] && [ -f "$CTRD_ROOT/io.containerd.metadata.v1.bolt/meta.db" ] \
   && [ -z "$(foreign_containerd_pids)" ] && ! running containerd; then
  log "starting containerd to remove its pods through CRI"
  start_bg containerd env PATH="$CTRD_PATH:$PATH" "$CTRD" --config "$LOCAL/containerd/config.toml"
  for _ in $(seq 60); do sock_ok && break; sleep 0.5; done
fi

tmp_conflist=/etc/cni/net.d/99-kts-down.conflist
crictl=(crictl --runtime-endpoint "unix://$CONTAINERD_SOCK" --image-endpoint "unix://$CONTAINERD_SOCK" --timeout 30s)
if command -v crictl >/dev/null && [ -S "$CONTAINERD_SOCK" ] && "${crictl[@]}" version >/dev/null 2>&1; then
  n=$("${crictl[@]}" pods -q 2>/dev/null | wc -l)
  # Stopping a sandbox runs CNI DEL, which fails ("cni plugin not initialized") without
  # any CNI config: lend containerd a loopback-only one while it removes the pods.
  net_ready() { "${crictl[@]}" info 2>/dev/null | jq -e '.status.conditions[] | select(.type == "NetworkReady") | .status' >/dev/null; }
  if [ "$n" -gt 0 ] && ! net_ready; then
    echo "{\"cniVersion\": \"0.4.0\", \"name\": \"$CNI_NETWORK\", \"plugins\": [{\"type\": \"loopback\"}]}" > "$tmp_conflist"
    for _ in $(seq 20); do net_ready && break; sleep 0.5; done
  fi
  if [ "$n" -gt 0 ]; then
    log "removing $n pod sandbox(es) through CRI"
    "${crictl[@]}" rmp -af >>"$LOGS/down.log" 2>&1 || log "crictl rmp -af failed (see $LOGS/down.log)"
  fi
  # Containers whose sandbox is already gone.
  [ -z "$("${crictl[@]}" ps -aq 2>/dev/null)" ] || "${crictl[@]}" rm -af >>"$LOGS/down.log" 2>&1
fi

for c in kube-scheduler kube-controller-manager kube-apiserver etcd registry; do stop_bg "$c"; done
stop_bg containerd 30

# Tasks containerd left behind (it was not running, or CRI failed): kill them with runc,
# then their shims, which outlive containerd by design.
for root in /run/containerd/runc/* /run/containerd1/runc/*; do
  [ -d "$root" ] || continue
  for id in $("$RUNC" --root "$root" list -q 2>/dev/null); do
    log "deleting leftover container $id (runc root $root)"
    "$RUNC" --root "$root" delete -f "$id" >>"$LOGS/down.log" 2>&1
  done
done
# (The cluster's nodes run shims with the same address inside their own mount namespaces.)
for pid in $(pgrep -f '^/[^ ]*/containerd-shim-runc-v2 ' || true); do
  if in_host_mount_ns "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-address $CONTAINERD_SOCK"; then
    log "killing leftover shim $pid"; kill -KILL "$pid" 2>/dev/null
  fi
done

# Mounts: network namespaces, rootfs/shm of containers, pod volumes. Deepest first.
mounts() { awk '{print $2}' /proc/self/mounts | grep -E '^(/run/netns|/var/run/netns|/run/containerd1?|/var/lib/kubelet|/var/lib/containerd1?/io\.containerd\.grpc\.v1\.cri)/' | sort -r; }
for m in $(mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "cannot unmount $m"; done
# The root dir itself: the kubelet bind-mounts it shared (upstream's MakeRShared), maybe twice.
while mountpoint -q /var/lib/kubelet; do umount /var/lib/kubelet 2>/dev/null || umount -l /var/lib/kubelet || break; done
rm -f /run/netns/cni-* /var/run/netns/cni-* 2>/dev/null

# CNI state of our network: host-local IP allocations and libcni's result cache.
rm -rf "/var/lib/cni/networks/$CNI_NETWORK" /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null
rm -f "$CNI_CONFLIST" "$tmp_conflist"

# The bridge the conflist creates (veths went with their namespaces) and our dummy interface.
for l in "$CNI_BRIDGE" "$KTS_IFACE"; do ip link show "$l" >/dev/null 2>&1 && { log "deleting interface $l"; ip link del "$l"; }; done

# iptables chains of the bridge (ipMasq) and portmap plugins: CNI-*. Drop the jumps into
# them from the built-in chains first, then flush and delete the chains.
for ipt in iptables ip6tables; do
  command -v $ipt >/dev/null || continue
  for t in nat filter mangle; do
    rules=$($ipt -t $t -S 2>/dev/null) || continue
    grep -q -- ' -j CNI-' <<<"$rules" || grep -q -- '^-N CNI-' <<<"$rules" || continue
    log "removing CNI-* iptables chains ($ipt -t $t)"
    grep -E '^-A [A-Z]+ .*-j CNI-' <<<"$rules" | grep -vE '^-A CNI-' | while read -r _ chain rest; do
      eval "$ipt -t $t -D $chain $rest" 2>/dev/null
    done
    for ch in $(awk '$1=="-N" && $2 ~ /^CNI-/ {print $2}' <<<"$rules"); do $ipt -t $t -F "$ch" 2>/dev/null; done
    for ch in $(awk '$1=="-N" && $2 ~ /^CNI-/ {print $2}' <<<"$rules"); do $ipt -t $t -X "$ch" 2>/dev/null; done
  done
done

# Pod cgroups (containerd leaves the parents behind), and the empty k8s.io parents that
# hack/build-images.sh's ctr smoke runs leave: children first.
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io; do
  [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  [ -d "$d" ] && log "cannot remove cgroup $d (processes left in it?)"
done

# State of the cluster itself. Never recurse through a mount (a hostPath bind would be emptied).
if [ -z "$(awk '{print $2}' /proc/self/mounts | grep -E '^/var/lib/kubelet(/|$)')" ]; then
  rm -rf --one-file-system /var/lib/kubelet
  # Its own filesystem (hack/kubelet.sh), unmounted above with the binds.
  rm -f "$KUBELET_ROOT_IMG"
else
  log "mounts remain under /var/lib/kubelet: not removing it"
fi
# Pod logs of pods that no longer exist (the kubelet's and CRI's log directories).
rm -rf /var/log/pods/* /var/log/containers/* 2>/dev/null
[ -d "$LOCAL/etcd" ] && { log "removing etcd data ($LOCAL/etcd)"; rm -rf "$LOCAL/etcd"; }
# The volumes local-path-provisioner made for claims that were never deleted.
rm -rf --one-file-system /var/local-path-provisioner
# The node's credentials go with the cluster state: the next up bootstraps them again.
rm -f "$LOCAL/kubelet.kubeconfig"

# The next `make up` runs RUNTIME's containerd (by default containerd2), not this one's.
rm -f "$LOCAL/containerd/runtime"

# The kernel settings the kubelets wrote (hack/lib.sh save_kernel_tunables); the cluster's too:
# `make down` takes it down first.
restore_kernel_tunables

left=$(pgrep -a -f "$LOCAL|containerd-shim-runc-v2 .*-address $CONTAINERD_SOCK" | grep -v "^$$ " || true)
[ -z "$left" ] || log "still running: $left"
log "local cluster is down"
exit 0

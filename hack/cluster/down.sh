#!/usr/bin/env bash
# Removes the local cluster of kubelet-ts nodes: every node (its processes, pods, mounts,
# namespaces, cgroups and state), then the host bridge, its FORWARD rule and the namespace
# directory. Safe to run twice. Keeps logs, images and build caches.
source "$(dirname "$0")/lib.sh"
need_root
set +e
for n in $(for f in "$NS_DIR"/*.mnt "$NS_DIR"/*.net "$NODES_STATE"/*; do [ -e "$f" ] && basename "${f%.*}"; done | sort -u); do
  "$KTS_ROOT/hack/cluster/node.sh" remove "$n"
done
ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1 && { log "deleting interface $CLUSTER_BRIDGE"; ip link del "$CLUSTER_BRIDGE"; }
while iptables -D FORWARD -i "$CLUSTER_BRIDGE" ! -o "$CLUSTER_BRIDGE" -j DROP 2>/dev/null; do :; done
mountpoint -q "$NS_DIR" && umount "$NS_DIR"
rmdir "$NS_DIR" /run/kts 2>/dev/null
rm -rf "$NODES_STATE" "$CLUSTER_LOCAL/pids" "$CLUSTER_KUBECONFIG"
rmdir /var/lib/kts 2>/dev/null
# Mount points node.sh made on the host for the nodes' own dirs, where they were not there before.
for d in "${NODE_DIRS[@]}"; do rmdir "/$d" 2>/dev/null; done
log "local cluster of kubelet-ts nodes is down"
exit 0

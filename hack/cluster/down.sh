#!/usr/bin/env bash
# Removes the local cluster of kubelet-ts nodes: every node (its processes, pods, mounts,
# namespaces, cgroups and state), then the host bridge, its FORWARD rule and the namespace
# directory. Safe to run twice. Keeps logs, images and build caches.
source "$(dirname "$0")/lib.sh"
# shellcheck source=systemd.sh
source "$(dirname "$0")/systemd.sh"
need_root
set +e
# (The systemd nodes' containers too, hack/cluster/systemd.sh, by their label.)
sd_nodes() { command -v podman >/dev/null && podman ps -a --filter "label=$SD_LABEL" --format '{{.Names}}'; }
for n in $( (for f in "$NS_DIR"/*.mnt "$NS_DIR"/*.net "$NODES_STATE"/*; do [ -e "$f" ] && basename "${f%.*}"; done; sd_nodes) | sort -u); do
  "$KTS_ROOT/hack/cluster/node.sh" remove "$n"
done
ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1 && { log "deleting interface $CLUSTER_BRIDGE"; ip link del "$CLUSTER_BRIDGE"; }
while iptables -D FORWARD -i "$CLUSTER_BRIDGE" ! -o "$CLUSTER_BRIDGE" -j DROP 2>/dev/null; do :; done
# A node's process still exiting can hold a namespace file or the directory a moment longer
# ("umount: /run/kts/ns: target is busy", seen once in CI, which left the *.mnt files and made
# hack/down.sh refuse): retry with a growing pause, then detach what is left lazily, so that no
# namespace file outlives the cluster.
ns_mounts() { awk -v d="$NS_DIR" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r; }
for pause in 0.5 1 2 4; do
  for m in $(ns_mounts); do umount "$m" 2>/dev/null; done
  [ -z "$(ns_mounts)" ] && break
  sleep "$pause"
done
for m in $(ns_mounts); do log "$m still busy: detaching it lazily"; umount -l "$m"; done
rm -f "$NS_DIR"/*.mnt "$NS_DIR"/*.uts "$NS_DIR"/*.net
rmdir "$NS_DIR" /run/kts 2>/dev/null
rm -rf "$NODES_STATE" "$CLUSTER_LOCAL/pids" "$CLUSTER_KUBECONFIG"
rmdir /var/lib/kts 2>/dev/null
# Mount points node.sh made on the host for the nodes' own dirs, where they were not there before.
for d in "${NODE_DIRS[@]}"; do rmdir "/$d" 2>/dev/null; done
left=$(sd_nodes)
[ -z "$left" ] || log "systemd nodes' containers still there: $left"
log "local cluster of kubelet-ts nodes is down"
exit 0

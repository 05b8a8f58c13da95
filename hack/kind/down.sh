#!/usr/bin/env bash
# Deletes the kind cluster (KIND_CLUSTER, default kind) and checks that nothing of it is left:
# containers, their /var volumes, their cgroups below /libpod_parent; the kind network goes too
# (with KIND_KEEP_NETWORK=1 it stays). Safe when there is no cluster. --all: every kind cluster
# on the machine (make down).
source "$(dirname "$0")/../lib.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
need_root
[ -x "$KIND_BIN" ] || exit 0
if [ "${1:-}" = --all ]; then
  for c in $(KIND_EXPERIMENTAL_PROVIDER=podman CONTAINERS_CONF="$KIND_CONTAINERS_CONF" "$KIND_BIN" get clusters 2>/dev/null); do
    KIND_CLUSTER=$c "$0" || exit
  done
  exit 0
fi
t0=$SECONDS
ids=$(kind_podman ps -aq --no-trunc --filter "label=io.x-k8s.kind.cluster=$KIND_CLUSTER" 2>/dev/null || true)
kdelete() { KIND_EXPERIMENTAL_PROVIDER=podman CONTAINERS_CONF="$KIND_CONTAINERS_CONF" KUBECONFIG="$KIND_KUBECONFIG" \
  "$KIND_BIN" delete cluster --name "$KIND_CLUSTER"; }
# podman 4.3's `rm -f` fails a node that its 10 s stop timeout left "stopping" ("container state
# improper"; seen with two kind clusters on the machine): the node is gone a moment later, so a
# second delete finishes the job.
if ! kdelete; then
  log "kind delete cluster failed; trying once more in 5 s"
  sleep 5
  kdelete || die "kind delete cluster failed"
fi
left=$(kind_podman ps -aq --filter "label=io.x-k8s.kind.cluster=$KIND_CLUSTER")
[ -z "$left" ] || die "containers of kind cluster $KIND_CLUSTER left: $left"
# Their cgroups (podman's cgroupfs manager, as hack/cluster/systemd.sh sd_remove_cgroups).
for id in $ids; do sd_cg=$(ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$id" 2>/dev/null || true)
  for d in $sd_cg; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$d" ] || log "cannot remove the cgroup $d"; done; done
if [ -z "$(podman ps -aq 2>/dev/null)" ]; then
  for d in /sys/fs/cgroup/*/libpod_parent; do [ -d "$d" ] || continue; rmdir "$d/conmon" 2>/dev/null || true; rmdir "$d" 2>/dev/null || true; done
fi
if [ -z "${KIND_KEEP_NETWORK:-}" ] && [ -z "$(kind_podman ps -aq --filter "network=$KIND_NETWORK")" ]; then
  kind_network_rm
fi
log "kind cluster $KIND_CLUSTER deleted in $((SECONDS - t0))s"

# Shared by hack/cluster/*.sh: a cluster of kubelet-ts nodes on this one machine, the way
# kubeadm makes one. Each node is a network namespace (its own address on the host bridge
# kts-nodes), a private mount namespace (its own /etc/kubernetes, /var/lib/kubelet, CNI dirs,
# containerd state, ...) and a UTS namespace (its hostname); it runs its own containerd and
# kubelet-ts, whose pods go below the cgroup /kts-NODE. Nothing leaves the machine.
# shellcheck shell=bash disable=SC2034
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# How many nodes `make up` makes: one control plane and NODES-1 workers. Three by default:
# the control plane is tainted, and two workers are the fewest on which pods spread, a
# Service is reached from another node, and a stopped node's pods move.
CLUSTER_NODES="${NODES:-3}"
CLUSTER_BRIDGE=kts-nodes
CLUSTER_GW=172.30.254.1
CLUSTER_PREFIX=24
POD_SUBNET="${POD_SUBNET:-10.244.0.0/16}"
SERVICE_SUBNET="${SERVICE_SUBNET:-10.97.0.0/16}"
CLUSTER_DNS=10.97.0.10
# Per-node state (the node's "disk"), the persisted namespaces, and what the host keeps.
NODES_STATE=/var/lib/kts/nodes
NS_DIR=/run/kts/ns
CLUSTER_LOCAL="$OUT/cluster"
CLUSTER_LOGS="$CLUSTER_LOCAL/logs"
CLUSTER_KUBECONFIG="$CLUSTER_LOCAL/admin.conf"
CP_NODE=kts-cp
# The dirs each node has of its own (bind-mounted from $NODES_STATE/NODE/...).
NODE_DIRS=(etc/kubernetes var/lib/kubelet var/local-path-provisioner var/lib/etcd etc/cni/net.d opt/cni/bin var/lib/cni run/flannel
  run/containerd var/lib/containerd var/log/pods var/log/containers etc/kts var/lib/csi-hostpath-data)

# node_names: kts-cp, kts-w1, kts-w2, ... for CLUSTER_NODES nodes.
node_names() {
  echo "$CP_NODE"
  local i; for ((i = 1; i < CLUSTER_NODES; i++)); do echo "kts-w$i"; done
}
# node_ip NODE: kts-cp 172.30.254.11, kts-wK 172.30.254.(11+K), and the systemd nodes
# (hack/cluster/systemd.sh) kts-sN 172.30.254.(30+N), N 1..9.
node_ip() {
  case "$1" in
    "$CP_NODE") echo 172.30.254.11 ;;
    kts-w*) echo "172.30.254.$((11 + ${1#kts-w}))" ;;
    kts-s[1-9]) echo "172.30.254.$((30 + ${1#kts-s}))" ;;
    *) die "unknown node name $1" ;;
  esac
}
node_state() { echo "$NODES_STATE/$1"; }
# The node's containerd socket as the host sees it (through the bind source).
node_sock() { echo "$NODES_STATE/$1/run/containerd/containerd.sock"; }
# Its namespaces are bind mounts in $NS_DIR (not /run/netns: `ip netns add` would bind that
# directory over itself and hide the netns mounts the host's containerd keeps there).
node_exists() { [ -e "$NS_DIR/$1.net" ] && [ -e "$NS_DIR/$1.mnt" ]; }
node_ns_opts() { echo "--mount=$NS_DIR/$1.mnt --uts=$NS_DIR/$1.uts --net=$NS_DIR/$1.net"; }
# in_node NODE CMD...: runs CMD in the node's network, mount and UTS namespaces.
in_node() {
  local n=$1; shift
  node_exists "$n" || die "node $n does not exist (hack/cluster/node.sh add $n)"
  # shellcheck disable=SC2046
  nsenter $(node_ns_opts "$n") "$@"
}
# ckubectl ARGS...: kubectl on the cluster as its admin.
ckubectl() { "$BIN/kubectl" --kubeconfig "$CLUSTER_KUBECONFIG" "$@"; }

# kubeadm in a node: its preflight runs `kubelet --version` (up.sh writes the kubelet-ts wrapper
# in $CLUSTER_LOCAL/bin), and refuses cgroup v1 (SystemVerification) unless told to skip it.
KPATH="$CLUSTER_LOCAL/bin:$BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PREFLIGHT=--ignore-preflight-errors=SystemVerification

# The kubelet's settings as kubeadm writes them into each node's /var/lib/kubelet/kubeadm-flags.env.
node_registration() {
  local n=$1
  cat <<YAML
nodeRegistration:
  name: $n
  criSocket: unix:///run/containerd/containerd.sock
  imagePullPolicy: Never
  kubeletExtraArgs:
  - {name: node-ip, value: $(node_ip "$n")}
YAML
  # A namespace node's pods go below a cgroup of its own on the host; a systemd node's in
  # kubepods(.slice) of its own cgroup namespace.
  [[ $n =~ ^kts-s[1-9]$ ]] || echo "  - {name: cgroup-root, value: /kts-$n}"
}

# kubelet-ts as the nodes run it: Node 24 (a symlink into the build cache) with flags that keep
# its heap small, on the repo's build.
KUBELET_TS_CMD=(env MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072
  "$BIN/node" --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50 "$KTS_ROOT/dist/cli/main.js")

# kubeadm (init or join) in the node, in the background; the node's kubelet is started as soon
# as kubeadm has written its config, as systemd would start it. Waits for kubeadm to finish.
kubeadm_with_kubelet() {
  local n=$1 what=$2 state; shift 2; state=$(node_state "$n")
  rm -f "$state/var/lib/kubelet/config.yaml"
  log "node $n: kubeadm $what (log: $CLUSTER_LOGS/$n-kubeadm.log)"
  "$KTS_ROOT/hack/cluster/node.sh" exec "$n" env PATH="$KPATH" kubeadm "$what" "$@" >"$CLUSTER_LOGS/$n-kubeadm.log" 2>&1 &
  local pid=$! end=$((SECONDS + 600))
  until [ -f "$state/var/lib/kubelet/config.yaml" ] && [ -f "$state/var/lib/kubelet/kubeadm-flags.env" ]; do
    kill -0 $pid 2>/dev/null || { wait $pid; die "kubeadm $what on $n exited before writing the kubelet's config (see $CLUSTER_LOGS/$n-kubeadm.log)"; }
    [ $SECONDS -lt $end ] || die "kubeadm $what on $n wrote no kubelet config in 600s (see $CLUSTER_LOGS/$n-kubeadm.log)"
    sleep 0.5
  done
  "$KTS_ROOT/hack/cluster/node.sh" kubelet "$n" restart
  wait $pid || die "kubeadm $what on $n failed (see $CLUSTER_LOGS/$n-kubeadm.log and $CLUSTER_LOGS/$n-kubelet.log)"
}


#!/usr/bin/env bash
# node.sh: one node of the local cluster (hack/cluster/lib.sh says what a node is).
#   add NODE        namespaces, address, private dirs, its containerd and images
#   remove NODE     stops everything of the node, removes all it made and its Node object
#                   (hack/cluster/up.sh adds and joins the nodes NODES asks for)
#   join NODE [kubelet-ts|upstream]
#                   adds NODE if need be and joins it to the cluster with kubeadm join, its
#                   kubelet kubelet-ts or the upstream kubelet of the pin (_output/bin/kubelet;
#                   test/bench/cluster.ts compares the two)
#   kubelet NODE start|stop|restart|status
#                   the node's kubelet, started as kubeadm's systemd drop-in would
#                   (manifests/10-kubeadm.conf), under hack/supervise.sh
#   images NODE FLAGS…  hack/build-images.sh FLAGS (--cluster, --conformance) into the node
#   exec NODE CMD…  runs CMD in the node (kubeadm, crictl, ip, ...)
# A node named kts-sN (N 1..9) is a systemd node instead (hack/cluster/systemd.sh): a podman
# container with systemd as init, containerd and kubelet-ts as its units; join, remove,
# kubelet (systemctl in the node), images and exec (podman exec) take it the same way.
source "$(dirname "$0")/lib.sh"
# shellcheck source=systemd.sh
source "$(dirname "$0")/systemd.sh"
need_root
apt_install iproute2 util-linux iptables
install_runtime
LOGS="$CLUSTER_LOGS"
PIDS="$CLUSTER_LOCAL/pids"
mkdir -p "$LOGS" "$PIDS"

# The host side, shared by all nodes: the bridge the nodes' eth0 hang on (the host is the
# gateway .1), and a FORWARD rule so that nothing from the nodes is routed off the bridge:
# CoreDNS's upstream queries and any pod's egress stop at the host.
host_network() {
  if ! ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1; then
    ip link add "$CLUSTER_BRIDGE" type bridge || die "cannot create bridge $CLUSTER_BRIDGE"
  fi
  ip -4 addr show dev "$CLUSTER_BRIDGE" | grep -qF " $CLUSTER_GW/$CLUSTER_PREFIX " \
    || ip addr add "$CLUSTER_GW/$CLUSTER_PREFIX" dev "$CLUSTER_BRIDGE"
  ip link set "$CLUSTER_BRIDGE" up
  iptables -C FORWARD -i "$CLUSTER_BRIDGE" ! -o "$CLUSTER_BRIDGE" -j DROP 2>/dev/null \
    || iptables -I FORWARD -i "$CLUSTER_BRIDGE" ! -o "$CLUSTER_BRIDGE" -j DROP
  # Namespace files are bind mounts: their directory must not propagate them elsewhere.
  mkdir -p "$NS_DIR"
  if ! mountpoint -q "$NS_DIR"; then mount --bind "$NS_DIR" "$NS_DIR" && mount --make-private "$NS_DIR"; fi
}

containerd_config() {
  # With the CNI paths an add-on installs into, netns mounts in the node's own state, and the
  # local registry's hosts.toml (written by start_containerd into the node's /etc/kts).
  runtime_toml by="hack/cluster/node.sh for node $1" root=/var/lib/containerd state=/run/containerd \
    sock=/run/containerd/containerd.sock netns_under_state=true cni_bin=/opt/cni/bin cni_conf=/etc/cni/net.d \
    certs=/etc/kts/certs.d
}

add() {
  local n=$1 ip state; ip=$(node_ip "$n"); state=$(node_state "$n")
  host_network
  if node_exists "$n"; then log "node $n exists"; else
    log "node $n: namespaces, $ip on $CLUSTER_BRIDGE"
    touch "$NS_DIR/$n.mnt" "$NS_DIR/$n.uts" "$NS_DIR/$n.net"
    unshare --net="$NS_DIR/$n.net" --mount="$NS_DIR/$n.mnt" --uts="$NS_DIR/$n.uts" --propagation private true
    in_node "$n" hostname "$n"
    # The veth's inner end goes to the namespace through a process that lives in it.
    local veth="veth-$n" holder
    nsenter --net="$NS_DIR/$n.net" sleep 30 &
    holder=$!
    sleep 0.2
    ip link add "$veth" type veth peer name eth0 netns "$holder"
    kill "$holder" 2>/dev/null
    ip link set "$veth" master "$CLUSTER_BRIDGE" up
    in_node "$n" sh -c "ip link set lo up && ip addr add $ip/$CLUSTER_PREFIX dev eth0 && ip link set eth0 up && ip route add default via $CLUSTER_GW" \
      || die "cannot configure the network of node $n"
    # The node's own directories over the host's. A new mount namespace starts as a copy of the
    # host's mounts (running pods' volumes and rootfs among them): drop those copies first. They
    # are shared, as a systemd host's mounts are: else the kubelet's rshared bind of its root
    # directory stacks on a private one, and containerd, which looks at the first, refuses
    # Bidirectional volumeMounts.
    local d
    for d in "${NODE_DIRS[@]}"; do mkdir -p "$state/$d" "/$d"; done
    printf 'nameserver %s\n' "$CLUSTER_GW" > "$state/etc/kts/resolv.conf"
    # shellcheck disable=SC2016
    in_node "$n" sh -c '
      state=$1; shift
      for d in "$@"; do umount -R -l "/$d" 2>/dev/null; mount --bind "$state/$d" "/$d" && mount --make-rshared "/$d" || exit 1; done
      mount --bind "$state/etc/kts/resolv.conf" /etc/resolv.conf' sh "$state" "${NODE_DIRS[@]}" \
      || die "cannot bind the private directories of node $n"
    # The CNI plugins an add-on delegates to, where the add-on installs its own.
    cp -f /usr/lib/cni/{bridge,host-local,loopback,portmap} "$state/opt/cni/bin/"
  fi
  # Forwarding on, as on any kubeadm node (its preflight requires it). A new namespace copies
  # the host's value at creation, which is 1 only once a bridge CNI plugin on the host set it.
  in_node "$n" sysctl -qw net.ipv4.ip_forward=1 || die "cannot turn on IPv4 forwarding in node $n"
  start_containerd "$n"
  images "$n" --cluster
}

# images NODE FLAGS...: hack/build-images.sh FLAGS into the node's containerd.
images() {
  local n=$1; shift
  if is_systemd_node "$n"; then sd_running "$n" || die "node $n is not running (hack/cluster/node.sh join $n)"; else
    node_exists "$n" || die "node $n does not exist (hack/cluster/node.sh add $n)"; fi
  log "node $n: images ($*)"
  local sock ns
  sock=$(node_sock "$n") ns=$(node_ns_opts "$n")
  # A systemd node's containerd is reached in the container's mount and PID namespaces (its
  # /proc: ctr run opens /proc/self/fd), by its path there.
  if is_systemd_node "$n"; then sock=/run/containerd/containerd.sock ns="-t $(sd_pid "$n") -m -p"; fi
  CONTAINERD_SOCK=$sock KTS_NODE_NS=$ns \
    bash "$KTS_ROOT/hack/build-images.sh" "$@" >>"$LOGS/$n-images.log" 2>&1 \
    || die "importing images into node $n failed: $(grep '^error: ' "$LOGS/$n-images.log" | tail -1 | cut -c8-) (see $LOGS/$n-images.log and $LOCAL/logs/build-images.log)"
}

start_containerd() {
  local n=$1 state conf; state=$(node_state "$n"); conf="$state/etc/kts/containerd.toml"
  # The node's images and pods are in its runtime's database: another runtime needs a new node.
  [ ! -f "$conf" ] || check_runtime "$state/etc/kts" "node $n"
  registry_hosts "$state/etc/kts/certs.d"
  containerd_config "$n" > "$conf.new"
  if running "$n-containerd" && cmp -s "$conf.new" "$conf"; then rm -f "$conf.new"; return 0; fi
  stop_bg "$n-containerd" 30
  mv "$conf.new" "$conf"
  echo "$RUNTIME" > "$state/etc/kts/runtime"
  log "node $n: containerd, $RUNTIME (log: $LOGS/$n-containerd.log)"
  # The config path under $NODES_STATE tells hack/containerd.sh this containerd is ours.
  # shellcheck disable=SC2046
  start_bg "$n-containerd" nsenter $(node_ns_opts "$n") env PATH="$CTRD_PATH:$PATH" "$CTRD" --config "$conf"
  local sock; sock=$(node_sock "$n")
  wait_for 30 "$n-containerd" "$CTR" --address "$sock" --connect-timeout 2s version
}

# The flags of kubeadm's drop-in (manifests/10-kubeadm.conf), with the env file kubeadm writes.
kubelet_args() {
  local n=$1 state flags=""; state=$(node_state "$n")
  [ -f "$state/var/lib/kubelet/kubeadm-flags.env" ] && flags=$(sed -n 's/^KUBELET_KUBEADM_ARGS="\(.*\)"$/\1/p' "$state/var/lib/kubelet/kubeadm-flags.env")
  echo "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml $flags"
}

# Which kubelet the node runs: kubelet-ts, or upstream (written by join).
kubelet_kind() { cat "$(node_state "$1")/etc/kts/kubelet" 2>/dev/null || echo kubelet-ts; }

kubelet() {
  local n=$1 state kind; state=$(node_state "$n"); kind=$(kubelet_kind "$n")
  case "$2" in
    start)
      running "$n-kubelet" && { log "node $n: $kind already running"; return 0; }
      [ -f "$state/var/lib/kubelet/config.yaml" ] || die "node $n has no /var/lib/kubelet/config.yaml yet (kubeadm init or join writes it)"
      local cmd
      if [ "$kind" = upstream ]; then
        # (Not built by `make up`: only the upstream kubelet's users build it.)
        [ -x "$BIN/kubelet" ] || "$KTS_ROOT/hack/build-control-plane.sh" kubelet || die "cannot build the upstream kubelet (hack/build-control-plane.sh kubelet)"
        # It refuses a cgroup root that does not exist (kubelet-ts makes its own).
        local d; for d in /sys/fs/cgroup/*/; do [ -f "$d/cgroup.procs" ] && mkdir -p "${d%/}/kts-$n"; done
        cmd=("$BIN/kubelet")
      else
        [ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
        cmd=("${KUBELET_TS_CMD[@]}")
      fi
      save_kernel_tunables
      log "node $n: $kind (log: $LOGS/$n-kubelet.log)"
      # shellcheck disable=SC2046
      KTS_SUPERVISE_CHILD_PID_FILE="$PIDS/$n-kubelet.child.pid" start_bg "$n-kubelet" \
        nsenter $(node_ns_opts "$n") "$KTS_ROOT/hack/supervise.sh" "${cmd[@]}" $(kubelet_args "$n") --v 2
      ;;
    stop) stop_bg "$n-kubelet" 25; rm -f "$PIDS/$n-kubelet.child.pid" ;;
    restart) kubelet "$n" stop; kubelet "$n" start ;;
    status) running "$n-kubelet" && echo "node $n: $kind running" || { echo "node $n: $kind stopped"; return 1; } ;;
    *) die "usage: $0 kubelet NODE start|stop|restart|status" ;;
  esac
}

# join NODE [KIND]: kubeadm join with a new bootstrap token, as an operator joins a worker.
join() {
  local n=$1 kind=${2:-} state; state=$(node_state "$n")
  [ "$n" != "$CP_NODE" ] || die "$CP_NODE is the control plane (hack/cluster/up.sh runs kubeadm init there)"
  [ -f "$CLUSTER_KUBECONFIG" ] || die "no cluster to join: make up first"
  case "$kind" in '' | kubelet-ts | upstream) ;; *) die "unknown kubelet $kind: kubelet-ts or upstream" ;; esac
  if [ -f "$state/etc/kubernetes/kubelet.conf" ]; then
    [ -z "$kind" ] || [ "$kind" = "$(kubelet_kind "$n")" ] || die "node $n was joined with $(kubelet_kind "$n"): remove it first"
    kubelet "$n" start
    return
  fi
  node_exists "$n" || add "$n"
  echo "${kind:-kubelet-ts}" > "$state/etc/kts/kubelet"
  write_join_config "$n"
  kubeadm_with_kubelet "$n" join --config /etc/kts/kubeadm.yaml "$PREFLIGHT"
}

# write_join_config NODE: the node's JoinConfiguration, /etc/kts/kubeadm.yaml in the node, with
# a new bootstrap token, as an operator joins a worker.
write_join_config() {
  local n=$1 state join_cmd token hash; state=$(node_state "$n")
  join_cmd=$(in_node "$CP_NODE" kubeadm token create --print-join-command --kubeconfig /etc/kubernetes/admin.conf) \
    || die "kubeadm token create failed on $CP_NODE"
  token=$(awk '{for (i = 1; i < NF; i++) if ($i == "--token") print $(i + 1)}' <<<"$join_cmd")
  hash=$(awk '{for (i = 1; i < NF; i++) if ($i == "--discovery-token-ca-cert-hash") print $(i + 1)}' <<<"$join_cmd")
  cat > "$state/etc/kts/kubeadm.yaml" <<YAML
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken: {apiServerEndpoint: "$(node_ip "$CP_NODE"):6443", token: $token, caCertHashes: ["$hash"]}
$(node_registration "$n")
YAML
}

# The node's processes: its kubelet, containerd, the shims containerd started (they share the
# node's mount namespace) and the containers below its cgroup root.
remove() {
  local n=$1 state mnt pid; state=$(node_state "$n")
  # A worker leaves the cluster as an operator removes one: its Node object goes too.
  if [ "$n" != "$CP_NODE" ] && [ -f "$CLUSTER_KUBECONFIG" ] && [ -e "$NS_DIR/$CP_NODE.mnt" ]; then
    ckubectl delete node "$n" --wait=false --request-timeout=10s >/dev/null 2>&1 || true
  fi
  kubelet "$n" stop
  if [ -e "$NS_DIR/$n.mnt" ]; then
    mnt=$(stat -L -c %i "$NS_DIR/$n.mnt" 2>/dev/null || true)
    stop_bg "$n-containerd" 30
    for pid in $(pgrep -f '^/[^ ]*/containerd-shim-runc-v2 ' || true); do
      [ "$(stat -L -c %i "/proc/$pid/ns/mnt" 2>/dev/null)" = "$mnt" ] && { kill -KILL "$pid" 2>/dev/null || true; }
    done
  fi
  local ctl procs
  for ctl in /sys/fs/cgroup/*/"kts-$n"; do
    [ -d "$ctl" ] || continue
    # A process may exit between the read and the kill (set -e would stop the removal there).
    for procs in $(find "$ctl" -name cgroup.procs); do xargs -r kill -KILL < "$procs" 2>/dev/null || true; done
  done
  sleep 0.5
  for ctl in /sys/fs/cgroup/*/"kts-$n"; do [ -d "$ctl" ] && { find "$ctl" -depth -type d -exec rmdir {} + 2>/dev/null || true; }; done
  if [ -e "$NS_DIR/$n.mnt" ]; then
    # Mounts inside the node (pod volumes, netns files, rootfs) go with its namespace.
    umount "$NS_DIR/$n.mnt" 2>/dev/null || umount -l "$NS_DIR/$n.mnt"
    umount "$NS_DIR/$n.uts" 2>/dev/null || umount -l "$NS_DIR/$n.uts"
  fi
  if [ -e "$NS_DIR/$n.net" ]; then umount "$NS_DIR/$n.net" 2>/dev/null || umount -l "$NS_DIR/$n.net"; fi
  rm -f "$NS_DIR/$n.mnt" "$NS_DIR/$n.uts" "$NS_DIR/$n.net"
  ip link del "veth-$n" 2>/dev/null || true
  [ -d "$state" ] && rm -rf --one-file-system "$state"
  log "node $n removed"
}

# A systemd node's commands (hack/cluster/systemd.sh).
if [ $# -ge 2 ] && is_systemd_node "$2"; then
  case "$1" in
    add) [ $# = 2 ] || die "usage: $0 add NODE"; sd_add "$2" ;;
    remove) [ $# = 2 ] || die "usage: $0 remove NODE"; sd_remove "$2" ;;
    join) [ $# = 2 ] || [ "${3:-}" = kubelet-ts ] || die "usage: $0 join $2 (a systemd node runs kubelet-ts)"; sd_join "$2" ;;
    kubelet) [ $# = 3 ] || die "usage: $0 kubelet NODE start|stop|restart|status"; sd_kubelet "$2" "$3" ;;
    images) [ $# -ge 3 ] || die "usage: $0 images NODE --cluster|--conformance..."; n=$2; shift 2; images "$n" "$@" ;;
    exec) [ $# -ge 3 ] || die "usage: $0 exec NODE CMD..."; n=$2; shift 2; sd_running "$n" || die "node $n is not running"; sd_exec "$n" "$@" ;;
    *) die "usage: $0 add|join|remove|kubelet|images|exec NODE ..." ;;
  esac
  exit
fi

case "${1:-}" in
  add) [ $# = 2 ] || die "usage: $0 add NODE"; add "$2" ;;
  remove) [ $# = 2 ] || die "usage: $0 remove NODE"; remove "$2" ;;
  join) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 join NODE [kubelet-ts|upstream]"; join "$2" "${3:-}" ;;
  kubelet) [ $# = 3 ] || die "usage: $0 kubelet NODE start|stop|restart|status"; kubelet "$2" "$3" ;;
  images) [ $# -ge 3 ] || die "usage: $0 images NODE --cluster|--conformance..."; n=$2; shift 2; images "$n" "$@" ;;
  exec) [ $# -ge 3 ] || die "usage: $0 exec NODE CMD..."; n=$2; shift 2; in_node "$n" "$@" ;;
  *) die "usage: $0 add|join|remove|kubelet|images|exec NODE ..." ;;
esac

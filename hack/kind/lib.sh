# kind clusters on this machine (issue 43, docs/kind.md): kind itself, the podman it drives and
# the node image. Sourced after hack/lib.sh; defines things, does nothing.
# shellcheck shell=bash disable=SC2034  # (its variables are used by the scripts that source it)

KIND_DIR="$KTS_CACHE/kind-$KIND_VERSION"
KIND_BIN="$KIND_DIR/kind"
# kind's module in the Go module cache: its base image's files (images/base/files) are read from
# there at build time, never copied into the repo.
kind_module_dir() {
  (cd "$KTS_ROOT/hack/tools/kind" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kind)
}

# kind_install: builds kind at KIND_VERSION from the Go module proxy into the cache (once, ~40 s).
kind_install() {
  [ -x "$KIND_BIN" ] && return 0
  command -v go >/dev/null || die "go is not installed (needed to build kind $KIND_VERSION)"
  mkdir -p "$KIND_DIR" "$LOGS"
  build_lock "$KIND_DIR.lock" "kind"
  [ -x "$KIND_BIN" ] && return 0
  log "building kind $KIND_VERSION (log: $LOGS/build-kind.log)"
  (cd "$KTS_ROOT/hack/tools/kind" && nice -n 19 env GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" \
    -o "$KIND_BIN.tmp" sigs.k8s.io/kind) >"$LOGS/build-kind.log" 2>&1 || die "kind build failed (see $LOGS/build-kind.log)"
  mv "$KIND_BIN.tmp" "$KIND_BIN"
}

# The podman kind drives (KIND_EXPERIMENTAL_PROVIDER=podman: Debian's dockerd 20.10 refuses
# every privileged container here) reads KIND_CONTAINERS_CONF instead of /etc/containers:
#  - default_ulimits: podman's default nofile (1048576) is above this VM's hard limit (20000) and
#    kind passes no --ulimit; those of hack/cluster/systemd.sh's nodes start.
#  - network_config_dir: kind's network ("kind", a CNI bridge with the dnsname plugin, so that
#    the nodes find each other by name) is written there, not in /etc/cni/net.d, where the host's
#    containerd (the local stack's) would take it for its pods' network.
#  - the runtime is hack/kind/runc: runc in a mount namespace of its own without the cgroup
#    hierarchies mounted outside /sys/fs/cgroup (test/chaos's /run/kts-netcls), which runc would
#    otherwise mount into every privileged container and fail ("invalid argument").
KIND_CONTAINERS_CONF="$KIND_DIR/containers.conf"
KIND_CNI_DIR=/etc/kts-kind/cni/net.d
# The kind network's subnet: beside the cluster's 172.30.254.0/24 and kts0's 172.30.255.10,
# overlapping nothing on the machine (../shared/ENVIRONMENT.md).
KIND_SUBNET="${KIND_SUBNET:-172.30.252.0/24}"
KIND_NETWORK=kind
# The clusters' service subnet (manifests/kind/*.yaml networking.serviceSubnet).
KIND_SERVICE_SUBNET=10.96.0.0/16
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-localhost/kts-kind-node:$KUBE_VERSION}"
KIND_NODE_IMAGE_UPSTREAM="${KIND_NODE_IMAGE_UPSTREAM:-localhost/kts-kind-node-upstream:$KUBE_VERSION}"
# kind writes the cluster's kubeconfig here (its KUBECONFIG), not into ~/.kube/config.
KIND_KUBECONFIG="${KIND_KUBECONFIG:-$OUT/kind/kubeconfig}"
KIND_CLUSTER="${KIND_CLUSTER:-kind}"

kind_containers_conf() {
  mkdir -p "$KIND_DIR" "$KIND_CNI_DIR"
  cat > "$KIND_CONTAINERS_CONF.tmp" <<CONF
# Written by hack/kind/lib.sh for the podman that kind drives (CONTAINERS_CONF); edits are overwritten.
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=8192:8192"]

[network]
network_backend = "cni"
network_config_dir = "$KIND_CNI_DIR"
cni_plugin_dirs = ["/usr/lib/cni"]

[engine]
runtime = "runc"

[engine.runtimes]
runc = ["$KTS_ROOT/hack/kind/runc"]
CONF
  mv "$KIND_CONTAINERS_CONF.tmp" "$KIND_CONTAINERS_CONF"
}

# kind_podman ARGS...: podman as kind runs it.
kind_podman() { CONTAINERS_CONF="$KIND_CONTAINERS_CONF" podman "$@"; }

# kind_network: the network kind uses, made here with our subnet (kind takes an existing one as
# it is; left to itself it would make one with an IPv6 ULA subnet and podman's next free IPv4 /24).
kind_network() {
  if ! kind_podman network exists "$KIND_NETWORK" 2>/dev/null; then
    log "podman network create $KIND_NETWORK ($KIND_SUBNET, in $KIND_CNI_DIR)"
    kind_podman network create -d bridge --subnet "$KIND_SUBNET" "$KIND_NETWORK" >/dev/null \
      || die "podman network create $KIND_NETWORK failed"
  fi
  kind_service_reject add
}

# kind_service_reject add|del: packets from the kind nodes to the service subnet that no node
# translated (a Service port that is gone) are refused here, as on a real network where nothing
# answers at a ClusterIP. This machine's default route answers any outbound TCP port 80 itself,
# so upstream's "Services should serve endpoints on same port and different protocols" saw its
# removed TCP port still answering (2026-12-03). The rule must come first in FORWARD: the CNI
# firewall plugin inserts its jump (which accepts the network's traffic) at the top when the
# network's first container starts, so `add` puts it first again whenever it runs, and
# hack/kind/up.sh runs it again once the nodes run (a run on 2026-12-04 had the jump above it).
kind_service_reject() {
  local br rule; br=$(kind_podman network inspect -f '{{.NetworkInterface}}' "$KIND_NETWORK" 2>/dev/null || true)
  [ -n "$br" ] || return 0
  rule=(-i "$br" -d "$KIND_SERVICE_SUBNET" -j REJECT)
  while iptables -D FORWARD "${rule[@]}" 2>/dev/null; do :; done
  [ "$1" = del ] || iptables -I FORWARD 1 "${rule[@]}" || die "cannot add the service subnet's REJECT rule on $br"
}

# kind_setup: what `kind` needs before it runs here.
kind_setup() {
  need_root
  kind_install
  command -v podman >/dev/null || apt_install podman
  # Without it podman's CNI networks have no DNS and kubeadm join cannot find <cluster>-control-plane.
  apt_install golang-github-containernetworking-plugin-dnsname
  rm -f /etc/cni/net.d/87-podman-bridge.conflist   # (hack/cluster/systemd.sh sd_install_podman says why)
  kind_containers_conf
  kind_network
}

# kind_network_rm: removes the kind network and what podman 4.3 leaves of it: the dnsname plugin's
# INPUT rule for DNS on its bridge and host-local's directory of reserved addresses.
kind_network_rm() {
  kind_podman network exists "$KIND_NETWORK" 2>/dev/null || return 0
  local br; br=$(kind_podman network inspect -f '{{.NetworkInterface}}' "$KIND_NETWORK" 2>/dev/null || true)
  kind_service_reject del
  kind_podman network rm "$KIND_NETWORK" >/dev/null || { log "cannot remove the podman network $KIND_NETWORK"; return 0; }
  if [ -n "$br" ]; then
    while iptables -D INPUT -i "$br" -p udp -m udp --dport 53 -j ACCEPT 2>/dev/null; do :; done
  fi
  rm -rf "/var/lib/cni/networks/$KIND_NETWORK"
}

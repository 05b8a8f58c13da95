# Shared by the hack/ scripts: paths, logging, and failing with one clear line.
# shellcheck shell=bash disable=SC2034  # (its variables are used by the scripts that source it)
set -euo pipefail

KTS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=versions.env
source "$KTS_ROOT/hack/versions.env"
# Heavy builds live outside the repo so a fresh clone (and CI) reuses them.
KTS_CACHE="${KTS_CACHE:-$HOME/.cache/kubelet-ts}"
OUT="$KTS_ROOT/_output"
BIN="$OUT/bin"
LOCAL="$OUT/local"
LOGS="$LOCAL/logs"
PIDS="$LOCAL/pids"
# The local kubelet's root dir is a filesystem of its own, a sparse ext4 image on a loop device
# (hack/kubelet.sh), as on a node whose /var/lib/kubelet has its own disk: test/chaos fills it
# to 100% without touching the host's. KUBELET_ROOT_SIZE sets its size.
KUBELET_ROOT=/var/lib/kubelet
KUBELET_ROOT_IMG="$LOCAL/kubelet-root.img"
KUBELET_ROOT_SIZE=${KUBELET_ROOT_SIZE:-10G}
# The control plane and the node live on an address of our own interface kts0 (dummy,
# or a portless bridge on kernels without the dummy driver, like this VM's):
# Kubernetes refuses loopback for the apiserver's endpoint and the node's InternalIP.
KTS_IFACE=kts0
KTS_IP="${KTS_IP:-172.30.255.10}"
CLUSTER_CIDR="${CLUSTER_CIDR:-10.88.0.0/16}"
SERVICE_CIDR="${SERVICE_CIDR:-10.96.0.0/16}"
CONTAINERD_SOCK="${CONTAINERD_SOCK:-/run/containerd/containerd.sock}"
# The registry every node pulls from (hack/registry.sh), and the registries whose images it
# holds, each under a path of that registry's name (registry_hosts below). Port 5001, as kind's
# local registry: upstream's image pull tests run a registry pod on hostPort 5000.
REGISTRY="$KTS_IP:5001"
REGISTRY_MIRRORS=(docker.io registry.k8s.io)
# Certificates the controller-manager signs (the kubelets' client certificates) live this
# long, so that client certificate rotation (at 70-90% of the lifetime) happens within
# minutes on the local stack, and the tests see it. A production cluster uses a year.
SIGNING_DURATION="${SIGNING_DURATION:-3m}"
NODE_NAME="${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}"
PKI="$LOCAL/pki"
# CNI names agreed with the kubelet's conflist (it writes it from the Node's podCIDR).
CNI_CONFLIST=/etc/cni/net.d/10-kubelet-ts.conflist
CNI_NETWORK=kubelet-ts
CNI_BRIDGE=kts-br0
# Daemons we start inherit this PATH: CNI plugins exec iptables from /usr/sbin.
export PATH="$BIN:$PATH:/usr/local/sbin:/usr/sbin:/sbin"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (containerd, CNI and cgroups need it)"; }

# The kernel settings every kubelet writes at start (upstream's setupKernelTunables,
# src/node/kernel-tunables.ts). The kubelets this repo starts save the host's values first
# (save_kernel_tunables [FILE]) and their `down` puts them back: the machine stays as it was.
KERNEL_TUNABLES=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
save_kernel_tunables() {
  local f=${1:-$LOCAL/kernel-tunables.saved}
  mkdir -p "$(dirname "$f")"
  [ -f "$f" ] || sysctl -e "${KERNEL_TUNABLES[@]}" > "$f"
}
restore_kernel_tunables() {
  local f=${1:-$LOCAL/kernel-tunables.saved}
  [ -f "$f" ] || return 0
  sysctl -q -p "$f" >/dev/null 2>&1 || log "cannot restore the sysctls in $f"
  rm -f "$f"
}

# build_lock FILE WHAT: one build of WHAT at a time. `make e2e` builds the cluster's add-ons
# and the conformance tests in the background while test files that need them may start
# their own build: the second waits (a line a minute) and then finds what the first built.
# The lock is fd 9's: a second build_lock in the same script releases the first; exiting
# releases it. Callers take it only when something is missing, so that a warm caller never waits.
build_lock() {
  exec 9>"$1"
  flock -n 9 && return 0
  log "waiting for the $2 build already running"
  until flock -w 60 9; do log "  still waiting for the $2 build..."; done
}

# have_bins DIR BIN...: DIR holds every BIN, executable (a build cache entry is complete).
have_bins() { local d=$1 b; shift; for b in "$@"; do [ -x "$d/$b" ] || return 1; done; }

# lower_priority: this shell at KTS_NICE (when set), unless it already runs lower. renice -n
# sets the niceness (util-linux), so a build asked for at 10 inside make test's background
# build (nice 19) would otherwise leave 19 and take half the cores from the stack's own builds.
lower_priority() {
  [ -n "${KTS_NICE:-}" ] && [ "$(nice)" -lt "$KTS_NICE" ] || return 0
  renice -n "$KTS_NICE" -p "$BASHPID" >/dev/null
}

# cached_build NAME VERSION DIR WORKDIR FN BIN...: builds the cache entry DIR (keyed by VERSION)
# that its caller found missing (have_bins; build_lock where other scripts build it too): runs
# the function FN OUTDIR VERSION in WORKDIR in the background, at KTS_NICE, with its output in
# $LOGS/build-NAME.log and a progress line every 30 s, and moves OUTDIR to DIR only when every
# BIN is in it, so that an interrupted build leaves no entry that looks complete.
cached_build() {
  local name=$1 version=$2 dir=$3 workdir=$4 fn=$5; shift 5
  local b logf="$LOGS/build-$name.log" start=$SECONDS n=0
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  log "building $* ($name $version${KTS_NICE:+, nice $KTS_NICE}${KTS_GO_P:+, -p $KTS_GO_P}; log: $logf)"
  (cd "$workdir" && lower_priority && "$fn" "$dir.tmp" "$version") >"$logf" 2>&1 &
  local pid=$!
  # Polled every second so that a quick build does not wait 30 s for its first report.
  while kill -0 $pid 2>/dev/null; do
    sleep 1; n=$((n + 1))
    if [ $((n % 30)) -eq 0 ] && kill -0 $pid 2>/dev/null; then
      log "  still building $name... ($(find "$dir.tmp" -type f | wc -l)/$# linked, ${n}s)"
    fi
  done
  wait $pid || die "$name $version build failed (see $logf: $(grep -v '^#' "$logf" | tail -1))"
  for b in "$@"; do [ -x "$dir.tmp/$b" ] || die "$name build made no $b (see $logf)"; done
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
  log "built $name $version in $((SECONDS - start))s"
}

# apt_install PKG...: installs the Debian packages that are missing, updating the index once.
apt_install() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  if [ ! -f /var/lib/apt/periodic/kts-updated ]; then
    apt-get update -q >/dev/null || die "apt-get update failed"
    mkdir -p /var/lib/apt/periodic && touch /var/lib/apt/periodic/kts-updated
  fi
  # (The lock timeout: make test's background build installs packages while the tests do.)
  DEBIAN_FRONTEND=noninteractive apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# port_free PORT NAME: stops early with a clear reason when something else holds a port we need.
port_free() {
  if ss -Htln "sport = :$1" | grep -q .; then
    die "port $1 ($2) is already in use: $(ss -Htlnp "sport = :$1" | awk '{print $NF}' | head -1)"
  fi
}

# start_bg NAME CMD...: starts a daemon with its log under $LOGS and its pid under $PIDS.
start_bg() {
  local name=$1; shift
  mkdir -p "$LOGS" "$PIDS"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
}

# alive PID: the process exists and is not a zombie. (kill -0 succeeds on zombies, and
# our daemons' parent, this host's init, may reap them only seconds after they exit.)
alive() { local st; st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "${st%% *}" != Z ]; }

running() { [ -f "$PIDS/$1.pid" ] && alive "$(cat "$PIDS/$1.pid")"; }

# live_pids NAME: pids of live (non-zombie) processes whose name is exactly NAME.
live_pids() { local p; for p in $(pgrep -x "$1" || true); do alive "$p" && echo "$p"; done; return 0; }
# foreign_containerd_pids: live containerds of this host's mount namespace other than those with
# a config of ours under $LOCAL (the bench's second containerd for the upstream kubelet has its
# own socket) or under /var/lib/kts/nodes (the cluster's namespace nodes, hack/cluster/node.sh).
# One in another mount namespace (a systemd node's, hack/cluster/systemd.sh, in its container)
# has its own /run/containerd and is nobody's business here.
foreign_containerd_pids() {
  local p; for p in $(live_pids containerd); do
    in_host_mount_ns "$p" || continue
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qE -- "--config ($LOCAL|/var/lib/kts/nodes)/" || echo "$p"
  done; return 0
}
# in_host_mount_ns PID: the process shares this shell's mount namespace (not a cluster node's).
in_host_mount_ns() { [ "$(stat -L -c %i "/proc/$1/ns/mnt" 2>/dev/null)" = "$(stat -L -c %i /proc/self/ns/mnt)" ]; }

# stop_bg NAME [SECONDS]: TERMs the daemon's process group (start_bg made it a session
# leader), KILLs it after SECONDS (default 15), and forgets the pid. Quiet when not running.
stop_bg() {
  local name=$1 secs=${2:-15} pid end
  [ -f "$PIDS/$name.pid" ] || return 0
  pid=$(cat "$PIDS/$name.pid")
  if alive "$pid"; then
    log "stopping $name (pid $pid)"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    end=$((SECONDS + secs))
    while alive "$pid" && [ $SECONDS -lt $end ]; do sleep 0.2; done
    if alive "$pid"; then
      log "$name did not stop within ${secs}s: killing it"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$PIDS/$name.pid"
}

# host_address: our interface kts0 with $KTS_IP, where the apiserver and the registry listen.
# Some kernels (this VM's) have no dummy driver: a bridge without ports holds a local
# address just as well, and the bridge driver is there since CNI's bridge plugin needs it.
host_address() {
  if ! ip link show "$KTS_IFACE" >/dev/null 2>&1; then
    ip link add "$KTS_IFACE" type dummy 2>/dev/null || ip link add "$KTS_IFACE" type bridge \
      || die "cannot create interface $KTS_IFACE (neither dummy nor bridge)"
  fi
  ip -4 addr show dev "$KTS_IFACE" | grep -qF " $KTS_IP/32 " || ip addr add "$KTS_IP/32" dev "$KTS_IFACE"
  ip link set "$KTS_IFACE" up
}

# registry_hosts DIR: containerd's hosts.toml under DIR (a CRI registry config_path) for each
# of REGISTRY_MIRRORS: a pull tries the local registry first (override_path: the name's path
# under /v2/REGISTRY-NAME/), then the registry itself (unreachable here: a deliberate
# :nonexistent tag still fails as it would). containerd reads them at each pull.
registry_hosts() {
  local dir=$1 r server
  for r in "${REGISTRY_MIRRORS[@]}"; do
    case "$r" in docker.io) server=https://registry-1.docker.io ;; *) server="https://$r" ;; esac
    mkdir -p "$dir/$r"
    printf '# Written by hack/lib.sh registry_hosts; edits are overwritten.\nserver = "%s"\n\n[host."http://%s/v2/%s"]\n  capabilities = ["pull", "resolve"]\n  override_path = true\n' \
      "$server" "$REGISTRY" "$r" > "$dir/$r/hosts.toml"
  done
}

# port_holder PORT: prints the pid listening on a TCP port (empty when free).
port_holder() { ss -Htlnp "sport = :$1" | grep -o "pid=[0-9]*" | head -1 | cut -d= -f2 || true; }

# pause_image: the sandbox image name the pinned kubeadm expects (e.g. registry.k8s.io/pause:3.10.1).
pause_image() {
  [ -x "$BIN/kubeadm" ] || die "$BIN/kubeadm is missing: run hack/build-control-plane.sh first"
  local img
  img=$("$BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION" 2>/dev/null | grep '/pause:') \
    || die "kubeadm config images list printed no pause image"
  echo "$img"
}

# The node's container runtime (issue #20), chosen by RUNTIME when the stack comes up:
#   containerd2 (default)  containerd 2.2 and runc 1.3, built by hack/build-runtime.sh
#                          (hack/containerd2.sh): what a v1.36 node runs
#   containerd1            Debian's containerd 1.6 and runc 1.1 (v1.35 was the last release
#                          to support containerd 1.x), kept so that both stay tested
# use_runtime NAME sets, for that runtime: CTRD, CTR, RUNC (its binaries), CTRD_PATH (put in
# front of the daemon's PATH: a task that ctr starts names no shim, so containerd looks the
# shim up there, and the shim runc) and the host stack's CTRD_ROOT and CTRD_STATE. Both keep
# the standard socket; containerd 1.6 keeps its own root and state on this host (it cannot
# open a database that 2.x has written), so both image stores stay warm and switching needs
# only `make down`. A cluster node's directories are its own, so its roots stay standard.
use_runtime() {
  case "$1" in
    containerd2)
      CTRD=$CONTAINERD2_BIN/containerd CTR=$CONTAINERD2_BIN/ctr RUNC=$RUNC2_BIN/runc CTRD_PATH=$CONTAINERD2_PATH
      CTRD_ROOT=/var/lib/containerd CTRD_STATE=/run/containerd ;;
    containerd1)
      CTRD=/usr/bin/containerd CTR=/usr/bin/ctr RUNC=/usr/sbin/runc CTRD_PATH=/usr/bin
      CTRD_ROOT=/var/lib/containerd1 CTRD_STATE=/run/containerd1 ;;
    *) die "RUNTIME=$1: the runtimes are containerd2 (the default) and containerd1" ;;
  esac
  RUNTIME=$1
}
# runtime_toml KEY=VALUE...: the runtime's config, with containerd_toml's keys.
runtime_toml() {
  if [ "$RUNTIME" = containerd2 ]; then containerd2_toml "$@"; else containerd_toml "$@"; fi
}
# install_runtime: what the runtime needs on this host (the build is cached: a no-op when done).
install_runtime() {
  apt_install containerd runc containernetworking-plugins iptables
  [ "$RUNTIME" != containerd2 ] || "$KTS_ROOT/hack/build-runtime.sh" || die "cannot build containerd 2 (hack/build-runtime.sh)"
}
# A file "runtime" beside each containerd's config names the runtime it runs, so that the
# scripts that stop or reuse it (hack/down.sh, hack/cluster/node.sh) use its binaries, and
# bringing up the other one over it fails with what to do.
# recorded_runtime DIR: the runtime DIR records, else RUNTIME.
recorded_runtime() { cat "$1/runtime" 2>/dev/null || echo "$RUNTIME"; }
# check_runtime DIR WHAT: fails when DIR records another runtime than RUNTIME.
check_runtime() {
  local was; was=$(recorded_runtime "$1")
  [ "$was" = "$RUNTIME" ] || die "$2 runs $was, not RUNTIME=$RUNTIME: run make down first"
}

# containerd_toml KEY=VALUE...: the containerd 1.6 config of every node this repo runs (the local
# stack's, the upstream kubelet's beside it, each cluster node's), from one template:
#   by=WHO root=DIR state=DIR sock=PATH cni_bin=DIR cni_conf=DIR   where things are
#   runc_root=DIR   runc's state (default /run/containerd/runc)   certs=DIR   hosts.toml dir
#   netns_under_state=true   netns mounts under state (not /run/netns, which another has)
# restrict_oom_score_adj: a container on this host lacks CAP_SYS_RESOURCE, so runc must not
#   lower oom_score_adj (else every RunPodSandbox fails with "can't get final child's PID").
# SystemdCgroup = false: cgroup v1 and no systemd here, so the cgroupfs driver.
# test-handler: a second handler name for runc; RuntimeClass objects need a handler the node
#   has, and the upstream conformance tests expect this one (kind configures it too).
containerd_toml() {
  local by root state sock cni_bin cni_conf runc_root="" certs="" netns_under_state=false
  local "$@"
  local runtime
  cat <<TOML
# Written by $by; edits are overwritten.
version = 2
root = "$root"
state = "$state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$(pause_image)"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = $netns_under_state
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
TOML
  for runtime in runc test-handler; do
    cat <<TOML
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$runtime]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.$runtime.options]
        SystemdCgroup = false
${runc_root:+        Root = \"$runc_root\"}
TOML
  done
  cat <<TOML
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$cni_conf"
${certs:+  [plugins.\"io.containerd.grpc.v1.cri\".registry]
    config_path = \"$certs\"}
TOML
}

# ctr_k8s ARGS...: ctr on our containerd, in the namespace the CRI plugin uses. With
# KTS_NODE_NS (nsenter's namespace options), in a cluster node's namespaces: unpacking an
# image mounts its snapshots, which must happen where that containerd's state is.
ctr_k8s() {
  # shellcheck disable=SC2086
  ${KTS_NODE_NS:+nsenter $KTS_NODE_NS} "$CTR" --address "$CONTAINERD_SOCK" -n k8s.io "$@"
}

# wait_for SECONDS WHAT CMD...: polls CMD until it succeeds; on timeout names WHAT and its log.
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || die "$what did not come up within ${secs}s (see $LOGS/${what%% *}.log)"
    sleep 0.5
  done
}

# write_kubeconfig FILE USER CREDENTIAL-LINE...: a kubeconfig for the apiserver on $KTS_IP
# with the cluster CA embedded; the file is replaced only when its content changes.
write_kubeconfig() {
  local file=$1 user=$2; shift 2
  {
    printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: kubelet-ts\n  cluster:\n'
    printf '    server: https://%s:6443\n    certificate-authority-data: %s\n' "$KTS_IP" "$(base64 -w0 < "$PKI/ca.crt")"
    printf 'users:\n- name: %s\n  user:\n' "$user"
    printf '    %s\n' "$@"
    printf 'contexts:\n- name: %s@kubelet-ts\n  context:\n    cluster: kubelet-ts\n    user: %s\n' "$user" "$user"
    printf 'current-context: %s@kubelet-ts\n' "$user"
  } > "$file.tmp"
  chmod 600 "$file.tmp"
  if cmp -s "$file.tmp" "$file"; then rm -f "$file.tmp"; else mv "$file.tmp" "$file"; fi
}

# watch_failed_pulls KUBECONFIG FILE: no registry is reachable, so a pull of an image we did
# not build fails at once; name each one loudly while a test run goes on (the test itself
# then times out waiting for its pod), and append it to FILE. Runs in the background in its
# own process group and watches again whenever the apiserver ends the watch (after 30-60
# minutes); prints its group's ID: `kill -TERM -- -ID` stops the whole pipeline.
watch_failed_pulls() {
  export -f log
  KUBECONFIG_WATCH=$1 PULLS_FILE=$2 setsid bash -c 'while :; do
      "$0" --kubeconfig "$KUBECONFIG_WATCH" get events -A --watch-only --field-selector reason=Failed \
        -o jsonpath="{.message}{\"\n\"}" 2>/dev/null; sleep 1; done \
    | grep --line-buffered -i pull \
    | while read -r line; do log "MISSING IMAGE: $line"; echo "$line" >> "$PULLS_FILE"; done' "$BIN/kubectl" >/dev/null &
  echo $!
}

# shellcheck source=containerd2.sh
source "$KTS_ROOT/hack/containerd2.sh"
# RUNTIME unset: the one the local stack runs (hack/down.sh forgets it), else containerd2.
use_runtime "${RUNTIME:-$(cat "$LOCAL/containerd/runtime" 2>/dev/null || echo containerd2)}"

#!/usr/bin/env bash
# runtime-floor.sh start|stop|status: a third containerd of the stack's build, with no kubelet, for
# test/bench/floor.ts (issue #47: the runtime's own floor in `make bench`): the bench's pods are
# created on it straight through CRI, so that each kubelet's pod start can be read as a ratio
# of what the same burst costs the runtime alone.
#
# Everything is its own (hack/containerd-instance.sh, as hack/upstream-kubelet.sh's containerd): root $CTRD_ROOT-floor, state,
# socket and runc root under /run/containerd-floor (netns mounts there too), a CNI conf dir with
# a bridge kts-br2 on FLOOR_SUBNET (10.87.0.0/24: neither the cluster's 10.88.0.0/16 nor the
# service range), host-local data in /var/lib/cni-floor, the pods' cgroups under /floor, their
# logs in /var/log/pods-floor. The images are copied from the stack's containerd (no registry
# is reachable). `stop` removes every sandbox, container, netns, mount, cgroup, the bridge and
# its NAT rules, and all that state: the host is as before `start`.
# Log: _output/local/logs/containerd-floor.log.
source "$(dirname "$0")/lib.sh"
need_root

CI_NAME=containerd-floor
CI_DIR="$LOCAL/containerd-floor"
CI_ROOT=$CTRD_ROOT-floor
CI_STATE=/run/containerd-floor
CI_CNI_DIR="$LOCAL/cni-floor/net.d"
CI_CNI_DATA=/var/lib/cni-floor
CI_NETWORK=kubelet-floor
CI_BRIDGE=kts-br2
# What test/bench/floor.ts uses: the pods' cgroup root and log dir.
CI_CGROUP=floor
CI_IMAGES=("$(pause_image)" docker.io/library/busybox:1.36)
# shellcheck source=containerd-instance.sh
source "$KTS_ROOT/hack/containerd-instance.sh"
FLOOR_SUBNET="${FLOOR_SUBNET:-10.87.0.0/24}"
FLOOR_POD_LOGS=/var/log/pods-floor

start() {
  if running containerd-floor && ci_sock_ok; then log "containerd-floor already running (pid $(cat "$PIDS/containerd-floor.pid"))"; return 0; fi
  main_sock_ok || die "the stack's containerd is not running on $CONTAINERD_SOCK: run make up"
  stop   # what a run that did not finish left
  mkdir -p "$FLOOR_POD_LOGS"
  ci_write_conflist "$FLOOR_SUBNET"
  ci_start
  log "containerd-floor up on $CI_SOCK (pid $(cat "$PIDS/containerd-floor.pid")), pods on $CI_BRIDGE $FLOOR_SUBNET"
}

# Best effort and quiet when already gone: stop is also start's cleanup.
stop() { ci_stop "$FLOOR_POD_LOGS"; }

case "${1:-}" in
  start) start ;;
  stop) stop; log "containerd-floor stopped, its pods and state removed" ;;
  status) if running containerd-floor; then echo "containerd-floor running (pid $(cat "$PIDS/containerd-floor.pid"), $CI_SOCK)"; else echo "containerd-floor stopped"; exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac

#!/usr/bin/env bash
# upstream-kubelet.sh start|restart|stop|status: runs the upstream kubelet (_output/bin/kubelet, the
# pinned release) as a second node "<node>-upstream" beside the running local stack, so that
# `make bench` measures both kubelets side by side on one machine in one run.
#
# It gets everything of its own, so neither kubelet can touch the other's pods: a second
# containerd of the stack's runtime (root /var/lib/containerd-upstream, or containerd1-upstream, state and socket under /run/containerd-upstream,
# runc root there too), a CNI conf dir with a bridge kts-br1 for the Node's podCIDR and
# host-local data in /var/lib/cni-upstream, the cgroup root /upstream, --root-dir
# /var/lib/kubelet-upstream, pod logs in /var/log/pods-upstream, ports 10450/10448. The node is
# tainted NoSchedule so the scheduler leaves it to pods that name it (nodeName).
# `stop` deletes the node's pods, the Node, the processes and all that state, and restores
# the kernel settings the kubelet changed: the host is as before `start`.
# Logs: _output/local/logs/{kubelet,containerd}-upstream.log.
#
# SECOND_KUBELET=kubelet-ts: kubelet-ts (dist/, under hack/kubelet.sh's V8 flags) is that second
# node instead, named "<node>-second", with the words of SECOND_KUBELET_FLAGS after its own flags:
# how test/e2e/cloud-node.test.ts starts it with a managed cloud's bootstrap command line. Its
# device plugin socket is under its --root-dir, so the stack kubelet's is left alone.
source "$(dirname "$0")/lib.sh"
need_root

SECOND_KUBELET=${SECOND_KUBELET:-upstream}
case $SECOND_KUBELET in upstream|kubelet-ts) ;; *) die "SECOND_KUBELET=$SECOND_KUBELET: upstream or kubelet-ts" ;; esac
if [ "$SECOND_KUBELET" = kubelet-ts ]; then UP_NODE="$NODE_NAME-second"; else UP_NODE="$NODE_NAME-upstream"; fi
UP_DIR="$LOCAL/kubelet-upstream"           # config, kubeconfig, saved sysctls
CI_NAME=containerd-upstream
CI_DIR="$LOCAL/containerd-upstream"
CI_ROOT=$CTRD_ROOT-upstream
CI_STATE=/run/containerd-upstream
CI_CNI_DIR="$LOCAL/cni-upstream/net.d"
CI_CNI_DATA=/var/lib/cni-upstream
CI_NETWORK=kubelet-upstream
CI_BRIDGE=kts-br1
CI_CGROUP=upstream
CI_IMAGES=("$(pause_image)" docker.io/library/busybox:1.36)   # the sandbox image, as the stack's containerd
# shellcheck source=containerd-instance.sh
source "$KTS_ROOT/hack/containerd-instance.sh"
UP_SOCK=$CI_SOCK
UP_ROOT=/var/lib/kubelet-upstream
UP_POD_LOGS=/var/log/pods-upstream
UP_PORT=10450
UP_HEALTHZ=10448
UP_TAINT=kubelet-ts.dev/bench
# Paths the kubelet hard-codes whatever its --root-dir: the device plugin socket dir (its
# device manager empties it on start; kubelet-ts does not use it) and the container log
# symlinks. stop removes what the upstream kubelet put there, and the dir if start made it.
HOST_DIRS=(/var/log/containers)
[ "$SECOND_KUBELET" = kubelet-ts ] || HOST_DIRS+=(/var/lib/kubelet/device-plugins)

kubectl=("$BIN/kubectl" --kubeconfig "$LOCAL/admin.kubeconfig" --request-timeout 20s)
apiserver_ok() { "${kubectl[@]}" get --raw /readyz >/dev/null 2>&1; }
write_kubelet_config() {
  mkdir -p "$UP_DIR" "$UP_ROOT" "$UP_POD_LOGS"
  # failCgroupV1: false: this host is cgroup v1, which the kubelet refuses by default since 1.35.
  # volumePluginDir: the default is under /usr/libexec, which the kubelet would create.
  # makeIPTablesUtilChains: false, or it adds KUBE-FIREWALL (a DROP rule for 127.0.0.0/8) and
  #   canary chains to the host's iptables, and re-adds them every minute.
  cat > "$UP_DIR/config.yaml" <<YAML
# Written by hack/upstream-kubelet.sh; edits are overwritten.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
port: $UP_PORT
healthzPort: $UP_HEALTHZ
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
containerRuntimeEndpoint: unix://$UP_SOCK
cgroupDriver: cgroupfs
cgroupRoot: /$CI_CGROUP
failCgroupV1: false
failSwapOn: false
staticPodPath: ""
podLogsDir: $UP_POD_LOGS
volumePluginDir: $UP_ROOT/volume-plugins
makeIPTablesUtilChains: false
clusterDomain: cluster.local
clusterDNS:
- 10.96.0.10
rotateCertificates: true
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $PKI/ca.crt
authorization:
  mode: Webhook
registerWithTaints:
- key: $UP_TAINT
  value: upstream
  effect: NoSchedule
YAML
}

# last_log NAME: the last line of a daemon's log, for a one-line failure.
last_log() { tail -n 1 "$LOGS/$1.log" 2>/dev/null | cut -c1-300; }

node_field() { "${kubectl[@]}" get node "$UP_NODE" -o jsonpath="$1" 2>/dev/null; }

# --cert-dir: its default is /var/lib/kubelet/pki whatever --root-dir says, where it would
# find (and use) kubelet-ts's client certificate.
start_kubelet() {
  local cmd=("$BIN/kubelet")
  [ "$SECOND_KUBELET" = kubelet-ts ] && cmd=("$BIN/node" --max-semi-space-size=2 --no-maglev --no-opt "$KTS_ROOT/dist/cli/main.js")
  # shellcheck disable=SC2086  # (SECOND_KUBELET_FLAGS: words)
  start_bg kubelet-upstream "${cmd[@]}" --config "$UP_DIR/config.yaml" \
    --bootstrap-kubeconfig "$LOCAL/bootstrap-kubelet.conf" --kubeconfig "$UP_DIR/kubelet.kubeconfig" \
    --root-dir "$UP_ROOT" --cert-dir "$UP_ROOT/pki" --hostname-override "$UP_NODE" --node-ip "$KTS_IP" --v 2 \
    ${SECOND_KUBELET_FLAGS:-}
}

# restart: the kubelet process alone (its node, containerd and state stay), as `systemctl
# restart kubelet`: make bench measures both kubelets at the same age. Waits for its healthz.
restart() {
  running kubelet-upstream || die "the upstream kubelet is not running: $0 start"
  stop_bg kubelet-upstream
  start_kubelet
  wait_for 60 "kubelet-upstream healthz" curl -sf "http://127.0.0.1:$UP_HEALTHZ/healthz"
  log "upstream kubelet restarted (pid $(cat "$PIDS/kubelet-upstream.pid"))"
}

start() {
  if running kubelet-upstream && running containerd-upstream; then
    log "upstream kubelet already running (pid $(cat "$PIDS/kubelet-upstream.pid"), node $UP_NODE)"; return 0
  fi
  # (Not built by `make up`: only the upstream kubelet's users build it.)
  [ "$SECOND_KUBELET" = kubelet-ts ] || [ -x "$BIN/kubelet" ] || "$KTS_ROOT/hack/build-control-plane.sh" kubelet || die "cannot build the upstream kubelet (hack/build-control-plane.sh kubelet)"
  [ -s "$LOCAL/bootstrap-kubelet.conf" ] || die "$LOCAL/bootstrap-kubelet.conf is missing: run make up"
  apiserver_ok || die "the apiserver is not reachable: run make up"
  main_sock_ok || die "the stack's containerd is not running on $CONTAINERD_SOCK: run make up"
  # Leftovers of a run that did not finish (or half a start): clean first.
  stop
  port_free $UP_PORT "upstream kubelet API"
  port_free $UP_HEALTHZ "upstream kubelet healthz"

  ci_start
  local d; for d in $(ci_cgroup_dirs); do mkdir -p "$d"; done   # the kubelet requires its cgroup root to exist
  mkdir -p "$UP_DIR"
  save_kernel_tunables "$UP_DIR/sysctl.saved"   # what its setupKernelTunables writes; stop restores it
  for d in "${HOST_DIRS[@]}"; do [ -e "$d" ] || echo "$d" >> "$UP_DIR/host-dirs.created"; done
  write_kubelet_config
  if [ "$SECOND_KUBELET" = kubelet-ts ]; then log "starting kubelet-ts as node $UP_NODE (log: $LOGS/kubelet-upstream.log)"
  else log "starting the upstream kubelet $("$BIN/kubelet" --version) as node $UP_NODE (log: $LOGS/kubelet-upstream.log)"; fi
  : > "$LOGS/kubelet-upstream.log"
  start_kubelet

  local cidr="" end=$((SECONDS + 90))
  until cidr=$(node_field '{.spec.podCIDR}') && [ -n "$cidr" ]; do
    running kubelet-upstream || die "the upstream kubelet exited: $(last_log kubelet-upstream)"
    [ $SECONDS -lt $end ] || die "node $UP_NODE got no podCIDR within 90s (see $LOGS/kubelet-upstream.log)"
    sleep 0.5
  done
  # The kubelet writes no CNI config: a bridge for the podCIDR the controller-manager allocated.
  ci_write_conflist "$cidr"
  until [ "$(node_field '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; do
    running kubelet-upstream || die "the upstream kubelet exited: $(last_log kubelet-upstream)"
    [ $SECONDS -lt $end ] || die "node $UP_NODE is not Ready within 90s (see $LOGS/kubelet-upstream.log)"
    sleep 0.5
  done
  log "node $UP_NODE Ready (podCIDR $cidr, kubelet pid $(cat "$PIDS/kubelet-upstream.pid"))"
}

# Everything below is best effort and quiet when already gone: stop is also start's cleanup.
stop() {
  # Someone may be restarting the shared control plane: give it a minute, or the Node stays.
  if [ -d "$UP_DIR" ] && ! apiserver_ok; then
    log "waiting up to 60s for the apiserver, to delete node $UP_NODE"
    local end=$((SECONDS + 60))
    until apiserver_ok || [ $SECONDS -ge $end ]; do sleep 1; done
  fi
  if running kubelet-upstream && apiserver_ok && [ -n "$(node_field '{.metadata.name}')" ]; then
    # The kubelet itself stops the containers (CNI DEL included) and confirms the deletion.
    local pods; pods=$("${kubectl[@]}" get pods -A --field-selector "spec.nodeName=$UP_NODE" -o name 2>/dev/null | wc -l)
    if [ "$pods" -gt 0 ]; then
      log "deleting the $pods pod(s) of node $UP_NODE"
      "${kubectl[@]}" delete pods -A --field-selector "spec.nodeName=$UP_NODE" --wait --timeout 90s >/dev/null 2>&1 \
        || log "pods of $UP_NODE not gone within 90s: removing them below"
    fi
  fi
  stop_bg kubelet-upstream
  if apiserver_ok; then
    "${kubectl[@]}" delete pods -A --field-selector "spec.nodeName=$UP_NODE" --grace-period 0 --force >/dev/null 2>&1 || true
    "${kubectl[@]}" delete node "$UP_NODE" --ignore-not-found >/dev/null 2>&1 || log "cannot delete Node $UP_NODE"
    local csr
    for csr in $("${kubectl[@]}" get csr -o jsonpath="{range .items[?(@.spec.username==\"system:node:$UP_NODE\")]}{.metadata.name}{\"\\n\"}{end}" 2>/dev/null); do
      "${kubectl[@]}" delete csr "$csr" >/dev/null 2>&1 || true
    done
  elif [ -d "$UP_DIR" ]; then
    log "the apiserver is unreachable: Node $UP_NODE may remain (run $0 stop again once it is up)"
  fi

  # Pods the kubelet did not remove, the runtime and its state (hack/containerd-instance.sh).
  ci_stop "$UP_ROOT" "$UP_POD_LOGS"
  local f dir
  for f in /var/log/containers/*.log; do
    [ -L "$f" ] && [[ $(readlink "$f") == "$UP_POD_LOGS"/* ]] && rm -f "$f"
  done
  if [ -d "$UP_DIR" ]; then   # only after our start: the socket and checkpoint are then ours
    [ "$SECOND_KUBELET" = kubelet-ts ] || rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
    if [ -f "$UP_DIR/host-dirs.created" ]; then
      while read -r dir; do rmdir "$dir" 2>/dev/null || log "$dir is not empty: not removing it"; done < "$UP_DIR/host-dirs.created"
    fi
  fi
  restore_kernel_tunables "$UP_DIR/sysctl.saved"
  rm -rf "$UP_DIR"
  return 0
}

case "${1:-}" in
  start) start ;;
  restart) restart ;;
  stop) stop; log "upstream kubelet stopped and its node $UP_NODE removed" ;;
  status) if running kubelet-upstream; then echo "upstream kubelet running (pid $(cat "$PIDS/kubelet-upstream.pid"), node $UP_NODE)"; else echo "upstream kubelet stopped"; exit 1; fi ;;
  *) die "usage: $0 start|restart|stop|status" ;;
esac

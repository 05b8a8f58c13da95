#!/usr/bin/env bash
# Brings up the whole local stack, reusing whatever is already built or running:
# host packages, Node.js, control plane binaries, PKI, containerd, the registry the nodes pull
# from, images (with upstream's sample device plugin, built from the pinned release), control plane,
# then kubelet-ts (built by `make build` before this runs), and waits for the Node to be Ready.
# KTS_NO_KUBELET=1 stops before kubelet-ts.
source "$(dirname "$0")/lib.sh"
need_root
h="$KTS_ROOT/hack"
t0=$SECONDS
step() { log "== $1"; }

step "host packages and crictl";  "$h/install-host-deps.sh"
step "Node.js $NODE_VERSION";      "$h/install-node.sh" >/dev/null
step "control plane binaries";    "$h/build-control-plane.sh"
step "PKI and kubeconfigs";       "$h/pki.sh"
step "containerd";                "$h/containerd.sh"
step "test images' binaries";     "$h/build-conformance.sh" sample-device-plugin
step "local-path-provisioner";    "$h/build-addons.sh" local-path-provisioner
step "registry";                  "$h/registry.sh"
step "images";                    "$h/build-images.sh"
step "control plane";             "$h/control-plane.sh"
step "join objects";              "$h/join-objects.sh"

kubectl=("$BIN/kubectl" --kubeconfig "$LOCAL/admin.kubeconfig")
usage() {
  log "stack up in $((SECONDS - t0))s. Use the cluster with:"
  echo "  $BIN/kubectl --kubeconfig $LOCAL/admin.kubeconfig get nodes,pods -A" >&2
  echo "  $BIN/crictl pods   # the node's CRI view" >&2
}

if [ "${KTS_NO_KUBELET:-}" = 1 ]; then
  log "KTS_NO_KUBELET=1: not starting kubelet-ts"
  usage; exit 0
fi

step "kubelet-ts"
[ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build first"
# Restart only when the kubelet is not running or dist/ changed since it started.
if ! running kubelet-ts || [ -n "$(find "$KTS_ROOT/dist" -newer "$PIDS/kubelet-ts.pid" -print -quit)" ]; then
  "$h/kubelet.sh" restart
else
  log "kubelet-ts already running on the current dist/"
fi

log "waiting up to 90s for Node $NODE_NAME to be Ready"
ready() { [ "$("${kubectl[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }
# not_ready REASON: what an operator would look at first (the Node's Ready condition, the
# client certificate's CSRs, the pod CIDR, the kubelet's last lines), printed before failing,
# so that a CI log says why without the machine.
not_ready() {
  {
    echo "--- Node $NODE_NAME: Ready condition, pod CIDR"
    "${kubectl[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")]}{"\n"}podCIDR={.spec.podCIDR}{"\n"}' 2>&1
    echo "--- certificate signing requests"
    "${kubectl[@]}" get csr 2>&1 | tail -5
    echo "--- last lines of $LOGS/kubelet-ts.log"
    tail -n 25 "$LOGS/kubelet-ts.log" 2>&1 | cut -c1-400
  } >&2
  die "$1"
}
end=$((SECONDS + 90))
until ready; do
  [ $SECONDS -lt $end ] || not_ready "Node $NODE_NAME is not Ready after 90s (see $LOGS/kubelet-ts.log)"
  running kubelet-ts || not_ready "kubelet-ts is not running (see $LOGS/kubelet-ts.log)"
  sleep 1
done
log "Node $NODE_NAME is Ready"
usage

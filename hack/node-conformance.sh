#!/usr/bin/env bash
# Runs the [NodeConformance] tests of upstream's node e2e suite (e2e_node.test of the pinned
# release, with the ginkgo CLI) against the running local stack's kubelet-ts (`make up`, Node
# "$NODE_NAME"), the way upstream's containerized node conformance runs against a kubelet it
# did not start, but with the stack's own apiserver instead of one in the test process:
# --start-services=false (no etcd, apiserver or kubelet of its own), --host and --bearer-token
# (node e2e reads no kubeconfig: a token of a cluster-admin ServiceAccount made here), the
# kubelet's config from /configz through the apiserver's node proxy (--dns-domain: its
# clusterDomain), pods bound to the node directly, CRI on the host containerd, and
# --prepull-images=false (no registry is reachable: the images are the ones
# hack/build-images.sh --conformance imports).
#   FOCUS=regex, SKIP=regex  another selection (default: all [NodeConformance] tests but
#                            [Serial], [Disruptive], [Flaky], [Alpha] and [Feature:*])
#   PROCS=n                  parallel test processes (default 2)
#   TIMEOUT=duration         ginkgo's limit for the whole run (default 4h); the report is
#                            written for what ran
#   OUT=dir                  reports (default _output/node-conformance: junit.xml, e2e.log,
#                            missing-images.txt)
OUTDIR="${OUT:-}"  # (before lib.sh, which sets OUT to _output)
source "$(dirname "$0")/lib.sh"
need_root

focus='\[NodeConformance\]'
skip='\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Alpha\]|\[Feature:[^\]]+\]'
FOCUS="${FOCUS:-$focus}"
SKIP="${SKIP:-$skip}"
PROCS="${PROCS:-2}"
TIMEOUT="${TIMEOUT:-4h}"
OUTDIR="${OUTDIR:-$OUT/node-conformance}"
KUBECONFIG_ADMIN="$LOCAL/admin.kubeconfig"
SA=node-e2e
k() { kubectl --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

[ -f "$KUBECONFIG_ADMIN" ] || die "no local stack ($KUBECONFIG_ADMIN): run 'make up' first"
k get --raw /readyz >/dev/null 2>&1 || die "the local stack's apiserver is not ready: run 'make up'"
# The suite runs against the only Node there is (it fails when the apiserver has more).
nodes=$(k get nodes -o jsonpath='{.items[*].metadata.name}')
[ "$nodes" = "$NODE_NAME" ] || die "expected the single Node $NODE_NAME on the local stack, found: ${nodes:-none}"
curl -fsS --max-time 5 http://127.0.0.1:10248/healthz >/dev/null || die "kubelet-ts is not healthy (hack/kubelet.sh status)"
bash "$KTS_ROOT/hack/build-conformance.sh"
# The tests' images, into the host containerd the node runs on.
bash "$KTS_ROOT/hack/build-images.sh" --conformance

# The identity the suite acts as: node e2e authenticates with a bearer token only.
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: $SA, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $SA}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: $SA, namespace: kube-system}]
EOF
token=$(k -n kube-system create token "$SA" --duration=24h) || die "could not get a token for $SA"
# The Summary API and container metrics tests read the kubelet's read-only port, which
# upstream's node e2e kubelet serves (10255): kubelet-ts runs with it for the run (its pods
# survive the restart), and without it again afterwards (cleanup below).
extra="$OUTDIR.kubelet-extra.yaml"; echo 'readOnlyPort: 10255' > "$extra"
kubelet_healthy() {
  local _
  for _ in $(seq 60); do curl -fsS --max-time 2 http://127.0.0.1:10248/healthz >/dev/null 2>&1 && return 0; sleep 1; done
  die "kubelet-ts is not healthy 60 s after a restart (see $LOGS/kubelet-ts.log)"
}
KTS_CONFIG_EXTRA="$extra" bash "$KTS_ROOT/hack/kubelet.sh" restart; kubelet_healthy
curl -fsS --max-time 5 http://127.0.0.1:10255/healthz >/dev/null || die "kubelet-ts does not serve its read-only port 10255"
# The tests expect pods' FQDNs in the kubelet's clusterDomain (node e2e has no default).
configz=$(k get --raw "/api/v1/nodes/$NODE_NAME/proxy/configz") || die "could not read the kubelet's /configz"
domain=$(jq -r '.kubeletconfig.clusterDomain // ""' <<<"$configz")
# The mirror pod tests write static pods there, and a failed one leaves its manifest behind.
static=$(jq -r '.kubeletconfig.staticPodPath // ""' <<<"$configz")

rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
watcher=$(watch_failed_pulls "$KUBECONFIG_ADMIN" "$OUTDIR/missing-images.txt")
stamp="$OUTDIR/.started"; touch "$stamp"
cleanup() {
  kill -TERM -- "-$watcher" 2>/dev/null || true
  log "restarting kubelet-ts without the read-only port"
  rm -f "$extra"; bash "$KTS_ROOT/hack/kubelet.sh" restart || true
  [ -n "$static" ] && [ -d "$static" ] || return 0
  local f
  for f in $(find "$static" -maxdepth 1 -type f -newer "$stamp" 2>/dev/null); do
    log "removing the static pod a test left behind: $f"; rm -f "$f"
  done
}
trap cleanup EXIT

log "running node conformance tests on $NODE_NAME ($PROCS in parallel; focus: $FOCUS; skip: $SKIP)"
start=$SECONDS
set +e
# From OUTDIR: the suite writes its kubelet.conf.d into the working directory.
(cd "$OUTDIR" && ginkgo --procs="$PROCS" --timeout="$TIMEOUT" --no-color --silence-skips --output-dir="$OUTDIR" \
  --junit-report=junit.xml --focus="$FOCUS" --skip="$SKIP" "$BIN/e2e_node.test" -- \
  --start-services=false --stop-services=false --prepull-images=false \
  --host="https://$KTS_IP:6443" --bearer-token="$token" --node-name="$NODE_NAME" --dns-domain="$domain" \
  --container-runtime-endpoint="unix://$CONTAINERD_SOCK" --kubectl-path="$BIN/kubectl" \
  --dump-logs-on-failure=false --report-dir="$OUTDIR") 2>&1 | tee "$OUTDIR/e2e.log"
rc=${PIPESTATUS[0]}
set -e
wall=$((SECONDS - start))
log "node conformance run finished in $((wall / 60))m$((wall % 60))s (exit $rc); report: $OUTDIR/junit.xml"
exit "$rc"

#!/usr/bin/env bash
# Starts the local control plane from the pinned binaries in _output/bin: etcd (plain http
# on 127.0.0.1), kube-apiserver on $KTS_IP:6443 (an address on the interface kts0, dummy or a portless bridge:
# Kubernetes refuses loopback for the apiserver endpoint and the node's InternalIP),
# kube-controller-manager and kube-scheduler. Reuses the ones it started before.
source "$(dirname "$0")/lib.sh"
need_root
apt_install iproute2 curl
for b in etcd kube-apiserver kube-controller-manager kube-scheduler; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run hack/build-control-plane.sh"
done
[ -s "$PKI/ca.crt" ] && [ -s "$LOCAL/admin.kubeconfig" ] || die "no PKI in $PKI: run hack/pki.sh"

# The address the apiserver advertises and the node uses as its InternalIP.
host_address

# need_port PORT NAME: the port must be free unless the process named NAME (ours) holds it.
need_port() {
  local holder; holder=$(port_holder "$1")
  [ -z "$holder" ] && return 0
  running "$2" && [ "$holder" = "$(cat "$PIDS/$2.pid")" ] && return 0
  die "port $1 (needed by $2) is held by pid $holder ($(tr '\0' ' ' < "/proc/$holder/cmdline" 2>/dev/null | cut -c1-80))"
}
need_port 2379 etcd; need_port 2380 etcd
need_port 6443 kube-apiserver
need_port 10257 kube-controller-manager
need_port 10259 kube-scheduler

# healthy URL [CURL_OPT...]: anonymous GET of a health endpoint (allowed by default) answers "ok".
healthy() { [ "$(curl -sS --max-time 3 "${@:2}" "$1" 2>/dev/null)" = ok ]; }
etcd_ok() { curl -sf --max-time 3 http://127.0.0.1:2379/readyz >/dev/null; }
apiserver_ok() { healthy "https://$KTS_IP:6443/readyz" --cacert "$PKI/ca.crt"; }
# Controller-manager and scheduler serve with a self-signed cert they generate themselves.
kcm_ok() { healthy https://127.0.0.1:10257/healthz -k; }
sched_ok() { healthy https://127.0.0.1:10259/healthz -k; }

# start NAME HEALTHCHECK SECONDS CMD...: starts NAME unless it runs already, then waits for health.
start() {
  local name=$1 check=$2 secs=$3; shift 3
  if running "$name"; then
    log "$name already running (pid $(cat "$PIDS/$name.pid"))"
  else
    log "starting $name (log: $LOGS/$name.log)"
    start_bg "$name" "$@"
  fi
  wait_for "$secs" "$name" "$check"
  running "$name" || die "$name exited (see $LOGS/$name.log)"
}

start etcd etcd_ok 60 "$BIN/etcd" --name kts --data-dir "$LOCAL/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster kts=http://127.0.0.1:2380 --initial-cluster-state new

# An audit log of what nodes ask the apiserver (metadata only, nothing else logged): it lets
# test/e2e/node-credentials.test.ts check that kubelet-ts works within NodeRestriction.
cat > "$LOCAL/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- {level: Metadata, userGroups: ["system:nodes"]}
- {level: None}
YAML

start kube-apiserver apiserver_ok 120 "$BIN/kube-apiserver" \
  --advertise-address="$KTS_IP" --bind-address="$KTS_IP" --secure-port=6443 \
  --etcd-servers=http://127.0.0.1:2379 \
  --allow-privileged=true \
  --audit-policy-file="$LOCAL/audit-policy.yaml" --audit-log-path="$LOGS/kube-apiserver-audit.log" \
  --audit-log-maxsize=50 --audit-log-maxbackup=1 \
  --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --enable-bootstrap-token-auth \
  --client-ca-file="$PKI/ca.crt" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
  --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname \
  --service-cluster-ip-range="$SERVICE_CIDR" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
  --requestheader-extra-headers-prefix=X-Remote-Extra- --requestheader-group-headers=X-Remote-Group \
  --requestheader-username-headers=X-Remote-User \
  --proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key"

# Single instances: no leader election, so a restart does not wait for an old lease.
start kube-controller-manager kcm_ok 60 "$BIN/kube-controller-manager" \
  --kubeconfig="$LOCAL/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$LOCAL/controller-manager.kubeconfig" \
  --authorization-kubeconfig="$LOCAL/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false \
  --client-ca-file="$PKI/ca.crt" --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
  --controllers='*,bootstrapsigner,tokencleaner' \
  --allocate-node-cidrs=true --cluster-cidr="$CLUSTER_CIDR" --node-cidr-mask-size=24 \
  --service-cluster-ip-range="$SERVICE_CIDR" \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
  --cluster-signing-duration="$SIGNING_DURATION" \
  --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
  --use-service-account-credentials=true

start kube-scheduler sched_ok 60 "$BIN/kube-scheduler" \
  --kubeconfig="$LOCAL/scheduler.kubeconfig" \
  --authentication-kubeconfig="$LOCAL/scheduler.kubeconfig" \
  --authorization-kubeconfig="$LOCAL/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false

log "control plane ready: https://$KTS_IP:6443 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)"

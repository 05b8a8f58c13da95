#!/usr/bin/env bash
# Hollow nodes (docs: src/hollow/main.ts): N nodes that are real kubelets over a fake runtime,
# against the apiserver of a kubeconfig, of either kind:
#   ts        kubelet-ts's hollow mode, all N in one process (node dist/hollow/main.js)
#   ts-json   the same with contentType application/json to the apiserver (protobuf is the default)
#   kubemark  upstream's hollow node of the pin (cmd/kubemark --morph=kubelet), one process a node,
#             built through the Go module proxy (hack/build-control-plane.sh kubemark)
# Each node gets a client certificate (CN system:node:NAME, O system:nodes) signed here with the
# cluster CA's key, so the Node authorizer treats it as that node.
#
#   hack/hollow.sh start ts|ts-json|kubemark N DIR KUBECONFIG CA_CRT CA_KEY [BASE_PORT]
#   hack/hollow.sh stop DIR
#   hack/hollow.sh control-plane up|down DIR   a throwaway etcd + kube-apiserver + controller-manager
#       + scheduler for benchmarks (etcd 127.0.0.1:23791, apiserver 127.0.0.1:17443, its own CA),
#       beside and apart from the local stack: hollow nodes must never join the stack's apiserver,
#       whose e2e tests would schedule pods onto them. DIR/admin.kubeconfig, DIR/pki/ca.{crt,key}.
# Nodes are named hollow-ts-I / hollow-tsj-I / hollow-km-I and labelled
# hollow.kubelet-ts.dev/kind=kubelet-ts|kubelet-ts-json|kubemark.
# Everything lives under DIR (pids, logs, certificates, root dirs); stop kills by pid file only.
source "$(dirname "$0")/lib.sh"

LABEL=hollow.kubelet-ts.dev/kind

# node_cert DIR NAME SERVER CA_CRT CA_KEY: DIR/kubeconfigs/NAME.kubeconfig with its own client cert.
node_cert() {
  local dir=$1 name=$2 server=$3 ca=$4 cakey=$5 k="$1/certs/$2"
  openssl ecparam -name prime256v1 -genkey -noout -out "$k.key" 2>/dev/null
  openssl req -new -key "$k.key" -subj "/O=system:nodes/CN=system:node:$name" -out "$k.csr" 2>/dev/null
  openssl x509 -req -in "$k.csr" -CA "$ca" -CAkey "$cakey" -CAcreateserial -days 2 -out "$k.crt" 2>/dev/null
  cat >"$dir/kubeconfigs/$name.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: hollow
  cluster: {server: "$server", certificate-authority-data: "$(base64 -w0 <"$ca")"}
users:
- name: $name
  user: {client-certificate-data: "$(base64 -w0 <"$k.crt")", client-key-data: "$(base64 -w0 <"$k.key")"}
contexts:
- name: hollow
  context: {cluster: hollow, user: $name}
current-context: hollow
KC
}

start() {
  local kind=$1 n=$2 dir=$3 kubeconfig=$4 ca=$5 cakey=$6 base=${7:-20250} prefix server i name
  [[ $kind = ts || $kind = ts-json || $kind = kubemark ]] || die "kind must be ts, ts-json or kubemark, not $kind"
  [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "N must be a positive number"
  server=$("$BIN/kubectl" --kubeconfig "$kubeconfig" config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  [ -n "$server" ] || die "no server in $kubeconfig"
  [[ $server = *:6443* ]] && die "refusing $server: hollow nodes never join the local stack's apiserver (its e2e tests would schedule onto them)"
  local extra=()
  case $kind in
    ts) prefix=hollow-ts- ;;
    ts-json) prefix=hollow-tsj- extra=(--content-type application/json --node-labels hollow.kubelet-ts.dev/kind=kubelet-ts-json) ;;
    kubemark) prefix=hollow-km- ;;
  esac
  mkdir -p "$dir"/{certs,kubeconfigs,logs,pids,root}
  for ((i = 0; i < n; i++)); do node_cert "$dir" "$prefix$i" "$server" "$ca" "$cakey"; done
  if [ "$kind" != kubemark ]; then
    [ -f "$KTS_ROOT/dist/hollow/main.js" ] || die "no dist/hollow/main.js: make build first"
    # HOLLOW_PER_PROCESS nodes a process (default all): one event loop serves its kubelets and
    # their runtimes, and 50 of them on a loaded machine missed CRI deadlines (docs/hollow.md).
    local per=${HOLLOW_PER_PROCESS:-$n} first count
    for ((first = 0; first < n; first += per)); do
      count=$((n - first < per ? n - first : per))
      # The V8 flags of the kubelet-ts binary (src/cli/main.ts's first line), so memory compares.
      MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 \
        setsid "$BIN/node" --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50 \
        "$KTS_ROOT/dist/hollow/main.js" --nodes "$count" --first "$first" --kubeconfig-dir "$dir/kubeconfigs" \
        --root-dir "$dir/root" --name-prefix "$prefix" --base-port "$base" "${extra[@]}" >"$dir/logs/hollow-ts-$first.log" 2>&1 &
      echo $! >"$dir/pids/hollow-ts-$first"
    done
  else
    bash "$KTS_ROOT/hack/build-control-plane.sh" kubemark >/dev/null
    for ((i = 0; i < n; i++)); do
      name=$prefix$i
      mkdir -p "$dir/root/$name"
      # No host image service (there is no runtime here); the healthz port (10248) cannot be set
      # and fails but on one node (logged).
      setsid "$BIN/kubemark" --morph=kubelet --name="$name" \
        --kubeconfig="$dir/kubeconfigs/$name.kubeconfig" --cert-dir="$dir/root/$name/pki" \
        --kubelet-port=$((base + 2 * i)) --kubelet-read-only-port=0 --use-host-image-service=false \
        --node-labels="$LABEL=kubemark" >"$dir/logs/$name.log" 2>&1 &
      echo $! >"$dir/pids/$name"
    done
  fi
  log "started $n hollow $kind nodes against $server (logs: $dir/logs)"
}

stop() {
  local dir=$1 f pid
  for f in "$dir"/pids/*; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
  done
  for f in "$dir"/pids/*; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
  done
  # kubemark makes its root directory under /tmp whatever TMPDIR says (test/utils MakeTempDirOrDie)
  # and logs it: those go too.
  local root
  for root in $(grep -ho 'Using /tmp/hollow-kubelet\.[0-9]* as root dir' "$dir"/logs/*.log 2>/dev/null | awk '{print $2}'); do
    rm -rf "$root"
  done
}

# pki DIR: a CA, the apiserver's serving cert, the service-account key and an admin client cert.
pki() {
  local p=$1/pki
  mkdir -p "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$p/ca.key" -out "$p/ca.crt" -days 2 -subj "/CN=hollow-ca" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$p/apiserver.key" -out "$p/apiserver.csr" -subj "/CN=kube-apiserver" 2>/dev/null
  openssl x509 -req -in "$p/apiserver.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 2 -out "$p/apiserver.crt" \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1') 2>/dev/null
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  local who
  for who in admin:system:masters controller-manager:system:kube-controller-manager scheduler:system:kube-scheduler; do
    local file=${who%%:*} cn=${who#*:} o=
    [ "$file" = admin ] && { cn=hollow-admin; o=/O=system:masters; }
    openssl req -newkey rsa:2048 -nodes -keyout "$p/$file.key" -out "$p/$file.csr" -subj "$o/CN=$cn" 2>/dev/null
    openssl x509 -req -in "$p/$file.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 2 -out "$p/$file.crt" 2>/dev/null
    "$BIN/kubectl" config set-cluster hollow --server=https://127.0.0.1:17443 --certificate-authority="$p/ca.crt" --embed-certs \
      --kubeconfig="$1/$file.kubeconfig" >/dev/null
    "$BIN/kubectl" config set-credentials "$file" --client-certificate="$p/$file.crt" --client-key="$p/$file.key" --embed-certs \
      --kubeconfig="$1/$file.kubeconfig" >/dev/null
    "$BIN/kubectl" config set-context hollow --cluster=hollow --user="$file" --kubeconfig="$1/$file.kubeconfig" >/dev/null
    "$BIN/kubectl" config use-context hollow --kubeconfig="$1/$file.kubeconfig" >/dev/null
  done
}

control_plane_up() {
  local d=$1
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do [ -x "$BIN/$b" ] || die "no $BIN/$b (hack/build-control-plane.sh)"; done
  mkdir -p "$d"/{logs,pids,etcd}
  pki "$d"
  setsid "$BIN/etcd" --data-dir "$d/etcd" --listen-client-urls http://127.0.0.1:23791 --advertise-client-urls http://127.0.0.1:23791 \
    --listen-peer-urls http://127.0.0.1:23792 --initial-advertise-peer-urls http://127.0.0.1:23792 \
    --initial-cluster default=http://127.0.0.1:23792 --listen-metrics-urls http://127.0.0.1:23793 >"$d/logs/etcd.log" 2>&1 &
  echo $! >"$d/pids/etcd"
  local p=$d/pki
  # The nodes' requests, one line each (test/bench/hollow.ts counts them by node kind): only system:nodes.
  printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'omitStages: [RequestReceived]' 'rules:' \
    '- level: Metadata' '  userGroups: ["system:nodes"]' '- level: None' >"$d/audit-policy.yaml"
  setsid "$BIN/kube-apiserver" --audit-policy-file="$d/audit-policy.yaml" --audit-log-path="$d/logs/audit.log" \
    --audit-log-maxsize=500 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=17443 \
    --etcd-servers=http://127.0.0.1:23791 --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --client-ca-file="$p/ca.crt" --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
    --service-cluster-ip-range=10.96.0.0/16 --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --endpoint-reconciler-type=none >"$d/logs/kube-apiserver.log" 2>&1 &
  echo $! >"$d/pids/kube-apiserver"
  for _ in $(seq 120); do "$BIN/kubectl" --kubeconfig "$d/admin.kubeconfig" get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
  "$BIN/kubectl" --kubeconfig "$d/admin.kubeconfig" get --raw /readyz >/dev/null || die "apiserver not ready (see $d/logs/kube-apiserver.log)"
  # Their own secure ports: the local stack's controller-manager and scheduler hold 10257 and 10259.
  setsid "$BIN/kube-controller-manager" --kubeconfig="$d/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$d/controller-manager.kubeconfig" --authorization-kubeconfig="$d/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=17257 --leader-elect=false --client-ca-file="$p/ca.crt" \
    --root-ca-file="$p/ca.crt" --service-account-private-key-file="$p/sa.key" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" >"$d/logs/kube-controller-manager.log" 2>&1 &
  echo $! >"$d/pids/kube-controller-manager"
  setsid "$BIN/kube-scheduler" --kubeconfig="$d/scheduler.kubeconfig" --authentication-kubeconfig="$d/scheduler.kubeconfig" \
    --authorization-kubeconfig="$d/scheduler.kubeconfig" --bind-address=127.0.0.1 --secure-port=17259 --leader-elect=false \
    >"$d/logs/kube-scheduler.log" 2>&1 &
  echo $! >"$d/pids/kube-scheduler"
  log "throwaway control plane up: $d/admin.kubeconfig (https://127.0.0.1:17443)"
}

case "${1:-}" in
  start) shift; [ $# -ge 6 ] || die "usage: $0 start ts|ts-json|kubemark N DIR KUBECONFIG CA_CRT CA_KEY [BASE_PORT]"; start "$@" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  control-plane)
    [ $# -eq 3 ] || die "usage: $0 control-plane up|down DIR"
    case $2 in
      up) control_plane_up "$3" ;;
      down) stop "$3" ;;
      *) die "usage: $0 control-plane up|down DIR" ;;
    esac
    ;;
  *) die "usage: $0 start|stop|control-plane ..." ;;
esac

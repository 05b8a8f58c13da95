#!/usr/bin/env bash
# Checks a kind cluster made by hack/kind/up.sh (docs/kind.md), as issue 43's e2e will: every node
# Ready; a Deployment spread over the workers reached through its Service by DNS from a pod on
# every node; kubectl logs, exec and port-forward; a StatefulSet on kind's `standard` StorageClass
# keeping its data across a pod delete. Leaves the namespace kts-kind-smoke behind only on failure.
source "$(dirname "$0")/../lib.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
kctl() { "$KTS_CACHE/kube-$KUBE_VERSION/bin/kubectl" --kubeconfig "$KIND_KUBECONFIG" --request-timeout 30s "$@"; }
ns=kts-kind-smoke
k() { kctl -n "$ns" "$@"; }
t0=$SECONDS
ok() { log "ok: $*"; }
fail() { die "$* (namespace $ns kept: kubectl --kubeconfig ${KIND_KUBECONFIG#"$KTS_ROOT"/} -n $ns get all)"; }

kctl wait --for=condition=Ready nodes --all --timeout=60s >/dev/null || fail "nodes not Ready"
nodes=$(kctl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
workers=$(kctl get nodes -l '!node-role.kubernetes.io/control-plane' -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
nw=$(echo "$workers" | grep -c .)
ok "$(echo "$nodes" | grep -c .) nodes Ready, $nw workers"
# agnhost (hack/build-images.sh's) into every node.
agn=$(compgen -G "$KTS_CACHE/images/e2e-agnhost-*.tar" | grep -E -- '-[0-9a-f]{16}\.tar$' | head -1)
[ -n "$agn" ] || die "no agnhost image in $KTS_CACHE/images (make up builds it)"
"$KTS_ROOT/hack/kind/kind.sh" load image-archive --name "$KIND_CLUSTER" "$agn" >/dev/null 2>&1 || fail "kind load image-archive $agn"
img=$(tar -xOf "$agn" index.json | jq -r '.manifests[0].annotations["io.containerd.image.name"]')

kctl delete ns "$ns" --wait=true >/dev/null 2>&1 || true
kctl create ns "$ns" >/dev/null
reps=$((nw * 2))
k apply -f - >/dev/null <<YAML || fail "cannot create the workload"
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo}
spec:
  replicas: $reps
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
        nodeTaintsPolicy: Honor, labelSelector: {matchLabels: {app: echo}}}]
      containers: [{name: echo, image: $img, args: [netexec, --http-port=8080]}]
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec: {selector: {app: echo}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: client}
spec:
  selector: {matchLabels: {app: client}}
  template:
    metadata: {labels: {app: client}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: c, image: $img, args: [pause]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: data}
spec:
  serviceName: data
  replicas: 1
  selector: {matchLabels: {app: data}}
  template:
    metadata: {labels: {app: data}}
    spec:
      containers:
      - {name: c, image: $img, command: [sh, -c, 'date +%s%N >> /data/boots; exec sleep 3600'], volumeMounts: [{name: d, mountPath: /data}]}
  volumeClaimTemplates:
  - metadata: {name: d}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Mi}}}
YAML
k rollout status deploy/echo --timeout=120s >/dev/null || fail "Deployment echo not available"
k rollout status ds/client --timeout=120s >/dev/null || fail "DaemonSet client not available"
on=$(k get pods -l app=echo -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)
[ "$on" = "$nw" ] || fail "echo's $reps replicas on $on nodes, not on the $nw workers"
ok "$reps replicas of echo on the $nw workers"
# From every node's client pod, by the Service's DNS name: every replica answers.
want=$(k get pods -l app=echo -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
for p in $(k get pods -l app=client -o jsonpath='{.items[*].metadata.name}'); do
  n=$(k get pod "$p" -o jsonpath='{.spec.nodeName}')
  # shellcheck disable=SC2016  # ($(seq 40) is the pod's)
  got=$(k exec "$p" -- sh -c 'for i in $(seq 40); do printf "GET /hostname HTTP/1.0\r\n\r\n" | nc -w 3 echo.'"$ns"'.svc.cluster.local 80 | tail -1; echo; done' | grep . | sort -u)
  [ "$got" = "$want" ] || fail "from $n, echo.$ns.svc.cluster.local answered by: $(echo "$got" | tr '\n' ' ') (want all of $(echo "$want" | tr '\n' ' '))"
done
ok "every replica answers echo.$ns.svc.cluster.local from every node"
e=$(k get pods -l app=echo -o jsonpath='{.items[0].metadata.name}')
logs=$(k logs "$e" 2>&1 || true)
[[ $logs == *"Started HTTP server on port 8080"* ]] || fail "kubectl logs $e: $(head -c 200 <<<"$logs")"
[ "$(k exec "$e" -- cat /etc/hostname)" = "$e" ] || fail "kubectl exec $e"
port=$((20000 + RANDOM % 10000))
k port-forward svc/echo "$port:80" >/dev/null 2>&1 & pf=$!
got=""; for _ in $(seq 20); do got=$(curl -s -m 2 "http://127.0.0.1:$port/hostname" || true); [ -n "$got" ] && break; sleep 0.5; done
kill $pf 2>/dev/null; wait $pf 2>/dev/null || true
echo "$want" | grep -qx "$got" || fail "kubectl port-forward svc/echo answered '$got'"
ok "kubectl logs, exec, port-forward"
k rollout status sts/data --timeout=120s >/dev/null || fail "StatefulSet data not ready (its PVC: $(k get pvc --no-headers 2>&1 | tr '\n' ' '))"
sc=$(k get pvc d-data-0 -o jsonpath='{.spec.storageClassName}')
k delete pod data-0 --wait=true >/dev/null
k rollout status sts/data --timeout=120s >/dev/null || fail "StatefulSet data not ready again"
boots=$(k exec data-0 -- sh -c 'wc -l < /data/boots')
[ "${boots##*$'\n'}" = 2 ] || fail "data-0's volume has ${boots##*$'\n'} boots, not 2"
ok "StatefulSet on StorageClass $sc kept its data across a pod delete"
kctl delete ns "$ns" --wait=false >/dev/null
log "kind smoke passed in $((SECONDS - t0))s"

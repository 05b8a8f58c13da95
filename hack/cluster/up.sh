#!/usr/bin/env bash
# Brings up the local cluster of kubelet-ts nodes the way kubeadm makes one, reusing what runs:
# NODES nodes (hack/cluster/lib.sh), `kubeadm init` on kts-cp with kubelet-ts running the
# control plane as static pods, kubeadm's addons (kube-proxy, CoreDNS), flannel applied with
# kubectl as its users apply it, then `kubeadm join` on each worker. Waits until every node is
# Ready and the add-ons run. Admin kubeconfig: _output/cluster/admin.conf.
source "$(dirname "$0")/lib.sh"
need_root
h="$KTS_ROOT/hack"
t0=$SECONDS
LOGS="$CLUSTER_LOGS"
mkdir -p "$LOGS"
[ "$CLUSTER_NODES" -ge 1 ] || { log "NODES=$CLUSTER_NODES: no cluster"; exit 0; }

log "== cluster: binaries and images"
"$h/build-control-plane.sh"
"$h/build-addons.sh"
# For images every node gets (hack/build-images.sh): the sample device plugin's (every set) and
# the DRA test driver's (--cluster: manifests/addons/dra-test-driver.yaml).
"$h/build-conformance.sh" sample-device-plugin dra-test-driver
[ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build first"
# kubeadm's preflight runs `kubelet --version`: the node's kubelet is kubelet-ts.
mkdir -p "$CLUSTER_LOCAL/bin"
printf '#!/bin/sh\nexec %s %s "$@"\n' "$BIN/node" "$KTS_ROOT/dist/cli/main.js" > "$CLUSTER_LOCAL/bin/kubelet"
chmod +x "$CLUSTER_LOCAL/bin/kubelet"

# The registry the nodes pull from (hack/build-images.sh pushes their images into it).
"$h/registry.sh"
mapfile -t nodes < <(node_names)
for n in "${nodes[@]}"; do "$h/cluster/node.sh" add "$n"; done

api_ok() { ckubectl get --raw /readyz >/dev/null 2>&1; }

cp_state=$(node_state "$CP_NODE")
if [ -f "$cp_state/etc/kubernetes/admin.conf" ]; then
  cp "$cp_state/etc/kubernetes/admin.conf" "$CLUSTER_KUBECONFIG"
  "$h/cluster/node.sh" kubelet "$CP_NODE" start
  wait_for 180 "$CP_NODE-kubelet" api_ok
  log "node $CP_NODE: control plane already initialised"
else
  cp_ip=$(node_ip "$CP_NODE")
  cat > "$cp_state/etc/kts/kubeadm.yaml" <<YAML
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint: {advertiseAddress: $cp_ip, bindPort: 6443}
$(node_registration "$CP_NODE")
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $KUBE_VERSION
controlPlaneEndpoint: $cp_ip:6443
networking: {podSubnet: $POD_SUBNET, serviceSubnet: $SERVICE_SUBNET, dnsDomain: cluster.local}
# The etcd the repo builds (hack/versions.env), under kubeadm's tag scheme.
etcd: {local: {dataDir: /var/lib/etcd, imageTag: ${ETCD_VERSION#v}-0}}
# Upstream's e2e clusters keep 100 terminated pods (cluster/gce/config-test.sh), which the PodGC test assumes.
controllerManager: {extraArgs: [{name: terminated-pod-gc-threshold, value: "100"}]}
# The beta versions of resource.k8s.io beside v1, as upstream's DRA test cluster serves them
# (test/e2e/dra/kind.yaml): the DRA tests "with v1beta1 API" and "with v1beta2 API" use them.
apiServer: {extraArgs: [{name: runtime-config, value: "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"}]}
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
# The node log query (/logs/?query=), which the [Feature:NodeLogQuery] tests use.
enableSystemLogQuery: true
# No disk-pressure evictions, as kind's nodes (its kubeadm config): the nodes share this machine's
# disk, whose free share sits near the default 15% imagefs.available, and upstream's storage
# suites (make conformance-storage) fill gigabytes at once. The eviction tests run on the local
# stack (test/e2e/node-pressure-eviction.test.ts).
evictionHard: {nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
# nf_conntrack_max is read-only in a network namespace: leave it (as kind does).
conntrack: {maxPerCore: 0}
YAML
  kubeadm_with_kubelet "$CP_NODE" init --config /etc/kts/kubeadm.yaml "$PREFLIGHT"
  cp "$cp_state/etc/kubernetes/admin.conf" "$CLUSTER_KUBECONFIG"
fi
chmod 600 "$CLUSTER_KUBECONFIG"

log "== cluster: flannel"
sed -e "s#POD_SUBNET#$POD_SUBNET#" -e "s#API_HOST#$(node_ip "$CP_NODE")#" "$KTS_ROOT/manifests/addons/kube-flannel.yaml" | ckubectl apply -f - >>"$LOGS/addons.log" \
  || die "kubectl apply of flannel failed (see $LOGS/addons.log)"

for n in "${nodes[@]}"; do [ "$n" = "$CP_NODE" ] || "$h/cluster/node.sh" join "$n"; done

log "== cluster: waiting for ${#nodes[@]} nodes Ready and the add-ons"
ready_nodes() { [ "$(ckubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null | grep -c True)" -ge "${#nodes[@]}" ]; }
rolled_out() { ckubectl -n "$1" rollout status "$2" --timeout=5s >/dev/null 2>&1; }
end=$((SECONDS + 600))
for check in ready_nodes "rolled_out kube-flannel ds/kube-flannel-ds" "rolled_out kube-system ds/kube-proxy" "rolled_out kube-system deploy/coredns"; do
  until $check; do
    [ $SECONDS -lt $end ] || { ckubectl get nodes,pods -A -o wide >&2 || true; die "cluster not ready ($check) after 600s (logs: $LOGS)"; }
    sleep 2
  done
done
log "cluster up in $((SECONDS - t0))s: $(ckubectl get nodes --no-headers | awk '{printf "%s(%s) ", $1, $2}')"
echo "  $BIN/kubectl --kubeconfig $CLUSTER_KUBECONFIG get nodes,pods -A -o wide" >&2

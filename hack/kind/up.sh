#!/usr/bin/env bash
# A kind cluster with kubelet-ts nodes (docs/kind.md), from nothing but this machine's caches:
# builds kind and the node image(s) when missing, `kind create cluster` with KIND_CONFIG (default
# manifests/kind/cluster.yaml), applies flannel (kindnetd cannot be built here) and waits for
# every node to be Ready. Its kubeconfig: _output/kind/kubeconfig (KIND_KUBECONFIG). The nodes'
# containerd takes the local stack's registry (make up) as the mirror of docker.io and
# registry.k8s.io; without the stack they pull only what the node image preloads.
# Runs beside the local stack and its cluster (make up): its own podman network (KIND_SUBNET),
# its own containers, nothing of theirs touched.
source "$(dirname "$0")/../lib.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
need_root
KIND_CONFIG="${KIND_CONFIG:-$KTS_ROOT/manifests/kind/cluster.yaml}"
t0=$SECONDS
kind_setup
# The images the config names: ours, built here when missing or stale.
grep -q "image: $KIND_NODE_IMAGE\$" "$KIND_CONFIG" && "$KTS_ROOT/hack/kind/node-image.sh"
grep -q "image: $KIND_NODE_IMAGE_UPSTREAM\$" "$KIND_CONFIG" && "$KTS_ROOT/hack/kind/node-image.sh" --upstream
kkind() { "$KTS_ROOT/hack/kind/kind.sh" "$@"; }
kctl() { "$KTS_CACHE/kube-$KUBE_VERSION/bin/kubectl" --kubeconfig "$KIND_KUBECONFIG" "$@"; }
if kkind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
  log "kind cluster $KIND_CLUSTER exists"
else
  log "kind create cluster --name $KIND_CLUSTER --config ${KIND_CONFIG#"$KTS_ROOT"/}"
  t1=$SECONDS
  kkind create cluster --name "$KIND_CLUSTER" --config "$KIND_CONFIG" || die "kind create cluster failed"
  log "kind create cluster took $((SECONDS - t1))s"
fi
kind_service_reject add
# The registry hosts (the configs' containerdConfigPatches name the directory; containerd reads it
# at each pull): kind's documented local registry setup, with hack/lib.sh's registry_hosts.
hosts=$(mktemp -d); registry_hosts "$hosts"
for n in $(kkind get nodes --name "$KIND_CLUSTER"); do
  kind_podman exec "$n" mkdir -p /etc/containerd/certs.d && kind_podman cp "$hosts/." "$n:/etc/containerd/certs.d/" \
    || die "cannot write the registry hosts of node $n"
done
rm -rf "$hosts"
# flannel as hack/cluster/up.sh applies it: the pod subnet of the configs (KIND_POD_SUBNET), the apiserver at the
# control plane's address on the kind network (flannel runs before kube-proxy's Service rules).
cp_ip=$(kind_podman inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$KIND_CLUSTER-control-plane")
[ -n "$cp_ip" ] || die "no address for $KIND_CLUSTER-control-plane"
sed -e "s#POD_SUBNET#${KIND_POD_SUBNET:-10.244.0.0/16}#" -e "s#API_HOST#$cp_ip#" "$KTS_ROOT/manifests/addons/kube-flannel.yaml" \
  | kctl apply -f - >/dev/null || die "cannot apply flannel"
kctl wait --for=condition=Ready nodes --all --timeout=180s >/dev/null || die "nodes not Ready: $(kctl get nodes --no-headers | tr '\n' ';')"
log "kind cluster $KIND_CLUSTER ready in $((SECONDS - t0))s: $(kctl get nodes --no-headers | awk '{printf "%s %s; ", $1, $2}')"
log "kubectl --kubeconfig ${KIND_KUBECONFIG#"$KTS_ROOT"/} get nodes"

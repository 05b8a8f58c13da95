#!/usr/bin/env bash
# kind (sigs.k8s.io/kind at KIND_VERSION, built from the Go module proxy) with the podman provider
# set up for this machine (hack/kind/lib.sh): `hack/kind/kind.sh create cluster --config
# manifests/kind/cluster.yaml`, `hack/kind/kind.sh delete cluster`, any other kind command.
source "$(dirname "$0")/../lib.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
kind_setup
mkdir -p "$(dirname "$KIND_KUBECONFIG")"
export KIND_EXPERIMENTAL_PROVIDER=podman CONTAINERS_CONF="$KIND_CONTAINERS_CONF" KUBECONFIG="$KIND_KUBECONFIG"
exec "$KIND_BIN" "$@"

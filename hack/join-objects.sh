#!/usr/bin/env bash
# Publishes what a joining node needs, with the kubeadm of the pinned release, as
# `kubeadm init` would: a bootstrap token (Secret) with kubeadm's RBAC for TLS bootstrap
# and CSR auto-approval, kube-public/cluster-info (signed by the bootstrapsigner
# controller), and the kubeadm-config and kubelet-config ConfigMaps. Then writes
# _output/local/bootstrap-kubelet.conf, the node's bootstrap kubeconfig.
source "$(dirname "$0")/lib.sh"

token_file="$LOCAL/bootstrap-token"
if [ ! -s "$token_file" ]; then
  id=$(openssl rand -hex 3); secret=$(openssl rand -hex 8)
  echo "$id.$secret" > "$token_file"; chmod 600 "$token_file"
fi
token=$(cat "$token_file")

cfg="$LOCAL/kubeadm.yaml"
cat > "$cfg" <<YAML
# Written by hack/join-objects.sh for kubeadm's init phases; edits are overwritten.
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: "$token"
  ttl: 24h0m0s
  groups: [system:bootstrappers:kubeadm:default-node-token]
  usages: [signing, authentication]
localAPIEndpoint:
  advertiseAddress: $KTS_IP
  bindPort: 6443
nodeRegistration:
  criSocket: unix://$CONTAINERD_SOCK
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $KUBE_VERSION
controlPlaneEndpoint: $KTS_IP:6443
certificatesDir: $PKI
networking:
  podSubnet: $CLUSTER_CIDR
  serviceSubnet: $SERVICE_CIDR
  dnsDomain: cluster.local
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
staticPodPath: /etc/kubernetes/manifests
YAML

kubeadm=("$BIN/kubeadm" --kubeconfig "$LOCAL/admin.kubeconfig")
"${kubeadm[@]}" init phase bootstrap-token --config "$cfg" --skip-token-print >"$LOGS/kubeadm.log" 2>&1 \
  || die "kubeadm init phase bootstrap-token failed (see $LOGS/kubeadm.log)"
"${kubeadm[@]}" init phase upload-config all --config "$cfg" >>"$LOGS/kubeadm.log" 2>&1 \
  || die "kubeadm init phase upload-config failed (see $LOGS/kubeadm.log)"

write_kubeconfig "$LOCAL/bootstrap-kubelet.conf" tls-bootstrap-token-user "token: $token"
log "join objects published (bootstrap token ${token%%.*}, cluster-info, kubeadm-config, kubelet-config)"

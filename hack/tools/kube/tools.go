//go:build tools

// Pins the command packages hack/build-control-plane.sh (and hack/build-gcp-credential-provider.sh)
// builds, so go.sum lists them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubeadm"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/test/e2e_node/plugins/gcp-credential-provider"
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Tool module: builds the flannel CNI plugin for the flannel-cni-plugin image of a kubeadm
// cluster. Upstream ships it from github.com/flannel-io/cni-plugin, which the Go module
// proxy these machines use does not serve (403 for every version); the same plugin lived in
// github.com/containernetworking/plugins (plugins/meta/flannel) until v0.9.1, pinned in
// hack/versions.env. It speaks CNI up to 0.4.0, so flannel's conflist must say so.
module kubelet-ts/hack/tools/cni-plugins

go 1.26.0

require github.com/containernetworking/plugins v0.9.1

require (
	github.com/Microsoft/go-winio v0.4.11 // indirect
	github.com/Microsoft/hcsshim v0.8.6 // indirect
	github.com/buger/jsonparser v0.0.0-20180808090653-f4dd9f5a6b44 // indirect
	github.com/containernetworking/cni v0.8.1 // indirect
	github.com/sirupsen/logrus v1.0.6 // indirect
	golang.org/x/crypto v0.0.0-20200622213623-75b288015ac9 // indirect
	golang.org/x/sys v0.0.0-20201117170446-d9b008d0a637 // indirect
)

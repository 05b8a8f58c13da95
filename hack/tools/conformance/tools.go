//go:build tools

// Pins the packages hack/build-conformance.sh builds (the upstream e2e test binaries,
// cluster and node, and the binaries of the test images of the same release), so go.sum lists them.
package tools

import (
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/e2e_node"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/kubernetes/test/images/sample-device-plugin"
	_ "github.com/onsi/ginkgo/v2/ginkgo"
)

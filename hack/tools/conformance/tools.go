//go:build tools

// Pins the packages hack/build-conformance.sh builds (the upstream e2e test binaries,
// cluster and node, the binaries of the test images of the same release, and the DRA test driver
// the cluster's DRA test deploys), so go.sum lists them.
package tools

import (
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/e2e_node"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/kubernetes/test/images/sample-device-plugin"
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver"
	_ "github.com/onsi/ginkgo/v2/ginkgo"
)

//go:build tools

// Package tools pins kind (sigs.k8s.io/kind) for hack/kind/kind.sh.
package tools

import _ "sigs.k8s.io/kind"

//go:build tools

// Pins the command hack/build-addons.sh builds, so go.sum lists what it needs.
package tools

import _ "github.com/distribution/distribution/v3/cmd/registry"

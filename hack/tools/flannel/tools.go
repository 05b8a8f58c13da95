//go:build tools

// Pins the commands hack/build-addons.sh builds, so go.sum lists what they need.
package tools

import (
	_ "github.com/flannel-io/flannel"
	_ "github.com/flannel-io/flannel/cmd/install_conf"
)

#!/usr/bin/env bash
# build-gcp-credential-provider.sh: builds the pinned release's own test credential provider
# (k8s.io/kubernetes/test/e2e_node/plugins/gcp-credential-provider, the plugin upstream's node
# e2e runs) through the Go module proxy, in hack/tools/kube's module, into
# _output/bin/gcp-credential-provider. src/images/credential-provider/gcp-plugin.test.ts runs
# kubelet-ts's exec of it when it is there. (It asks GCE's metadata server for the credentials,
# which no machine here reaches: the tests check the request it decodes, not its answer.)
source "$(dirname "$0")/lib.sh"
mkdir -p "$BIN"
(cd "$KTS_ROOT/hack/tools/kube" && go build -trimpath -o "$BIN/gcp-credential-provider" \
  k8s.io/kubernetes/test/e2e_node/plugins/gcp-credential-provider) \
  || die "cannot build gcp-credential-provider $KUBE_VERSION (hack/tools/kube)"
log "built $BIN/gcp-credential-provider ($KUBE_VERSION)"

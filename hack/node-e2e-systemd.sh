#!/usr/bin/env bash
# Upstream's node e2e tests (e2e_node.test of the pinned release) run as upstream's node e2e CI
# runs them on a VM (test/e2e_node/remote/node_e2e.go), on a systemd node of ours
# (hack/cluster/systemd.sh: systemd as PID 1, containerd 2 with SystemdCgroup = true, no kubelet):
# a workspace holding e2e_node.test, `kubelet` (here kubelet-ts) and the release's test credential
# provider (hack/build-gcp-credential-provider.sh, also as gcp-credential-provider-with-sa), and
# --start-services: the test process runs its own etcd and apiserver and starts the kubelet as the
# transient unit kubelet-<timestamp>.service, which the tests that change the kubelet's
# configuration (tempSetCurrentKubeletConfig) stop and start through systemctl. The kubelet flags
# are node_e2e.go's prependCredentialProviderFlag ones. Unlike hack/node-conformance.sh (against
# the stack's kubelet, no systemd), this reaches the [Serial] and [Disruptive] tests that restart
# the kubelet.
#   FOCUS=regex SKIP=regex  the selection (default: the credential provider and
#                           ensure-secret-pulled-images tests of issue 45)
#   SD_NAME=kts-s2          the systemd node: added when missing, removed after unless KEEP=1
#   OUT=dir                 junit.xml, e2e.log and the kubelet's log (default _output/node-e2e-systemd)
OUTDIR="${OUT:-}"  # (before lib.sh, which sets OUT to _output)
source "$(dirname "$0")/cluster/lib.sh"
# shellcheck source=cluster/systemd.sh
source "$(dirname "$0")/cluster/systemd.sh"
need_root

FOCUS="${FOCUS:-Ensure Credential Pulled Images|should be able to pull from private registry with credential provider}"
SKIP="${SKIP:-}"
SD_NAME="${SD_NAME:-kts-s2}"
OUTDIR="${OUTDIR:-$OUT/node-e2e-systemd}"
is_systemd_node "$SD_NAME" || die "SD_NAME=$SD_NAME: a systemd node is named kts-sN (N 1..9)"
WS=/var/lib/node-e2e  # the workspace in the node (its /tmp is noexec-free tmpfs, but small)

# e2e_node.test, and what the --conformance images below are made of (hack/build-images.sh).
bash "$KTS_ROOT/hack/build-conformance.sh" e2e_node.test agnhost nnp sample-apiserver
[ -x "$BIN/gcp-credential-provider" ] || bash "$KTS_ROOT/hack/build-gcp-credential-provider.sh"
[ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"

# The tests' images (agnhost is also their fake registry), as hack/node-conformance.sh has them;
# not the cluster's: the node joins no cluster (the test process runs its own etcd and apiserver).
if podman container exists "$SD_NAME" 2>/dev/null; then
  bash "$KTS_ROOT/hack/cluster/node.sh" images "$SD_NAME" --conformance
else
  SD_IMAGES=--conformance bash "$KTS_ROOT/hack/cluster/node.sh" add "$SD_NAME"
fi
[ "${KEEP:-0}" = 1 ] || trap 'bash "$KTS_ROOT/hack/cluster/node.sh" remove "$SD_NAME" >/dev/null 2>&1 || true' EXIT
in_sd() { sd_exec "$SD_NAME" "$@"; }

log "workspace $SD_NAME:$WS"
# What a run cut short left: its test process and its kubelet unit (they hold the ports).
in_sd sh -c 'pkill -x e2e_node.test; systemctl stop "kubelet-*.service"; systemctl reset-failed "kubelet-*.service"' 2>/dev/null || true
in_sd sh -c "rm -rf $WS && mkdir -p $WS/results"
for b in e2e_node.test gcp-credential-provider; do podman cp "$(readlink -f "$BIN/$b")" "$SD_NAME:$WS/$b"; done
in_sd ln -s gcp-credential-provider "$WS/gcp-credential-provider-with-sa"
# The kubelet the tests start: kubelet-ts (the node's /usr/bin/kubelet-ts runs the repo's build).
in_sd sh -c "printf '#!/bin/sh\nexec /usr/bin/kubelet-ts \"\$@\"\n' > $WS/kubelet && chmod 755 $WS/kubelet"
# The tests restart the kubelet with `sudo systemctl`; the node runs everything as root.
in_sd sh -c "printf '#!/bin/sh\nexec \"\$@\"\n' > /usr/local/bin/sudo && chmod 755 /usr/local/bin/sudo"
# The plugins' configuration as node_e2e.go's configureCredentialProvider writes it.
in_sd sh -c "cat > $WS/credential-provider.yaml" <<'YAML'
kind: CredentialProviderConfig
apiVersion: kubelet.config.k8s.io/v1
providers:
- name: gcp-credential-provider
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  matchImages: ["gcr.io", "*.gcr.io", "container.cloud.google.com", "*.pkg.dev"]
  defaultCacheDuration: 1m
- name: gcp-credential-provider-with-sa
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  matchImages: ["gcr.io", "*.gcr.io", "container.cloud.google.com", "*.pkg.dev"]
  defaultCacheDuration: 1m
  tokenAttributes:
    serviceAccountTokenAudience: test-audience
    cacheType: Token
    requireServiceAccount: true
    requiredServiceAccountAnnotationKeys: ["domain.io/identity-id", "domain.io/identity-type"]
  env:
  - name: PLUGIN_MODE
    value: serviceaccount
YAML
# The pod network node_e2e.go's setupCNI gives the node: a bridge on the node e2e kubelet's
# podCIDR (its default configuration's 10.100.0.0/24).
in_sd sh -c 'cat > /etc/cni/net.d/10-node-e2e.conflist' <<'JSON'
{"cniVersion": "1.0.0", "name": "node-e2e", "plugins": [
  {"type": "bridge", "bridge": "cbr0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.100.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON

# On a cgroup v1 host (this machine) the kubelet refuses to start by default, upstream's too.
cgroup_v1=""; [ -f /sys/fs/cgroup/cgroup.controllers ] || cgroup_v1=--kubelet-flags=--fail-cgroupv1=false
log "running node e2e on $SD_NAME (focus: $FOCUS${SKIP:+; skip: $SKIP})"
start=$SECONDS
set +e
in_sd sh -c "cd $WS && ./e2e_node.test --ginkgo.focus=\"\$1\" --ginkgo.skip=\"\$2\" --ginkgo.no-color --ginkgo.timeout=2h \
  --start-services=true --prepull-images=false --node-name=$SD_NAME --report-dir=$WS/results \
  --container-runtime-endpoint=unix:///run/containerd/containerd.sock \
  --kubelet-flags=--feature-gates=KubeletServiceAccountTokenForCredentialProviders=true,KubeletEnsureSecretPulledImages=true \
  --kubelet-flags=--image-credential-provider-config=$WS/credential-provider.yaml \
  --kubelet-flags=--image-credential-provider-bin-dir=$WS $cgroup_v1" sh "$FOCUS" "${SKIP:-^$}" 2>&1 | tee "$OUTDIR.log"
rc=${PIPESTATUS[0]}
set -e
rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"; mv "$OUTDIR.log" "$OUTDIR/e2e.log"
podman cp "$SD_NAME:$WS/results/." "$OUTDIR/" || log "no results in $SD_NAME:$WS/results"
log "node e2e finished in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s (exit $rc): $OUTDIR"
exit "$rc"

#!/usr/bin/env bash
# The CSI hostpath driver on the local cluster of kubelet-ts nodes, deployed as its users deploy
# it (docs/csi.md): what csi-driver-host-path's deploy/kubernetes-latest/deploy.sh applies,
# read at run time from the released tarball in ../shared/third-party and from the sidecars'
# modules in the Go module cache (no copy of their yaml lives in this repo):
#   - the VolumeSnapshot CRDs (external-snapshotter/client/v8 config/crd) and the
#     snapshot-controller (external-snapshotter/v8 deploy/kubernetes/snapshot-controller), which
#     deploy.sh expects to be there, as the external-snapshotter README installs them;
#   - each sidecar's RBAC (its deploy/kubernetes/rbac.yaml, which deploy.sh downloads from
#     GitHub at the tag its manifest names: here from the module that was built), with the
#     labels deploy.sh's kustomization adds;
#   - deploy/kubernetes-latest/hostpath/*.yaml, unchanged (the images under the tags they name,
#     hack/build-images.sh --csi), into the default namespace as deploy.sh does;
#   - the StorageClass csi-hostpath-sc (examples/csi-storageclass.yaml).
#   hack/cluster/csi-hostpath.sh apply    builds and pushes the images (hack/build-csi.sh), applies, waits
#   hack/cluster/csi-hostpath.sh delete   deletes all of it (the volumes' claims first, by their users)
source "$(dirname "$0")/lib.sh"
need_root
# CLUSTER=kind: on the kind cluster (make kind) instead, whose nodes pull the images through
# their mirror of the stack's registry (hack/conformance.sh SUITE=storage CLUSTER=kind).
if [ "${CLUSTER:-local}" = kind ]; then
  source "$KTS_ROOT/hack/kind/lib.sh"
  CLUSTER_KUBECONFIG=$KIND_KUBECONFIG
fi
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
CSI=github.com/kubernetes-csi
LABELS=(app.kubernetes.io/instance=hostpath.csi.k8s.io app.kubernetes.io/part-of=csi-driver-host-path)
[ -f "$CLUSTER_KUBECONFIG" ] || die "no cluster ($CLUSTER_KUBECONFIG is missing: hack/cluster/up.sh)"
apt_install jq

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# module_dir MODULE VERSION: the module's directory in the Go module cache (downloaded when missing).
module_dir() { go mod download -json "$1@$2" | jq -r .Dir; }
# from_tarball NAME VERSION PATH...: PATHs of the released tarball, extracted under $W/NAME.
from_tarball() {
  local name=$1 version=$2 tp; shift 2
  tp=$(bash "$KTS_ROOT/hack/build-csi.sh" --print-third-party) || die "no ../shared/third-party"
  mkdir -p "$W/$name"
  tar -xzf "$tp/$name-$version.tar.gz" -C "$W/$name" --strip-components=1 "${@/#/$name-$version/}" \
    || die "cannot extract $* from $tp/$name-$version.tar.gz"
}
read_sources() {
  from_tarball csi-driver-host-path "$CSI_HOSTPATH_VERSION" deploy examples/csi-storageclass.yaml
  from_tarball external-health-monitor "$CSI_HEALTH_MONITOR_VERSION" deploy/kubernetes/external-health-monitor-controller/rbac.yaml
  HOSTPATH="$W/csi-driver-host-path/deploy/kubernetes-latest/hostpath"
  [ -d "$HOSTPATH" ] || die "no deploy/kubernetes-latest/hostpath in csi-driver-host-path $CSI_HOSTPATH_VERSION"
  SNAP=$(module_dir "$CSI/external-snapshotter/v8" "$CSI_SNAPSHOTTER_VERSION") || die "go mod download external-snapshotter failed"
  SNAP_CLIENT=$(module_dir "$CSI/external-snapshotter/client/v8" "$CSI_SNAPSHOTTER_VERSION") || die "go mod download external-snapshotter/client failed"
  # The RBAC of each sidecar the plugin's StatefulSet runs, from the version that was built.
  RBAC=(
    "$(module_dir "$CSI/external-provisioner/v6" "$CSI_PROVISIONER_VERSION")/deploy/kubernetes/rbac.yaml"
    "$(module_dir "$CSI/external-attacher/v4" "$CSI_ATTACHER_VERSION")/deploy/kubernetes/rbac.yaml"
    "$SNAP/deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml"
    "$(module_dir "$CSI/external-resizer/v2" "$CSI_RESIZER_VERSION")/deploy/kubernetes/rbac.yaml"
    "$W/external-health-monitor/deploy/kubernetes/external-health-monitor-controller/rbac.yaml"
  )
  local f; for f in "${RBAC[@]}"; do [ -f "$f" ] || die "$f is missing"; done
}

# apply_rbac FILE: as deploy.sh applies it: a kustomization adding the driver's labels (deploy.sh
# says commonLabels, which kubectl's kustomize now warns about; `labels` with includeSelectors is
# the same edit).
apply_rbac() {
  local d; d=$(mktemp -d -p "$W")
  cp "$1" "$d/rbac.yaml"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nlabels:\n- includeSelectors: true\n  pairs:\n    %s\n    %s\nresources:\n- ./rbac.yaml\n' \
    "${LABELS[0]/=/: }" "${LABELS[1]/=/: }" > "$d/kustomization.yaml"
  ckubectl apply -k "$d" >/dev/null || die "kubectl apply of $1 failed"
}

# images_pushed: every image the manifests name is in the registry the nodes pull from.
images_pushed() {
  local img
  for img in $(sed -n 's/^ *image: *\([^ #]*\).*/\1/p' "$HOSTPATH"/*.yaml \
      "$SNAP/deploy/kubernetes/snapshot-controller/setup-snapshot-controller.yaml" | sort -u); do
    curl -sfI --max-time 5 -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
      "http://$REGISTRY/v2/${img%:*}/manifests/${img##*:}" >/dev/null || { log "the registry has no $img"; return 1; }
  done
}

apply() {
  local t0=$SECONDS
  # The binaries, then their images: imported into the control-plane node's containerd (for
  # kind, the stack's) and pushed to the registry, from which every node pulls them.
  if [ "${CLUSTER:-local}" = kind ]; then
    "$KTS_ROOT/hack/build-csi.sh"
  else
    "$KTS_ROOT/hack/build-csi.sh" --no-images
    "$KTS_ROOT/hack/cluster/node.sh" images "$CP_NODE" --csi
  fi
  read_sources
  images_pushed || die "the images the driver's manifests name are not all in the registry $REGISTRY (see above)"
  log "applying the VolumeSnapshot CRDs and the snapshot-controller (external-snapshotter $CSI_SNAPSHOTTER_VERSION)"
  ckubectl apply -k "$SNAP_CLIENT/config/crd" >/dev/null || die "applying the VolumeSnapshot CRDs failed"
  ckubectl wait --for condition=established --timeout=60s crd/volumesnapshotclasses.snapshot.storage.k8s.io \
    crd/volumesnapshots.snapshot.storage.k8s.io crd/volumesnapshotcontents.snapshot.storage.k8s.io >/dev/null
  ckubectl apply -k "$SNAP/deploy/kubernetes/snapshot-controller" >/dev/null || die "applying the snapshot-controller failed"
  log "applying the sidecars' RBAC"
  local f; for f in "${RBAC[@]}"; do apply_rbac "$f"; done
  log "applying csi-driver-host-path $CSI_HOSTPATH_VERSION deploy/kubernetes-latest/hostpath"
  for f in "$HOSTPATH"/*.yaml; do
    ckubectl apply -f "$f" >/dev/null || die "kubectl apply -f hostpath/${f##*/} failed"
  done
  ckubectl apply -f "$W/csi-driver-host-path/examples/csi-storageclass.yaml" >/dev/null || die "applying csi-hostpath-sc failed"
  ckubectl -n kube-system rollout status deploy/snapshot-controller --timeout=180s >/dev/null \
    || die "the snapshot-controller did not roll out (kubectl -n kube-system get pods)"
  ckubectl rollout status statefulset/csi-hostpathplugin --timeout=180s >/dev/null \
    || die "csi-hostpathplugin did not roll out (kubectl get pods -l ${LABELS[0]})"
  local node; node=$(ckubectl get pod csi-hostpathplugin-0 -o jsonpath='{.spec.nodeName}')
  log "CSI hostpath driver running on $node, StorageClass csi-hostpath-sc ($((SECONDS - t0))s)"
}

delete() {
  read_sources
  local f
  ckubectl delete -f "$W/csi-driver-host-path/examples/csi-storageclass.yaml" --ignore-not-found >/dev/null
  local files=("$HOSTPATH"/*.yaml) i
  for ((i = ${#files[@]} - 1; i >= 0; i--)); do ckubectl delete -f "${files[$i]}" --ignore-not-found --wait=true >/dev/null; done
  for f in "${RBAC[@]}"; do ckubectl delete -f "$f" --ignore-not-found >/dev/null; done
  ckubectl delete -k "$SNAP/deploy/kubernetes/snapshot-controller" --ignore-not-found >/dev/null
  ckubectl delete -k "$SNAP_CLIENT/config/crd" --ignore-not-found >/dev/null
  log "CSI hostpath driver deleted"
}

case "${1:-}" in
  apply) apply ;;
  delete) delete ;;
  *) die "usage: $0 apply|delete" ;;
esac

#!/usr/bin/env bash
# Builds a kind node image here, with no registry (docs/kind.md): kind's `kind build node-image`
# downloads its base image and every image it preloads, which this machine cannot.
#   hack/kind/node-image.sh             kubelet-ts as /usr/bin/kubelet -> localhost/kts-kind-node:KUBE_VERSION
#   hack/kind/node-image.sh --upstream  the upstream kubelet of the pin (hack/build-control-plane.sh
#                                       kubelet) -> localhost/kts-kind-node-upstream:KUBE_VERSION, to compare
# Does nothing when the image is there and none of its inputs changed (its label kts.kind.key).
# What it is made of:
#  - the Debian 12 root filesystem hack/cluster/systemd.sh debootstraps (cached), with the packages
#    kind's base image installs beyond it (apt-get in a chroot, cached as its own root filesystem);
#  - kind's base image files (images/base/files of the kind module the Go module proxy serves:
#    the entrypoint, the kubelet and containerd units, kubeadm's and kind's drop-ins, the
#    containerd config, /kind/bin), laid out and enabled as kind's Dockerfile does;
#  - containerd 2, runc and crictl from hack/build-runtime.sh's cache, Debian's CNI plugins in
#    /opt/cni/bin, kubeadm and kubectl of the pin, kubelet-ts's package (hack/package.sh) installed
#    with apt, which makes /usr/bin/kubelet kubelet-ts;
#  - the images the node needs, in containerd's store under /var/lib/containerd as kind preloads
#    them (ctr import --no-unpack): the control plane's at the tags the pinned kubeadm asks for,
#    pause, CoreDNS, kube-proxy, flannel and its CNI plugin, local-path-provisioner, from the
#    tarballs hack/build-images.sh --cluster caches;
#  - /kind/version, which kind reads.
# What this machine needs changed in kind's files: containerd's restrict_oom_score_adj = true and
# Limit{NOFILE,NPROC} within the container's hard limits (no CAP_SYS_RESOURCE here), sandbox_image
# the pinned kubeadm's pause.
source "$(dirname "$0")/../lib.sh"
source "$KTS_ROOT/hack/cluster/systemd.sh"
source "$KTS_ROOT/hack/kind/lib.sh"
need_root
KUBELET=kubelet-ts
case "${1:-}" in
  "") ;;
  --upstream) KUBELET=upstream; KIND_NODE_IMAGE=$KIND_NODE_IMAGE_UPSTREAM ;;
  *) die "usage: $0 [--upstream]" ;;
esac
# One build of each image at a time: `make test` builds them in the background (the Makefile's
# E2E_BG_BUILD) while kind.test.ts may ask for them; the second waits, then finds the image up to
# date. (fd 8: kind_rootfs's build_lock holds fd 9.)
exec 8>"$KTS_CACHE/kind-node-image-$KUBELET.lock"
flock -n 8 || { log "waiting for the $KIND_NODE_IMAGE build already running"; flock 8; }

KIND_CACHE="$KTS_CACHE/kind-node-bookworm"
KIND_ROOTFS="$KIND_CACHE/rootfs"
# What kind's base image installs (its Dockerfile) that hack/cluster/systemd.sh's root filesystem
# lacks; open-iscsi, nfs-common and fuse-overlayfs are left out (no iSCSI or NFS here, rootful).
KIND_PACKAGES=(conntrack iptables nftables iproute2 ethtool util-linux mount kmod libseccomp2 pigz e2fsprogs
  bash ca-certificates curl jq procps socat)
IMAGES="$KTS_CACHE/images"
HEX16=$(printf '[0-9a-f]%.0s' $(seq 16))
t_start=$SECONDS

[ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
KUBE_BIN="$KTS_CACHE/kube-$KUBE_VERSION/bin"
for b in kubeadm kubectl; do [ -x "$KUBE_BIN/$b" ] || die "$KUBE_BIN/$b is missing: run hack/build-control-plane.sh"; done
[ -x "$CONTAINERD2_BIN/containerd" ] && [ -x "$RUNC2_BIN/runc" ] || "$KTS_ROOT/hack/build-runtime.sh" || die "cannot build containerd 2"
CRICTL="$KTS_CACHE/crictl-$CRICTL_VERSION/crictl"
[ -x "$CRICTL" ] || die "$CRICTL is missing: run hack/install-host-deps.sh"

# image_tar BASE: the tarball hack/build-images.sh keeps for that image (one per name).
image_tar() {
  local t; t=$(compgen -G "$IMAGES/$1-$HEX16.tar" | head -1 || true)
  [ -n "$t" ] || die "no $IMAGES/$1-*.tar: run hack/build-images.sh --cluster (make up builds them)"
  echo "$t"
}
tars=()
for b in cluster-kube-apiserver cluster-kube-controller-manager cluster-kube-scheduler cluster-kube-proxy cluster-etcd \
  cluster-coredns cluster-flannel cluster-flannel-cni-plugin cluster-local-path-provisioner pause busybox; do
  tars+=("$(image_tar "$b")")
done

if [ "$KUBELET" = upstream ]; then
  [ -x "$KUBE_BIN/kubelet" ] || "$KTS_ROOT/hack/build-control-plane.sh" kubelet || die "cannot build the upstream kubelet"
else
  DEB=$("$KTS_ROOT/hack/package.sh") || die "cannot build the kubelet-ts package"
fi

sd_install_podman
kind_install
KIND_SRC=$(kind_module_dir)/images/base/files
[ -f "$KIND_SRC/usr/local/bin/entrypoint" ] || die "kind's base image files are not in $KIND_SRC"

# The image's key: everything it is made of (files by content where small, by path, size and
# time where large).
key=$( {
  cat "$0" "$KTS_ROOT/hack/kind/lib.sh" "$KTS_ROOT/manifests/addons/local-path-storage.yaml"
  echo "$KUBELET $KIND_VERSION $KUBE_VERSION ${KIND_PACKAGES[*]} $(cat "$SD_CACHE/rootfs.done" 2>/dev/null; stat -c %Y "$SD_CACHE/rootfs.done" 2>/dev/null)"
  (cd "$KIND_SRC" && find . -type f | sort | xargs cat)
  [ "$KUBELET" = upstream ] || sha256sum "$DEB"
  stat -L -c '%n %s %Y' "${tars[@]}" "$KUBE_BIN"/{kubeadm,kubectl} "$CONTAINERD2_BIN"/* "$RUNC2_BIN/runc" "$CRICTL"
  [ "$KUBELET" = kubelet-ts ] || stat -L -c '%n %s %Y' "$KUBE_BIN/kubelet"
} | sha256sum | cut -c1-16)
if [ "$(podman image inspect -f '{{index .Labels "kts.kind.key"}}' "$KIND_NODE_IMAGE" 2>/dev/null)" = "$key" ]; then
  log "node image $KIND_NODE_IMAGE is up to date"
  exit 0
fi

# --- the root filesystem: systemd.sh's, with kind's packages (cached) ---------------------------
kind_rootfs() {
  local want; want=$(echo "${KIND_PACKAGES[*]}" | sha256sum | cut -c1-16)
  [ "$(cat "$KIND_CACHE/rootfs.done" 2>/dev/null)" = "$want" ] && [ -x "$KIND_ROOTFS/sbin/init" ] && return 0
  mkdir -p "$KIND_CACHE"
  build_lock "$SD_CACHE.lock" "systemd node root filesystem"
  sd_rootfs
  log "kind's packages into a copy of $SD_ROOTFS (log: $KIND_CACHE/apt.log)"
  local t0=$SECONDS
  rm -rf --one-file-system "$KIND_ROOTFS" && cp -a "$SD_ROOTFS" "$KIND_ROOTFS"
  cp -L /etc/resolv.conf "$KIND_ROOTFS/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' > "$KIND_ROOTFS/usr/sbin/policy-rc.d"; chmod +x "$KIND_ROOTFS/usr/sbin/policy-rc.d"
  # /proc for dpkg's scripts, in a mount namespace of our own: the host sees no mount.
  # shellcheck disable=SC2016
  unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" && chroot "$1" sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $2 && apt-get clean"' \
    sh "$KIND_ROOTFS" "${KIND_PACKAGES[*]}" > "$KIND_CACHE/apt.log" 2>&1 || die "apt-get install in $KIND_ROOTFS failed (see $KIND_CACHE/apt.log)"
  rm -rf "$KIND_ROOTFS"/var/lib/apt/lists/* "$KIND_ROOTFS/etc/resolv.conf"
  log "kind's packages took $((SECONDS - t0))s"
  echo "$want" > "$KIND_CACHE/rootfs.done"
}
kind_rootfs

# --- the image's tree ---------------------------------------------------------------------------
STAGE="$KIND_CACHE/stage"
rm -rf --one-file-system "$STAGE"
mkdir -p "$STAGE"
R="$STAGE/rootfs"
cp -a "$KIND_ROOTFS" "$R"
# put SRC DEST MODE: a file, replacing what is there (a symlink into the build cache included:
# never written through).
put() { rm -f "$R$2"; mkdir -p "$(dirname "$R$2")"; cp -L "$1" "$R$2"; chmod "$3" "$R$2"; }

# kind's base image files, as its Dockerfile copies them.
for f in "$KIND_SRC"/usr/local/bin/*; do put "$f" "/usr/local/bin/${f##*/}" 0755; done
(cd "$KIND_SRC" && find kind -type f) | while read -r f; do put "$KIND_SRC/$f" "/$f" 0644; done
for f in "$KIND_SRC"/kind/bin/*; do chmod 0755 "$R/kind/bin/${f##*/}"; done
chmod 0755 "$R/kind" "$R/kind/bin"
for d in etc etc/containerd etc/default etc/sysctl.d etc/systemd/system etc/systemd/system/kubelet.service.d; do
  for f in "$KIND_SRC/$d"/*; do [ -f "$f" ] && put "$f" "/$d/${f##*/}" 0644; done
done
rm -rf "$R/etc/systemd/system/containerd.service.d"
# Its RUN steps (packages aside).
find "$R/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
rm -f "$R"/lib/systemd/system/multi-user.target.wants/* "$R"/etc/systemd/system/*.wants/* \
  "$R"/lib/systemd/system/local-fs.target.wants/* "$R"/lib/systemd/system/sockets.target.wants/*udev* \
  "$R"/lib/systemd/system/sockets.target.wants/*initctl* "$R"/lib/systemd/system/basic.target.wants/*
grep -q '^ReadKMsg=no' "$R/etc/systemd/journald.conf" || echo "ReadKMsg=no" >> "$R/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$R/sbin/init"
systemctl --root="$R" enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1 \
  || die "systemctl --root enable failed"
systemctl --root="$R" mask systemd-binfmt.service >/dev/null 2>&1
mkdir -p "$R/etc/kubernetes/manifests"
rm -f "$R/usr/sbin/policy-rc.d"

# containerd 2, runc, crictl, as kind's build stages install theirs.
for b in containerd ctr containerd-shim-runc-v2; do put "$CONTAINERD2_BIN/$b" "/usr/local/bin/$b" 0755; done
put "$RUNC2_BIN/runc" /usr/local/sbin/runc 0755
put "$CRICTL" /usr/local/bin/crictl 0755
"$CONTAINERD2_BIN/ctr" oci spec \
  | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
  | jq 'del(.process.rlimits)' > "$R/etc/containerd/cri-base.json"
# This machine: no CAP_SYS_RESOURCE, so runc may not lower oom_score_adj and systemd may not raise
# a limit above the container's hard one; the sandbox image is the pinned kubeadm's pause.
PAUSE=$("$KUBE_BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION" 2>/dev/null | grep "/pause:") || die "kubeadm config images list printed no pause image"
sed -i -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
  -e "s#sandbox_image = .*#sandbox_image = \"$PAUSE\"#" "$R/etc/containerd/config.toml"
sed -i -e 's/^LimitNOFILE=infinity/LimitNOFILE=16384/' -e 's/^LimitNPROC=infinity/LimitNPROC=8192/' \
  "$R/etc/systemd/system/containerd.service"
# The CNI plugins kind's image has (host-local, loopback, ptp, portmap) and flannel's bridge, Debian's.
for p in host-local loopback ptp portmap bridge; do put "$R/usr/lib/cni/$p" "/opt/cni/bin/$p" 0755; done

# kubeadm and kubectl of the pin; kubelet-ts as /usr/bin/kubelet (kind's unit and drop-in run that).
put "$KUBE_BIN/kubeadm" /usr/bin/kubeadm 0755
put "$KUBE_BIN/kubectl" /usr/bin/kubectl 0755
rm -f "$R/usr/bin/kubelet"
if [ "$KUBELET" = upstream ]; then
  put "$KUBE_BIN/kubelet" /usr/bin/kubelet 0755
else
  # kubelet-ts as a user installs it: its package (hack/package.sh), `apt install ./kubelet-ts_*.deb`
  # in the image's root (its /proc in a mount namespace of our own); /usr/bin/kubelet, which kind's
  # unit runs, is the package's alternative.
  cp "$DEB" "$R/tmp/"
  # shellcheck disable=SC2016
  unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" && chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/tmp/$2"' \
    sh "$R" "${DEB##*/}" > "$KIND_CACHE/apt-kubelet-ts.log" 2>&1 || die "apt install ./${DEB##*/} in the image failed (see $KIND_CACHE/apt-kubelet-ts.log)"
  rm -f "$R/tmp/${DEB##*/}"
  [ "$(readlink -f "$R/usr/bin/kubelet")" = /usr/bin/kubelet-ts ] || [ "$(chroot "$R" readlink -f /usr/bin/kubelet)" = /usr/bin/kubelet-ts ] \
    || die "the package did not make /usr/bin/kubelet kubelet-ts"
fi

# kind reads the Kubernetes version here; the default StorageClass kind installs ("standard") is the
# local-path-provisioner hack/build-images.sh builds, as kind's own image has it.
printf '%s' "$KUBE_VERSION" > "$R/kind/version"
mkdir -p "$R/kind/manifests"
# kind's own manifest marks it the default class; the helper pod runs busybox:1.36 (preloaded).
sed -e 's/^  name: local-path$/  name: standard\n  annotations:\n    storageclass.kubernetes.io\/is-default-class: "true"/' \
  "$KTS_ROOT/manifests/addons/local-path-storage.yaml" > "$R/kind/manifests/default-storage.yaml"
grep -q 'is-default-class' "$R/kind/manifests/default-storage.yaml" || die "no StorageClass local-path in manifests/addons/local-path-storage.yaml"

# --- the preloaded images: a containerd of the cache on the image's /var/lib/containerd ----------
# In a mount namespace of its own (hack/lib.sh foreign_containerd_pids takes a containerd of the
# host's mount namespace for a stray one), on a socket of its own, without its CRI plugins.
log "preloading ${#tars[@]} images into the image's containerd store"
t0=$SECONDS
CT="$STAGE/containerd"
mkdir -p "$CT" "$R/var/lib/containerd"
cat > "$CT/config.toml" <<TOML
version = 3
root = "$R/var/lib/containerd"
state = "$CT/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]
[grpc]
  address = "$CT/containerd.sock"
[ttrpc]
  address = "$CT/containerd.sock.ttrpc"
TOML
# etcd: hack/build-images.sh tags the etcd this repo builds with its own version; the pinned kubeadm
# asks for its default tag, which the same image gets too (kind's kubeadm config names no imageTag).
ETCD_HAVE="registry.k8s.io/etcd:${ETCD_VERSION#v}-0"
ETCD_WANT=$("$KUBE_BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION" 2>/dev/null | grep '/etcd:') \
  || die "kubeadm config images list printed no etcd image"
# shellcheck disable=SC2016
env CTRD_BIN="$CONTAINERD2_BIN" CT="$CT" ETCD_HAVE="$ETCD_HAVE" ETCD_WANT="$ETCD_WANT" unshare --mount --propagation private sh -c '
  "$1/containerd" --config "$2/config.toml" > "$2/containerd.log" 2>&1 & pid=$!
  i=0; until "$1/ctr" --address "$2/containerd.sock" version >/dev/null 2>&1; do
    i=$((i+1)); [ $i -lt 100 ] || { echo "containerd did not start" >&2; kill $pid; exit 1; }; sleep 0.1; done
  shift 2; rc=0
  for t in "$@"; do
    "$CTRD_BIN/ctr" --address "$CT/containerd.sock" -n k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack "$t" >/dev/null || { echo "import of $t failed" >&2; rc=1; break; }
  done
  [ $rc -ne 0 ] || [ "$ETCD_HAVE" = "$ETCD_WANT" ] || "$CTRD_BIN/ctr" --address "$CT/containerd.sock" -n k8s.io images tag --force "$ETCD_HAVE" "$ETCD_WANT" >/dev/null || rc=1
  [ $rc -ne 0 ] || "$CTRD_BIN/ctr" --address "$CT/containerd.sock" -n k8s.io images ls -q > "$CT/images"
  kill $pid; wait $pid; exit $rc' sh "$CONTAINERD2_BIN" "$CT" "${tars[@]}" 2>"$CT/import.log" \
  || die "preloading the images failed: $(tail -3 "$CT/import.log") (see $CT/containerd.log)"
log "preloaded in $((SECONDS - t0))s: $(grep -v '^sha256:' "$CT/images" | tr '\n' ' ')"

# --- the image --------------------------------------------------------------------------------
log "podman import -> $KIND_NODE_IMAGE"
t0=$SECONDS
old=$(podman image inspect -f '{{.Id}}' "$KIND_NODE_IMAGE" 2>/dev/null || true)
tar -C "$R" -c . | podman import -q --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
  --change 'STOPSIGNAL SIGRTMIN+3' --change 'ENV container=docker' \
  --change "LABEL kts.kind.kubelet=$KUBELET" --change "LABEL kts.kind.key=$key" - "$KIND_NODE_IMAGE" >/dev/null \
  || die "podman import of $R failed"
log "import took $((SECONDS - t0))s"
# The image it replaces, unless a container (a kind node) still uses it.
[ -z "$old" ] || podman rmi "$old" >/dev/null 2>&1 || true
rm -rf --one-file-system "$STAGE"
log "node image $KIND_NODE_IMAGE ready ($(podman image inspect -f '{{.Size}}' "$KIND_NODE_IMAGE" | numfmt --to=iec) in $((SECONDS - t_start))s)"

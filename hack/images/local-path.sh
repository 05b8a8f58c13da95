# shellcheck shell=bash
# The image of rancher/local-path-provisioner (manifests/addons/local-path-storage.yaml: the
# StorageClass local-path), from the binary hack/build-addons.sh leaves in
# $KTS_CACHE/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION/bin. Sourced by
# hack/build-images.sh once its builders are defined (cluster_image, smoke_expect,
# busybox_root, $ENV_PATH), then `local_path_images` builds and imports it.
# Named as upstream's deploy/local-path-storage.yaml names it (rancher/local-path-provisioner:
# v0.0.30, which containerd reads as docker.io/rancher/...), laid out as upstream's
# package/Dockerfile lays out its own:
#   FROM alpine; apk upgrade busybox zlib; COPY bin/local-path-provisioner-${ARCH}
#   /usr/bin/local-path-provisioner; CMD ["local-path-provisioner"]
# Here: the busybox root (alpine's shell and applets are busybox too; the static binary needs
# no zlib or libc) with the binary at /usr/bin/local-path-provisioner, and the same CMD, which
# the Deployment replaces with `local-path-provisioner --debug start --config ...`, found
# through PATH. alpine's CA certificates are left out: the provisioner reaches only the
# apiserver, through the service account's CA.
# The helper pods that make and remove each volume's directory run another image: the
# manifest points them at docker.io/library/busybox:1.36, which every set of build-images.sh has.
LOCAL_PATH_IMAGE=docker.io/rancher/local-path-provisioner:$LOCAL_PATH_PROVISIONER_VERSION

# fill_local_path ROOT BINARY: the image's root.
fill_local_path() {
  busybox_root "$1" && mkdir -p "$1/usr/bin" && install -m 755 "$2" "$1/usr/bin/local-path-provisioner"
}

# local_path_images: builds (when its inputs changed) and imports the image, and runs it once
# when freshly imported. Stops when the binary is missing: hack/build-addons.sh first.
local_path_images() {
  local bin="$KTS_CACHE/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION/bin/local-path-provisioner"
  [ -x "$bin" ] || die "$bin is missing: run hack/build-addons.sh local-path-provisioner first"
  cluster_image "$LOCAL_PATH_IMAGE" "{\"Cmd\":[\"local-path-provisioner\"],\"Env\":[\"$ENV_PATH\"]}" \
    fill_local_path "$bin"
  # The program through PATH, as the Deployment's command names it, and the shell its
  # image has (alpine's busybox).
  # shellcheck disable=SC2016  # (the container's shell expands it)
  [ -z "$imported" ] || smoke_expect "$LOCAL_PATH_IMAGE" "local-path-provisioner version $LOCAL_PATH_PROVISIONER_VERSION ok" \
    sh -c 'echo $(local-path-provisioner --version) ok'
  log "local-path-provisioner ready: $LOCAL_PATH_IMAGE"
}

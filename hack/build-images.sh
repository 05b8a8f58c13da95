#!/usr/bin/env bash
# Builds the images the node needs from local parts (no registry is reachable) as OCI
# image-layout tarballs cached under $KTS_CACHE/images, and imports each into containerd's
# k8s.io namespace unless it already holds that exact image:
#   - the sandbox image kubeadm expects (registry.k8s.io/pause:*) from hack/images/pause.c
#   - busybox from Debian's busybox-static, under the names pods and e2e tests use.
# A freshly imported image is run once with ctr to prove it works.
source "$(dirname "$0")/lib.sh"
need_root
apt_install busybox-static gcc libc6-dev jq tar gzip
[ -S "$CONTAINERD_SOCK" ] || die "containerd is not running on $CONTAINERD_SOCK (run hack/containerd.sh)"

IMAGES="$KTS_CACHE/images"
BUSYBOX_NAMES=(docker.io/library/busybox:1.36 registry.k8s.io/e2e-test-images/busybox:1.36.1-1)
ENV_PATH=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$IMAGES"
sha() { sha256sum "$1" | cut -d' ' -f1; }

# oci_tar OUT ROOTFS CONFIG_JSON NAME...: packs ROOTFS as one gzip layer with the given
# image config ("config" object) into an OCI layout tarball naming the image NAME...
# Deterministic: same inputs, same digests. Writes OUT.digest (the manifest digest).
oci_tar() {
  local out=$1 rootfs=$2 cfg=$3; shift 3
  local w; w=$(mktemp -d)
  mkdir -p "$w/oci/blobs/sha256"
  (cd "$rootfs" && ls -A | tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
      -cf "$w/layer.tar" -T -)
  gzip -n -9 -c "$w/layer.tar" > "$w/layer.tgz"
  local diff_id layer lsize
  diff_id=$(sha "$w/layer.tar"); layer=$(sha "$w/layer.tgz"); lsize=$(stat -c %s "$w/layer.tgz")
  mv "$w/layer.tgz" "$w/oci/blobs/sha256/$layer"
  jq -cn --argjson c "$cfg" --arg d "sha256:$diff_id" '{
      created: "1970-01-01T00:00:00Z", architecture: "amd64", os: "linux", config: $c,
      rootfs: {type: "layers", diff_ids: [$d]},
      history: [{created: "1970-01-01T00:00:00Z", created_by: "kubelet-ts hack/build-images.sh"}]}' \
    > "$w/config.json"
  local config csize; config=$(sha "$w/config.json"); csize=$(stat -c %s "$w/config.json")
  mv "$w/config.json" "$w/oci/blobs/sha256/$config"
  jq -cn --arg c "sha256:$config" --argjson cs "$csize" --arg l "sha256:$layer" --argjson ls "$lsize" '{
      schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
      layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $l, size: $ls}]}' \
    > "$w/manifest.json"
  local manifest msize; manifest=$(sha "$w/manifest.json"); msize=$(stat -c %s "$w/manifest.json")
  mv "$w/manifest.json" "$w/oci/blobs/sha256/$manifest"
  # One index entry per name, all pointing at the same manifest: ctr import tags each.
  printf '%s\n' "$@" | jq -cR --arg m "sha256:$manifest" --argjson ms "$msize" '{
      mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
      platform: {architecture: "amd64", os: "linux"},
      annotations: {"io.containerd.image.name": ., "org.opencontainers.image.ref.name": (. | sub(".*:"; ""))}}' \
    | jq -cs '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' \
    > "$w/oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$w/oci/oci-layout"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out.tmp" -C "$w/oci" oci-layout index.json blobs
  echo "sha256:$manifest" > "$out.digest"
  mv "$out.tmp" "$out"
  rm -rf "$w"
}

# import_if_needed TAR NAME...: true (0) when it imported, 1 when containerd already had it.
import_if_needed() {
  local tar=$1 want n; shift
  want=$(cat "$tar.digest")
  local have; have=$(ctr_k8s images ls 2>/dev/null | awk 'NR>1 {print $1, $3}')
  for n in "$@"; do
    if ! grep -qxF "$n $want" <<<"$have"; then
      log "importing $* into containerd (k8s.io)"
      ctr_k8s images import "$tar" >>"$LOGS/build-images.log" 2>&1 \
        || die "ctr images import $tar failed (see $LOGS/build-images.log)"
      return 0
    fi
  done
  return 1
}

# smoke_run NAME ARGS...: runs the image once with ctr (no CRI) and prints its output.
smoke_run() {
  local img=$1; shift
  ctr_k8s run --rm "$img" "kts-smoke-$$" "$@" 2>>"$LOGS/build-images.log"
}

mkdir -p "$LOGS"

# --- pause -------------------------------------------------------------------
pause_name=$(pause_image)
key=$(cat "$0" "$KTS_ROOT/hack/images/pause.c" <(gcc --version | head -1) <(echo "$pause_name") | sha256sum | cut -c1-16)
pause_tar="$IMAGES/pause-$key.tar"
if [ ! -f "$pause_tar" ] || [ ! -f "$pause_tar.digest" ]; then
  log "building $pause_name"
  rm -f "$IMAGES"/pause-*   # older builds (another key) are never used again
  w=$(mktemp -d); mkdir -p "$w/rootfs"
  gcc -static -O2 -s -Wall -o "$w/rootfs/pause" "$KTS_ROOT/hack/images/pause.c" >>"$LOGS/build-images.log" 2>&1 \
    || die "gcc -static pause.c failed (see $LOGS/build-images.log)"
  oci_tar "$pause_tar" "$w/rootfs" "{\"Entrypoint\":[\"/pause\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\"}" "$pause_name"
  rm -rf "$w"
fi
if import_if_needed "$pause_tar" "$pause_name"; then
  # A sandbox image must block until TERM and then exit 0.
  id="kts-smoke-pause-$$"
  state() { ctr_k8s tasks ls 2>/dev/null | awk -v id="$id" '$1 == id {print $3}'; }
  smoke_fail() {
    ctr_k8s tasks kill -s SIGKILL "$id" >/dev/null 2>&1; sleep 0.5
    ctr_k8s tasks rm -f "$id" >/dev/null 2>&1; ctr_k8s containers rm "$id" >/dev/null 2>&1
    ctr_k8s images rm "$pause_name" >/dev/null 2>&1   # so the next run tries again
    die "$pause_name $1 (see $LOGS/build-images.log)"
  }
  ctr_k8s run -d "$pause_name" "$id" >>"$LOGS/build-images.log" 2>&1 || smoke_fail "does not start"
  sleep 1
  [ "$(state)" = RUNNING ] || smoke_fail "exited at once"
  ctr_k8s tasks kill -s SIGTERM "$id"
  for _ in $(seq 50); do [ "$(state)" = STOPPED ] && break; sleep 0.1; done
  [ "$(state)" = STOPPED ] || smoke_fail "ignored SIGTERM"
  ctr_k8s tasks rm "$id" >/dev/null 2>&1 || true
  ctr_k8s containers rm "$id" >/dev/null 2>&1 || true
  log "$pause_name runs (blocks, exits on TERM)"
fi

# --- busybox -----------------------------------------------------------------
bb_version=$(dpkg-query -W -f='${Version}' busybox-static)
key=$(cat "$0" <(echo "$bb_version ${BUSYBOX_NAMES[*]}") | sha256sum | cut -c1-16)
bb_tar="$IMAGES/busybox-$key.tar"
if [ ! -f "$bb_tar" ] || [ ! -f "$bb_tar.digest" ]; then
  log "building busybox image from busybox-static $bb_version"
  rm -f "$IMAGES"/busybox-*
  w=$(mktemp -d); r="$w/rootfs"
  mkdir -p "$r"/{bin,etc,root,tmp,home,proc,sys,dev,var}
  chmod 1777 "$r/tmp"; chmod 700 "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$r/etc/group"
  oci_tar "$bb_tar" "$r" "{\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" "${BUSYBOX_NAMES[@]}"
  rm -rf "$w"
fi
if import_if_needed "$bb_tar" "${BUSYBOX_NAMES[@]}"; then
  out=$(smoke_run "${BUSYBOX_NAMES[0]}" sh -c 'echo ok from $(id -un)') || true
  [ "$out" = "ok from root" ] || { ctr_k8s images rm "${BUSYBOX_NAMES[@]}" >/dev/null 2>&1
    die "busybox image does not run: '$out' (see $LOGS/build-images.log)"; }
  log "busybox runs (${BUSYBOX_NAMES[*]})"
fi
log "images ready: $pause_name ${BUSYBOX_NAMES[*]}"

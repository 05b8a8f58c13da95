#!/usr/bin/env bash
# Builds the images the node needs from local parts (no registry is reachable) as OCI
# image-layout tarballs cached under $KTS_CACHE/images, and imports each into containerd's
# k8s.io namespace unless it already holds that exact image, and pushes each into the local
# registry (hack/registry.sh) under the names of the registries it mirrors:
#   - the sandbox image kubeadm expects (registry.k8s.io/pause:*) from hack/images/pause.c
#   - busybox from Debian's busybox-static, under the names pods and e2e tests use;
#   - upstream's sample device plugin (test/images/sample-device-plugin of the pinned release,
#     built by `hack/build-conformance.sh sample-device-plugin`), under the name upstream's
#     e2e manifests use: test/e2e/device-plugins.test.ts and the node e2e device plugin tests run it.
#   - rancher's local-path-provisioner (hack/images/local-path.sh), from hack/build-addons.sh's binary.
# With --cluster, also the images a kubeadm cluster with kube-proxy, CoreDNS and flannel
# runs (from hack/build-control-plane.sh's and hack/build-addons.sh's binaries and Debian's
# iptables): kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kube-proxy,
# coredns, flannel and flannel-cni-plugin, under the names kubeadm and kube-flannel.yml use;
# and upstream's DRA test driver (hack/build-conformance.sh dra-test-driver), which
# manifests/addons/dra-test-driver.yaml deploys.
# With --conformance, also the images the upstream conformance tests run (built by
# hack/build-conformance.sh first), each on the busybox root: agnhost, nonewprivs, nonroot,
# a stand-in for nginx (busybox httpd serving on port 80, see docs/conformance.md), and
# csi-driver-host-path's hostpathplugin (the DRA tests run its proxy mode).
# With --csi, the CSI hostpath driver and its sidecars from hack/build-csi.sh's binaries
# (hack/cluster/csi-hostpath.sh deploys them; docs/csi.md).
# A freshly imported image is run once with ctr to prove it works.
# BUILD_ONLY=1 makes the tarballs alone, with no containerd or registry: make test's background
# build makes the cluster's and the CSI driver's on a cold machine before the cluster needs them,
# and kind's node images from them (each tarball is built under a lock, so a node's import waits).
# Every ctr call goes through ctr_k8s, so CONTAINERD_SOCK=/path/to/other.sock imports into
# (and smoke-runs in) another containerd, a cluster node's say; the tarballs are shared.
source "$(dirname "$0")/lib.sh"
need_root
cluster="" conformance="" csi=""
for a in "$@"; do
  case "$a" in
    --cluster) cluster=1 ;;
    --conformance) conformance=1 ;;
    --csi) csi=1 ;;
    *) die "usage: $0 [--cluster] [--conformance] [--csi]" ;;
  esac
done
apt_install busybox-static gcc libc6-dev jq tar gzip curl
if [ -z "${BUILD_ONLY:-}" ]; then
  # (Its version keys the smoke runs' stamps, smoked.)
  CONTAINERD_VERSION=$(ctr_k8s --connect-timeout 2s version 2>/dev/null | awk '/^Server:/ {s = 1} s && $1 == "Version:" {print $2; exit}')
  [ -n "$CONTAINERD_VERSION" ] || die "containerd is not answering on $CONTAINERD_SOCK (run hack/containerd.sh)"
  curl -sf --max-time 5 "http://$REGISTRY/v2/" >/dev/null \
    || die "the registry is not answering on $REGISTRY (run hack/registry.sh)"
fi

IMAGES="$KTS_CACHE/images"
BUSYBOX_NAMES=(docker.io/library/busybox:1.36)
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
# Either way the image is then in the registry too (publish). (BUILD_ONLY: neither.)
import_if_needed() {
  [ -z "${BUILD_ONLY:-}" ] || return 1
  local tar=$1 want n; shift
  want=$(cat "$tar.digest")
  local have; have=$(ctr_k8s images ls 2>/dev/null | awk 'NR>1 {print $1, $3}')
  for n in "$@"; do
    if ! grep -qxF "$n $want" <<<"$have"; then
      log "importing $* into containerd (k8s.io)"
      ctr_k8s images import "$tar" >>"$LOGS/build-images.log" 2>&1 \
        || die "ctr images import $tar failed (see $LOGS/build-images.log)"
      publish "$want" "$@"
      return 0
    fi
  done
  publish "$want" "$@"
  return 1
}

# publish DIGEST NAME...: each NAME of a registry the local registry mirrors (hack/registry.sh)
# is pushed there, from the containerd that holds it, unless the registry has that manifest
# under that tag already (one HEAD request).
publish() {
  local want=$1 n have; shift
  for n in "$@"; do
    [[ " ${REGISTRY_MIRRORS[*]} " = *" ${n%%/*} "* ]] || continue
    have=$(curl -sfI --max-time 5 -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
      "http://$REGISTRY/v2/${n%:*}/manifests/${n##*:}" | tr -d '\r' | awk 'tolower($1) == "docker-content-digest:" {print $2}')
    [ "$have" != "$want" ] || continue
    log "pushing $n to the registry $REGISTRY"
    ctr_k8s images push --plain-http "$REGISTRY/$n" "$n" >>"$LOGS/build-images.log" 2>&1 \
      || die "pushing $n to the registry $REGISTRY failed (is it running? hack/registry.sh; see $LOGS/build-images.log)"
  done
}

# ctr_run ARGS...: ctr run with the container's stdio FIFOs next to containerd's socket.
# ctr makes them and containerd's shim opens them by path: when that containerd runs in
# another mount namespace (a cluster node's, reached through its socket's bind source), its
# /run/containerd is not ours, but the socket's directory is the same for both.
ctr_run() { ctr_k8s run --fifo-dir "$(dirname "$CONTAINERD_SOCK")/fifo" "$@"; }

# smoke_run NAME ARGS...: runs the image once with ctr (no CRI) and prints its output. ctr run
# can lose a short-lived task's output on a loaded machine (CI printed '' once for nonewprivs,
# which ran the next time): nothing printed is tried twice more.
smoke_run() {
  local img=$1 out try; shift
  for try in 1 2 3; do
    out=$(ctr_run --rm "$img" "kts-smoke-$$" "$@" 2>>"$LOGS/build-images.log") || true
    [ -z "$out" ] || break
    log "$img printed nothing (try $try of 3)"
    sleep 1
  done
  printf '%s\n' "$out"
}

# copy_with_libs ROOT PROGRAM...: Debian's dynamically linked programs with the shared
# libraries ldd resolves for them, at the same paths.
copy_with_libs() {
  local r=$1 f; shift
  for f in "$@" $(for f in "$@"; do ldd "$f" | grep -o '/[^ ]*'; done | sort -u); do
    mkdir -p "$r$(dirname "$f")" && cp -L "$f" "$r$f" || return
  done
}

# recipe FILL: what an image built by FILL is made by (the shared builders, FILL and the
# fill_ functions it calls), for its cache key: an edit elsewhere does not rebuild every image.
# (A FILL that calls no other fill_ leaves grep nothing to print: its status 1 must not end
# the function, which runs under set -e in a process substitution, before it printed.)
recipe() {
  local deps; deps=$(declare -f "$1" | grep -o '\bfill_[a-z_]*' | { grep -vx "$1" || true; } | sort -u)
  declare -f oci_tar copy_with_libs busybox_root "$1" $deps
}

# busybox_root DIR: a minimal root file system, busybox-static with its applets as links.
busybox_root() {
  local r=$1 a
  mkdir -p "$r"/{bin,etc,root,tmp,home,proc,sys,dev,var}
  chmod 1777 "$r/tmp"; chmod 700 "$r/root"
  cp /bin/busybox "$r/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$r/etc/group"
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
    # (Best effort: set -e applies here, and what is left to clean up may not exist.)
    ctr_k8s tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; sleep 0.5
    ctr_k8s tasks rm -f "$id" >/dev/null 2>&1 || true; ctr_k8s containers rm "$id" >/dev/null 2>&1 || true
    ctr_k8s images rm "$pause_name" >/dev/null 2>&1 || true   # so the next run tries again
    die "$pause_name $1 (see $LOGS/build-images.log)"
  }
  ctr_run -d "$pause_name" "$id" >>"$LOGS/build-images.log" 2>&1 || smoke_fail "does not start"
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
  busybox_root "$r"
  oci_tar "$bb_tar" "$r" "{\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" "${BUSYBOX_NAMES[@]}"
  rm -rf "$w"
fi
if import_if_needed "$bb_tar" "${BUSYBOX_NAMES[@]}"; then
  out=$(smoke_run "${BUSYBOX_NAMES[0]}" sh -c 'echo ok from $(id -un)') || true
  [ "$out" = "ok from root" ] || { ctr_k8s images rm "${BUSYBOX_NAMES[@]}" >/dev/null 2>&1 || true
    die "busybox image does not run: '$out' (see $LOGS/build-images.log)"; }
  log "busybox runs (${BUSYBOX_NAMES[*]})"
fi
log "images ready: $pause_name ${BUSYBOX_NAMES[*]}"

# --- a kubeadm cluster's images (--cluster) --------------------------------------------
# Each image is one layer holding just what its program needs; the control plane's come
# from the binaries hack/build-control-plane.sh links into _output/bin, the add-ons' from
# hack/build-addons.sh's cache, iptables from this host's Debian packages.
cluster_images() {
  local kube_proxy="$BIN/kube-proxy" etcd="$BIN/etcd"
  local coredns="$KTS_CACHE/coredns-$COREDNS_VERSION/bin/coredns"
  local flannel_dir="$KTS_CACHE/flannel-$FLANNEL_VERSION/bin"
  local cni_flannel="$KTS_CACHE/cni-plugins-$CNI_PLUGINS_VERSION/bin/flannel"
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    [ -x "$BIN/$b" ] || die "$BIN/$b is missing: run hack/build-control-plane.sh first"
  done
  [ -x "$kube_proxy" ] || die "$kube_proxy is missing: run hack/build-control-plane.sh first"
  [ -x "$etcd" ] || die "$etcd is missing: run hack/build-control-plane.sh first"
  for b in "$coredns" "$flannel_dir/flanneld" "$flannel_dir/install-conf" "$cni_flannel"; do
    [ -x "$b" ] || die "$b is missing: run hack/build-addons.sh first"
  done
  [ -x "$BIN/dra-test-driver" ] || die "$BIN/dra-test-driver is missing: run hack/build-conformance.sh dra-test-driver first"
  apt_install "${IPTABLES_PKGS[@]}"

  local k8s=registry.k8s.io kv=$KUBE_VERSION c
  # The control plane's static pods: kubeadm's manifests give the whole command line,
  # starting with the bare program name, which the runtime finds through the image's PATH.
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    cluster_image "$k8s/$c:$kv" "{\"Env\":[\"$ENV_PATH\"]}" fill_bin "$BIN/$c" /usr/local/bin/$c
    [ -z "$imported" ] || smoke_expect "$k8s/$c:$kv" "Kubernetes $kv" "$c" --version
  done
  # etcd under kubeadm's tag scheme for the etcd this repo builds; kubeadm's cluster
  # configuration must name that tag (etcd.local.imageTag), as its default is another etcd.
  local etcd_img="$k8s/etcd:${ETCD_VERSION#v}-0"
  cluster_image "$etcd_img" "{\"Env\":[\"$ENV_PATH\"]}" fill_bin "$etcd" /usr/local/bin/etcd
  [ -z "$imported" ] || smoke_expect "$etcd_img" "etcd Version: ${ETCD_VERSION#v}*" etcd --version

  # kube-proxy (iptables mode) with the host's iptables-nft set.
  cluster_image "$k8s/kube-proxy:$kv" "{\"Env\":[\"$ENV_PATH\"]}" fill_kube_proxy "$kube_proxy"
  if [ -n "$imported" ]; then
    smoke_expect "$k8s/kube-proxy:$kv" "Kubernetes $kv" kube-proxy --version
    smoke_iptables "$k8s/kube-proxy:$kv"
  fi

  # CoreDNS: the static binary alone, run as the Deployment kubeadm makes runs it (no
  # command, args -conf ...). Upstream's image runs as uid 65532 and binds :53 through a
  # file capability on /coredns; this one has no USER, so it runs as root, which keeps
  # NET_BIND_SERVICE under kubeadm's "drop ALL, add NET_BIND_SERVICE" without xattrs.
  local coredns_img="$k8s/coredns/coredns:$COREDNS_VERSION"
  cluster_image "$coredns_img" "{\"Entrypoint\":[\"/coredns\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\"}" \
    fill_bin "$coredns" /coredns
  [ -z "$imported" ] || smoke_expect "$coredns_img" "CoreDNS-${COREDNS_VERSION#v}*" /coredns -version

  # flannel as kube-flannel.yml runs it: /opt/bin/flanneld, /opt/bin/install-conf (the
  # install-cni init container) and the iptables it execs for --ip-masq.
  local flannel_img="ghcr.io/flannel-io/flannel:$FLANNEL_VERSION"
  cluster_image "$flannel_img" "{\"Entrypoint\":[\"/opt/bin/flanneld\"],\"Env\":[\"$ENV_PATH\"]}" \
    fill_flannel "$flannel_dir/flanneld" "$flannel_dir/install-conf"
  if [ -n "$imported" ]; then
    smoke_expect "$flannel_img" "$FLANNEL_VERSION" /opt/bin/flanneld --version
    smoke_expect "$flannel_img" "" /opt/bin/install-conf /etc/passwd /tmp/passwd
    smoke_iptables "$flannel_img"
  fi

  # The flannel CNI plugin, which kube-flannel.yml's install-cni-plugin init container
  # copies with `cp -f /flannel /opt/cni/bin/flannel` (so: the busybox root, and /flannel).
  # Upstream names this image v1.9.1-flannel3 (github.com/flannel-io/cni-plugin), but that
  # module is not on the Go module proxy; this is the same plugin from
  # containernetworking/plugins v0.9.1, so the image carries that version and flannel's
  # conflist must say cniVersion 0.4.0 (the newest it speaks).
  local cni_img="ghcr.io/flannel-io/flannel-cni-plugin:$CNI_PLUGINS_VERSION"
  cluster_image "$cni_img" "{\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" fill_cni_flannel "$cni_flannel"
  [ -z "$imported" ] || smoke_expect "$cni_img" '*"supportedVersions"*"0.4.0"*' sh -c 'echo {} | CNI_COMMAND=VERSION /flannel'

  # upstream's DRA test driver (test/e2e/dra/test-driver of the pinned release) as a driver's
  # users deploy one: manifests/addons/dra-test-driver.yaml runs its kubelet plugin as a
  # DaemonSet (test/e2e/cluster-dra.test.ts). Upstream publishes no image of it (its e2e tests
  # run the plugin inside e2e.test, behind hostpathplugin proxy pods), so the name is ours, in
  # the e2e-test-images namespace and tagged with the release; the manifest names the same.
  # The static binary alone, at /dra-test-driver: it needs no shell, and its in-cluster client
  # reads the service account's token through min_root's /var/run -> /run.
  local dra_img="$k8s/e2e-test-images/dra-test-driver:$kv"
  cluster_image "$dra_img" "{\"Entrypoint\":[\"/dra-test-driver\"],\"Env\":[\"$ENV_PATH\"]}" \
    fill_bin "$BIN/dra-test-driver" /dra-test-driver
  [ -z "$imported" ] || smoke_expect "$dra_img" '*--node-name*' /dra-test-driver kubelet-plugin --help
  log "cluster images ready: $k8s/{kube-apiserver,kube-controller-manager,kube-scheduler,kube-proxy}:$kv $etcd_img $coredns_img $flannel_img $cni_img $dra_img"
}

# iptables as kube-proxy and flanneld exec it: the nf_tables backend (what this host's
# iptables and the CNI plugins containerd runs use: both sides must see the same rules),
# under the names they call (iptables, ip6tables and their -save/-restore), with the
# extensions it dlopens (ldd cannot see those) and every library they link.
IPTABLES_PKGS=(iptables libxtables12 libnftnl11 libmnl0 libnetfilter-conntrack3 libnfnetlink0)
XTABLES_DIR=/usr/lib/x86_64-linux-gnu/xtables
fill_iptables() {
  local r=$1 n
  copy_with_libs "$r" /usr/sbin/xtables-nft-multi "$XTABLES_DIR"/*.so || return
  for n in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s xtables-nft-multi "$r/usr/sbin/$n" && ln -s xtables-nft-multi "$r/usr/sbin/${n/tables/tables-nft}" || return
  done
}

# min_root DIR: what a one-program image needs besides the program: /tmp (Go programs and
# etcd write temporary files there), /run with /var/run pointing at it, and root and
# nobody in /etc/passwd and /etc/group for lookups of the running user.
min_root() {
  local r=$1
  mkdir -p "$r"/{etc,tmp,run,var} && chmod 1777 "$r/tmp" && ln -s ../run "$r/var/run" &&
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$r/etc/passwd" &&
  printf 'root:x:0:\nnobody:x:65534:\n' > "$r/etc/group"
}

# install_with_libs ROOT PROGRAM DEST: PROGRAM at DEST in ROOT, with the shared libraries
# ldd resolves for it (none for a static program) at their own paths.
install_with_libs() {
  local r=$1 src=$2 dest=$3 f
  mkdir -p "$r$(dirname "$dest")" && cp -L "$src" "$r$dest" || return
  for f in $(ldd "$src" 2>/dev/null | grep -o '/[^ ]*'); do
    mkdir -p "$r$(dirname "$f")" && cp -L "$f" "$r$f" || return
  done
}

# The FILL functions of cluster_image: they get the root, then cluster_image's INPUTs, and
# fail when a step does (cluster_image calls them where set -e does not apply).
fill_bin() { min_root "$1" && install_with_libs "$1" "$2" "$3"; }
fill_kube_proxy() { min_root "$1" && fill_iptables "$1" && install_with_libs "$1" "$2" /usr/local/bin/kube-proxy; }
fill_flannel() {
  min_root "$1" && fill_iptables "$1" &&
    install_with_libs "$1" "$2" /opt/bin/flanneld && install_with_libs "$1" "$3" /opt/bin/install-conf
}
fill_cni_flannel() { busybox_root "$1" && cp "$2" "$1/flannel"; }

# cluster_image NAME CONFIG FILL INPUT...: builds the image NAME, whose root is what the
# function FILL ROOT INPUT... makes, when this script, an INPUT (the files FILL packs, and
# where) or the Debian packages it copies from changed; then imports it unless containerd
# already has it. Sets imported (non-empty when it did, so the caller smoke-runs it) rather
# than returning it: a function called as a condition runs without set -e.
imported=""
cluster_image() {
  local name=$1 cfg=$2 fill=$3; shift 3
  local base=${name##*/}; base=${base%%:*}
  local key tar w f t names=()
  # NAME may list several tags (REPO:T1,T2): one image under each.
  for t in $(tr ',' ' ' <<<"${name##*:}"); do names+=("${name%:*}:$t"); done
  # The inputs' paths count from the checkout, so that another clone (a CI run's) reuses the build.
  key=$(cat <(recipe "$fill") <(for f in "$@"; do [ ! -f "$f" ] || cat "$f"; done) <(echo "$name $cfg $fill ${*//$KTS_ROOT/}") \
      <(dpkg-query -W libc6 busybox-static "${IPTABLES_PKGS[@]}") | sha256sum | cut -c1-16)
  tar="$IMAGES/cluster-$base-$key.tar"
  # One build of an image at a time (make test's background build and a node's import).
  [ -f "$tar" ] && [ -f "$tar.digest" ] || build_lock "$IMAGES/cluster-$base.lock" "$name image"
  if [ ! -f "$tar" ] || [ ! -f "$tar.digest" ]; then
    log "building $name"
    # Older builds (another key) are never used again. The key is exactly 16 hex digits,
    # so that flannel's do not match flannel-cni-plugin's.
    rm -f "$IMAGES/cluster-$base-"$HEX16.tar "$IMAGES/cluster-$base-"$HEX16.tar.digest
    w=$(mktemp -d)
    mkdir -p "$w/rootfs"
    "$fill" "$w/rootfs" "$@" >>"$LOGS/build-images.log" 2>&1 \
      || { rm -rf "$w"; die "could not lay out $name's files (see $LOGS/build-images.log)"; }
    oci_tar "$tar" "$w/rootfs" "$cfg" "${names[@]}"
    rm -rf "$w"
  fi
  imported=""
  if import_if_needed "$tar" "${names[@]}"; then imported=1; fi
}
HEX16=$(printf '[0-9a-f]%.0s' $(seq 16))

# smoked IMAGE ARGS...: whether IMAGE, by its digest, passed the smoke run ARGS in a containerd
# of this version; if not, prints the stamp file to write when it passes (nothing when containerd
# does not know IMAGE). The images are the same bytes in every containerd they are imported into,
# so a cluster's nodes run each smoke once, not once a node (a CI run's six nodes: minutes).
smoked() {
  local d stamp; d=$(ctr_k8s images ls "name==$1" 2>/dev/null | awk 'NR == 2 {print $3}')
  [ -z "$d" ] || stamp="$IMAGES/smoked/$(sha256sum <<<"$CONTAINERD_VERSION $d $*" | cut -c1-16)"
  if [ -n "${stamp:-}" ] && [ -f "$stamp" ]; then log "$1 passed this smoke run before (containerd $CONTAINERD_VERSION)"; return 0; fi
  echo "${stamp:-}"; return 1
}
passed() { [ -z "$1" ] || { mkdir -p "$IMAGES/smoked" && : >"$1"; }; }

# smoke_expect [--privileged] IMAGE WANT CMD...: runs CMD once in IMAGE with ctr (in a
# network namespace of its own); unless it exits 0 with output (stdout and stderr) matching
# the glob WANT, removes the image, so that the next run imports and tries it again, and stops.
smoke_expect() {
  local opts=()
  if [ "$1" = --privileged ]; then opts=(--privileged); shift; fi
  local img=$1 want=$2 out rc try stamp; shift 2
  stamp=$(smoked "$img" "${opts[@]}" "$want" "$@") && return 0
  # Nothing printed where something is wanted is tried twice more, as in smoke_run.
  for try in 1 2 3; do
    rc=0
    out=$(ctr_run --rm "${opts[@]}" "$img" "kts-smoke-$$" "$@" 2>&1 </dev/null) || rc=$?
    # containerd 2.2's ctr warns on every run that cgroup v1 is deprecated (this host runs v1).
    out=$(grep -v '^time=.* level=warning msg="DEPRECATION: The support for cgroup v1' <<<"$out" || true)
    printf '%s: %s\n%s\n' "$img" "$*" "$out" >>"$LOGS/build-images.log"
    [ -z "$out" ] && [ -n "$want" ] || break
    log "$img printed nothing (exit $rc; try $try of 3)"
    sleep 1
  done
  # shellcheck disable=SC2053  # (WANT is a pattern)
  if [ $rc -ne 0 ] || [[ $out != $want ]]; then
    ctr_k8s images rm "$img" >/dev/null 2>&1 || true
    die "$img does not run: '$*' exited $rc printing '$(head -c 300 <<<"$out" | tr '\n' ' ')', want '$want' (see $LOGS/build-images.log)"
  fi
  if [ -n "$out" ]; then log "$img runs ($1: $(head -1 <<<"$out"))"; else log "$img runs ($(cut -c1-72 <<<"$*"))"; fi
  passed "$stamp"
}

# smoke_iptables IMAGE: adds, in the container's own network namespace, rules with the
# matches and targets kube-proxy writes (the extensions are dlopened, so only using them
# proves they and their libraries are in the image). One ctr run per rule: each starts from
# an empty namespace, and ctr never closes a container's stdin, so no iptables-restore.
smoke_iptables() {
  smoke_expect "$1" 'iptables v* (nf_tables)' iptables --version
  smoke_expect --privileged "$1" '' iptables -w 5 -t nat -A POSTROUTING -m comment --comment kts-smoke \
    -m statistic --mode random --probability 0.5 -m mark --mark 0x4000/0x4000 -m conntrack --ctstate NEW \
    -m addrtype ! --dst-type LOCAL -j MASQUERADE --random-fully
  smoke_expect --privileged "$1" '' iptables -w 5 -t nat -A OUTPUT -j MARK --set-xmark 0x4000/0x4000
  smoke_expect --privileged "$1" '' iptables -w 5 -t nat -A PREROUTING -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.0.0.1:80
  smoke_expect --privileged "$1" '' ip6tables -w 5 -t filter -A INPUT -m conntrack --ctstate INVALID -j DROP
}

# --- upstream's sample device plugin (every set) -------------------------------------
# test/images/sample-device-plugin of the pinned release as its Dockerfile lays it out
# (/sampledeviceplugin, run with -alsologtostderr), on the busybox root where upstream's is on
# alpine: a shell, and the /tmp its Allocate creates the fake device files Dev-1 and Dev-2 in.
# Named as upstream's testing manifests name it (test/e2e/testing-manifests/sample-device-plugin/
# and manifests/addons/sample-device-plugin.yaml). The local stack's e2e tests and the node
# e2e tests (--conformance) run it, so every set has it.
SAMPLE_DEVICE_PLUGIN_IMAGE=registry.k8s.io/e2e-test-images/sample-device-plugin:1.7
fill_sample_device_plugin() { busybox_root "$1" && install -m 755 "$2" "$1/sampledeviceplugin"; }
[ -x "$BIN/sample-device-plugin" ] \
  || die "$BIN/sample-device-plugin is missing: run hack/build-conformance.sh sample-device-plugin first"
cluster_image "$SAMPLE_DEVICE_PLUGIN_IMAGE" \
  "{\"Entrypoint\":[\"/sampledeviceplugin\",\"-alsologtostderr\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\"}" \
  fill_sample_device_plugin "$BIN/sample-device-plugin"
# The smoke run: with the DEPRECATION file in the kubelet's device-plugins dir (which the
# plugin checks before registering) it serves its socket there without a kubelet to call.
[ -z "$imported" ] || smoke_expect "$SAMPLE_DEVICE_PLUGIN_IMAGE" "serving dp.*" sh -c '
  d=/var/lib/kubelet/device-plugins; mkdir -p $d && touch $d/DEPRECATION
  PLUGIN_SOCK_DIR=$d /sampledeviceplugin >/tmp/log 2>&1 &
  for i in $(seq 100); do
    if s=$(ls $d | grep "^dp\.") && grep -q "Skip registration" /tmp/log; then echo "serving $s"; exit 0; fi
    sleep 0.1
  done
  cat /tmp/log; exit 1'
log "sample device plugin ready: $SAMPLE_DEVICE_PLUGIN_IMAGE"

# --- an application with cAdvisor's metric labels (every set: test/e2e/kubelet-api.test.ts) ---
# busybox's httpd on the host network's 127.0.0.1:19100, its image labelled as an application's
# Dockerfile labels it for cAdvisor's collectors (src/stats/app-metrics/): a Prometheus page, and
# a status page a generic collector reads with regular expressions.
APP_METRICS_IMAGE=localhost/kts-app-metrics:1
fill_app_metrics() {
  busybox_root "$1" && mkdir -p "$1/etc/cadvisor" "$1/www" || return
  printf '%s\n' '{"endpoint": "http://127.0.0.1:19100/metrics", "polling_frequency": 1000000000}' > "$1/etc/cadvisor/prometheus.json"
  printf '%s\n' '{"endpoint": "http://127.0.0.1:19100/status", "metrics_config": [' \
    '{"name": "active", "metric_type": "gauge", "units": "connections", "data_type": "int", "regex": "Active connections: ([0-9]+)"},' \
    '{"name": "rate", "metric_type": "gauge", "units": "requests/s", "data_type": "float", "regex": "rate: ([0-9.]+)"}]}' \
    > "$1/etc/cadvisor/status.json"
  printf '%s\n' '# TYPE app_requests_total counter' 'app_requests_total{code="200",path="/"} 42' '# TYPE app_temperature gauge' 'app_temperature 21.5' > "$1/www/metrics"
  printf '%s\n' 'Active connections: 7' 'rate: 0.25' > "$1/www/status"
}
cluster_image "$APP_METRICS_IMAGE" \
  "{\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"127.0.0.1:19100\",\"-h\",\"/www\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\",\"Labels\":{\"io.cadvisor.metric.prometheus\":\"/etc/cadvisor/prometheus.json\",\"io.cadvisor.metric.status\":\"/etc/cadvisor/status.json\"}}" \
  fill_app_metrics
[ -z "$imported" ] || smoke_expect "$APP_METRICS_IMAGE" '*app_temperature 21.5*' cat /www/metrics /etc/cadvisor/prometheus.json
log "application metrics image ready: $APP_METRICS_IMAGE"

# rancher/local-path-provisioner (every set: the StorageClass local-path of
# manifests/addons/local-path-storage.yaml), from hack/build-addons.sh's binary.
source "$KTS_ROOT/hack/images/local-path.sh"
local_path_images

# --- the CSI hostpath driver and its sidecars (--csi; hostpathplugin also --conformance) ---
# From hack/build-csi.sh's binaries, under the names and tags the driver's deploy manifests
# (deploy/kubernetes-latest of csi-driver-host-path $CSI_HOSTPATH_VERSION, hack/cluster/csi-hostpath.sh)
# and upstream's e2e manifests of the pinned release (test/e2e/testing-manifests/storage-csi)
# name: the versions built are the ones the Go module proxy serves (hack/versions.env), so one
# image carries both tags. docs/csi.md lists them.
csi_bin() {
  local b="$KTS_CACHE/csi-$1-$2/bin/$3"
  # (--conformance needs hostpathplugin alone: a cached build is a no-op.)
  [ -x "$b" ] || bash "$KTS_ROOT/hack/build-csi.sh" --no-images "$1" >&2 || die "cannot build $b (hack/build-csi.sh $1)"
  [ -x "$b" ] || die "$b is missing: run hack/build-csi.sh first"
  echo "$b"
}
# hostpathplugin as its Dockerfile lays it out (/hostpathplugin on alpine with util-linux,
# coreutils, socat and tar): here on the busybox root (sh, tar, du, sleep and rm: the DRA tests'
# proxy pods run a shell loop in it, test/e2e/dra/utils/deploy.go), with Debian's util-linux
# programs the driver execs or mount-utils does (mount, umount, losetup, findmnt, fallocate,
# blockdev, blkid) and socat (csi-hostpath-testing.yaml's csi-sanity endpoint). The same image
# serves upstream's DRA tests through `hostpathplugin --proxy-endpoint` (docs/conformance-dra.md).
CSI_UTIL_LINUX=(/usr/bin/mount /usr/bin/umount /usr/sbin/losetup /usr/bin/findmnt /usr/bin/fallocate /usr/sbin/blockdev /usr/sbin/blkid /usr/bin/socat)
fill_hostpath() {
  busybox_root "$1" && copy_with_libs "$1" "${CSI_UTIL_LINUX[@]}" && cp "$2" "$1/hostpathplugin"
}
hostpath_image() {
  apt_install util-linux mount socat
  local name=registry.k8s.io/sig-storage/hostpathplugin:v1.17.1
  cluster_image "$name" "{\"Entrypoint\":[\"/hostpathplugin\"],\"Env\":[\"$ENV_PATH\"]}" \
    fill_hostpath "$(csi_bin hostpath "$CSI_HOSTPATH_VERSION" hostpathplugin)"
  if [ -n "$imported" ]; then
    smoke_expect "$name" "hostpathplugin $CSI_HOSTPATH_VERSION" /hostpathplugin --version
    smoke_expect "$name" "findmnt from util-linux*" findmnt --version
  fi
}
# sidecar_image NAME BIN WANT [ARG...]: a sidecar, the static binary alone at /NAME, its image's
# entrypoint (as their Dockerfiles on distroless static), with min_root's /tmp; smoke-run with
# ARGs (default --version; livenessprobe has none) printing WANT.
sidecar_image() {
  local name=$1 bin=$2 want=$3 prog=${2##*/}; shift 3
  [ $# -gt 0 ] || set -- --version
  cluster_image "$name" "{\"Entrypoint\":[\"/$prog\"],\"Env\":[\"$ENV_PATH\"]}" fill_bin "$bin" "/$prog"
  [ -z "$imported" ] || smoke_expect "${name%%,*}" "$want" "/$prog" "$@"
}
csi_images() {
  local s=registry.k8s.io/sig-storage
  hostpath_image
  sidecar_image "$s/csi-node-driver-registrar:v2.16.0,$CSI_NODE_DRIVER_REGISTRAR_VERSION" \
    "$(csi_bin node-driver-registrar "$CSI_NODE_DRIVER_REGISTRAR_VERSION" csi-node-driver-registrar)" "*$CSI_NODE_DRIVER_REGISTRAR_VERSION*"
  sidecar_image "$s/livenessprobe:v2.18.0,$CSI_LIVENESSPROBE_VERSION" \
    "$(csi_bin livenessprobe "$CSI_LIVENESSPROBE_VERSION" livenessprobe)" "*-csi-address*" --help
  sidecar_image "$s/csi-external-health-monitor-controller:$CSI_HEALTH_MONITOR_VERSION" \
    "$(csi_bin external-health-monitor "$CSI_HEALTH_MONITOR_VERSION" csi-external-health-monitor-controller)" "*$CSI_HEALTH_MONITOR_VERSION*"
  sidecar_image "$s/csi-provisioner:v6.1.1,$CSI_PROVISIONER_VERSION" \
    "$(csi_bin external-provisioner "$CSI_PROVISIONER_VERSION" csi-provisioner)" "*$CSI_PROVISIONER_VERSION*"
  sidecar_image "$s/csi-attacher:v4.11.0,$CSI_ATTACHER_VERSION" \
    "$(csi_bin external-attacher "$CSI_ATTACHER_VERSION" csi-attacher)" "*$CSI_ATTACHER_VERSION*"
  # The driver's manifest names v2.2.1, which the proxy does not serve: v2.2.0 under that tag.
  sidecar_image "$s/csi-resizer:v2.1.0,$CSI_RESIZER_VERSION,v2.2.1" \
    "$(csi_bin external-resizer "$CSI_RESIZER_VERSION" csi-resizer)" "*$CSI_RESIZER_VERSION*"
  sidecar_image "$s/csi-snapshotter:v8.5.0,$CSI_SNAPSHOTTER_VERSION" \
    "$(csi_bin external-snapshotter "$CSI_SNAPSHOTTER_VERSION" csi-snapshotter)" "*$CSI_SNAPSHOTTER_VERSION*"
  # external-snapshotter's deploy/kubernetes/snapshot-controller names v8.5.0.
  sidecar_image "$s/snapshot-controller:v8.5.0,$CSI_SNAPSHOTTER_VERSION" \
    "$(csi_bin external-snapshotter "$CSI_SNAPSHOTTER_VERSION" snapshot-controller)" "*$CSI_SNAPSHOTTER_VERSION*"
  log "CSI images ready: $s/{hostpathplugin,csi-node-driver-registrar,livenessprobe,csi-external-health-monitor-controller,csi-provisioner,csi-attacher,csi-resizer,csi-snapshotter,snapshot-controller}"
}

if [ -n "$cluster" ]; then cluster_images; fi
if [ -n "$csi" ]; then csi_images; fi
[ -n "$conformance" ] || exit 0

# --- the conformance tests' images, on the busybox root ------------------------------
E2E=registry.k8s.io/e2e-test-images
SRC=$(cd "$KTS_ROOT/hack/tools/conformance" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' k8s.io/kubernetes)/test/images

# e2e_image NAME FILL CONFIG SMOKE_EXPECTED SMOKE_CMD...: builds (when its inputs changed)
# an image whose root is busybox's plus what the function FILL puts in, imports it under
# $E2E/NAME (NAME may list several tags, comma-separated; a NAME with a registry is taken
# as it is), and checks that SMOKE_CMD prints SMOKE_EXPECTED in it.
e2e_image() {
  local name=$1 fill=$2 cfg=$3 want=$4; shift 4
  local names=() t base=${name%%:*} repo=$E2E/${name%%:*}
  case "$name" in */*) repo=${name%%:*}; base=${base##*/} ;; esac
  for t in $(tr ',' ' ' <<<"${name#*:}"); do names+=("$repo:$t"); done
  local key tar
  key=$(cat <(recipe "$fill") <(echo "$bb_version ${names[*]} $cfg $want $*") "${E2E_INPUTS[@]}" \
    <(dpkg-query -W "${E2E_DEBS[@]}") "$KTS_ROOT"/hack/images/{sh,nmeter}.c | sha256sum | cut -c1-16)
  tar="$IMAGES/e2e-$base-$key.tar"
  if [ ! -f "$tar" ] || [ ! -f "$tar.digest" ]; then
    log "building ${names[*]}"
    rm -f "$IMAGES/e2e-$base"-*
    local w; w=$(mktemp -d)
    busybox_root "$w/rootfs"
    "$fill" "$w/rootfs"
    oci_tar "$tar" "$w/rootfs" "$cfg" "${names[@]}"
    rm -rf "$w"
  fi
  local out stamp
  if import_if_needed "$tar" "${names[@]}" && ! stamp=$(smoked "${names[0]}" "$want" "$@"); then
    out=$(smoke_run "${names[0]}" "$@")
    [ "$out" = "$want" ] || { ctr_k8s images rm "${names[@]}" >/dev/null 2>&1 || true
      die "${names[0]} does not run: '$out', want '$want' (see $LOGS/build-images.log)"; }
    log "${names[0]} runs"
    passed "$stamp"
  fi
}

# What the images are made of (a change in any of them rebuilds them).
E2E_DEBS=(curl bash bind9-dnsutils netcat-openbsd libc-bin)
E2E_INPUTS=("$BIN/agnhost" "$BIN/nnp" "$BIN/sample-apiserver" "$BIN/etcd")
apt_install "${E2E_DEBS[@]}"
for b in "${E2E_INPUTS[@]}"; do [ -x "$b" ] || die "$b is missing: run hack/build-conformance.sh (and hack/build-control-plane.sh) first"; done

# busybox as the tests name it, with /bin/sh from hack/images/sh.c: busybox's ash, or bash
# when the environment holds names ash would drop (hack/images/sh.c says why); and the
# nmeter applet Debian's build lacks (hack/images/nmeter.c: the lifecycle tests' clock).
fill_sh() {
  copy_with_libs "$1" /usr/bin/bash
  gcc -static -O2 -s -Wall -o "$1/bin/sh.new" "$KTS_ROOT/hack/images/sh.c" && mv "$1/bin/sh.new" "$1/bin/sh" && fill_nmeter "$1"
}
# nmeter: the lifecycle tests run it in busybox and in agnhost (their "alternate image").
fill_nmeter() { gcc -static -O2 -s -Wall -o "$1/bin/nmeter" "$KTS_ROOT/hack/images/nmeter.c"; }
e2e_image busybox:1.37.0-1,1.36.1-1 fill_sh "{\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" "data-1=x ash 1" \
  /bin/busybox sh -c 'echo $(env data-1=x /bin/sh -c "env | grep ^data-1=") $(/bin/sh -c "echo \${BASH_VERSION:-ash}") $(nmeter -d0 "%3t" | head -n1 | grep -c "^[0-9:]*\.[0-9][0-9][0-9]$")'

# The name-resolution tools the DNS tests' probe pods run: dig (UDP and TCP queries, PTR),
# glibc's getent (the pod's /etc/hosts), and an nsswitch.conf that reads files then DNS.
fill_dns_tools() {
  copy_with_libs "$1" /usr/bin/dig /usr/bin/getent
  echo 'hosts: files dns' > "$1/etc/nsswitch.conf"
}

# agnhost as upstream's Dockerfile lays it out: /agnhost, /agnhost-2, the porter
# certificate, /uploads, the user and group the security-context tests look up, and the
# tools its alpine base adds that tests call (bash, curl, dig, busybox's nmeter, OpenBSD's nc: the Services
# tests run `nc -v -t -w 2`, whose flags busybox's nc lacks). /bin/sh is bash: Debian's
# busybox-static prefers its own applets to PATH, so its ash would run busybox's nc.
fill_agnhost() {
  local r=$1
  copy_with_libs "$r" /usr/bin/bash /usr/bin/curl /bin/nc.openbsd
  ln -sf /bin/nc.openbsd "$r/usr/bin/nc"
  ln -sf /usr/bin/bash "$r/bin/sh"
  fill_dns_tools "$r" && fill_nmeter "$r" || return
  ln -sf /usr/bin/bash "$r/bin/bash"
  cp "$BIN/agnhost" "$r/agnhost"; ln -s agnhost "$r/agnhost-2"
  cp "$SRC/agnhost/porter/localhost.crt" "$SRC/agnhost/porter/localhost.key" "$r/"
  mkdir -p "$r/uploads"
  echo 'user-defined-in-image:x:1000:1000::/home:/bin/sh' >> "$r/etc/passwd"
  # Upstream's agnhost (and kitten and nautilus on it) is built on Alpine, and the ImageVolume
  # test reads the kitten image's /etc/os-release for "Alpine Linux": this root is not Alpine,
  # and says so in the same words.
  printf '%s\n' 'NAME="kubelet-ts e2e image"' 'ID=kubelet-ts-e2e' \
    'PRETTY_NAME="kubelet-ts stand-in for the Alpine Linux base of upstream'"'"'s agnhost image"' > "$r/etc/os-release"
  printf 'user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' >> "$r/etc/group"
  fill_fake_registry "$r/var/registry" pause testing "$pause_tar"
}
# fill_fake_registry DIR NAME TAG OCI_TAR: the image of OCI_TAR as NAME:TAG in the layout
# `agnhost fake-registry-server` serves from /var/registry (upstream's agnhost Dockerfile fills it
# with registry.k8s.io/pause:3.10.2 as pause:testing, fakeregistryserver/images.txt; the node e2e
# image pull tests pull it through the server): NAME/manifests/TAG holds the digest, each
# manifest and blob at NAME/{manifests,blobs}/sha256/<2 hex>/<digest>/data.
fill_fake_registry() {
  local dir=$1/$2 tag=$2:$3 w d kind
  w=$(mktemp -d) && tar -xf "$4" -C "$w" || return
  mkdir -p "$dir/manifests"
  jq -r '.manifests[0].digest' "$w/index.json" > "$dir/manifests/$3"
  for f in "$w"/blobs/sha256/*; do
    d=${f##*/}
    kind=blobs; jq -e '.mediaType | test("manifest|index")' "$f" >/dev/null 2>&1 && kind=manifests
    mkdir -p "$dir/$kind/sha256/${d:0:2}/$d" && cp "$f" "$dir/$kind/sha256/${d:0:2}/$d/data"
  done
  rm -rf "$w"
  [ -s "$dir/manifests/$3" ] || { log "no manifest for $tag in $4"; return 1; }
}
e2e_image agnhost:2.63.0,2.55 fill_agnhost "{\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"pause\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\"}" \
  "[/agnhost-2 entrypoint-tester ok] OpenBSD" sh -c 'echo $(/agnhost-2 entrypoint-tester ok) $(nc -h 2>&1 | head -1 | cut -d" " -f1)'

# nonewprivs: a setuid-root program printing its effective uid.
fill_nonewprivs() { install -m 4755 "$BIN/nnp" "$1/bin/nnp"; }
e2e_image nonewprivs:1.4 fill_nonewprivs "{\"Cmd\":[\"nnp\"],\"Env\":[\"$ENV_PATH\"]}" "Effective uid: 0" nnp

# nonroot: busybox whose image user is 1234.
fill_nothing() { :; }
e2e_image nonroot:1.5 fill_nothing "{\"User\":\"1234\",\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" "1234" id -u

# nginx stand-in: the selected tests only need a long-running server on port 80 that
# differs from busybox; busybox httpd serves the same default page.
fill_nginx() {
  mkdir -p "$1/usr/share/nginx/html"
  echo '<html><body><h1>Welcome to nginx!</h1></body></html>' > "$1/usr/share/nginx/html/index.html"
}
e2e_image nginx:1.27-0,1.15-4 fill_nginx "{\"Cmd\":[\"httpd\",\"-f\",\"-p\",\"80\",\"-h\",\"/usr/share/nginx/html\"],\"Env\":[\"$ENV_PATH\"],\"ExposedPorts\":{\"80/tcp\":{}}}" \
  "<html><body><h1>Welcome to nginx!</h1></body></html>" cat /usr/share/nginx/html/index.html

# glibc-dns-testing: the DNS tests' second prober, with glibc's resolver (dig, getent), and the
# storage tests' default pod image. Upstream's is Debian: /bin/sh is dash and dd is coreutils'
# (the block multiVolume tests write with `dd oflag=nocache`, which busybox's dd refuses; busybox's
# ash would run its own dd applet whatever PATH says). The links are removed before the copy,
# which would otherwise write through them into busybox.
fill_glibc_dns_testing() {
  fill_dns_tools "$1" && rm -f "$1/bin/sh" "$1/bin/dd" && copy_with_libs "$1" /bin/dash /bin/dd && ln -s dash "$1/bin/sh"
}
e2e_image glibc-dns-testing:2.0.0 fill_glibc_dns_testing "{\"Cmd\":[\"sh\"],\"Env\":[\"$ENV_PATH\"]}" \
  "127.0.0.1 localhost" sh -c 'echo "127.0.0.1 localhost" > /etc/hosts; dig -v 2>&1 | grep -q DiG && getent hosts localhost | tr -s " "'

# nautilus and kitten (kubectl's Update Demo): agnhost test-webserver serving a picture and
# the data.json that names it, from /, as upstream's images on the agnhost base.
fill_update_demo() {
  local which=$1 r=$2
  fill_agnhost "$r" && cp "$SRC/$which/html/$which.jpg" "$SRC/$which/html/data.json" "$r/"
}
fill_nautilus() { fill_update_demo nautilus "$1"; }
fill_kitten() { fill_update_demo kitten "$1"; }
for demo in nautilus kitten; do
  e2e_image "$demo:1.8" "fill_$demo" "{\"Entrypoint\":[\"/agnhost\"],\"Cmd\":[\"test-webserver\"],\"Env\":[\"$ENV_PATH\"],\"WorkingDir\":\"/\"}" \
    "$demo.jpg" grep -o "$demo.jpg" /data.json
done

# sample-apiserver (the aggregation tests) of the pinned release, and etcd under the tag its
# Deployment names, with the etcd this repo builds for the control plane.
fill_sample_apiserver() { cp "$BIN/sample-apiserver" "$1/sample-apiserver"; }
e2e_image sample-apiserver:1.29.2 fill_sample_apiserver "{\"Entrypoint\":[\"/sample-apiserver\"],\"Env\":[\"$ENV_PATH\"]}" \
  "ok" sh -c '/sample-apiserver --help >/dev/null 2>&1 && echo ok'
fill_etcd() { install_with_libs "$1" "$BIN/etcd" /usr/local/bin/etcd; }
e2e_image registry.k8s.io/etcd:3.6.8-0 fill_etcd "{\"Env\":[\"$ENV_PATH\"]}" \
  "ok" sh -c '/usr/local/bin/etcd --version >/dev/null && echo ok'

# hostpathplugin in the proxy mode the DRA tests run in their kubelet-plugin pods
# (test/e2e/dra/utils/deploy.go, which picks the newest tag the storage-csi manifests name):
# the real driver's image, as --csi makes it (hack/build-csi.sh builds its binary).
hostpath_image

log "conformance images ready"

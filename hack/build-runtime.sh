#!/usr/bin/env bash
# Builds the node's container runtime from the Go module proxy (issue #20: containerd 2 as
# the default runtime, Debian's containerd 1.6 kept as RUNTIME=containerd1), at the versions
# pinned in hack/versions.env, into the cache outside the repo:
#   - containerd-$CONTAINERD2_VERSION/bin/{containerd,containerd-shim-runc-v2,ctr}
#   - runc-$RUNC_VERSION/bin/runc
# Only what is missing is built; a second run with the same pins does nothing.
#   hack/build-runtime.sh [containerd|runc]...   only those (default: both)
#   hack/build-runtime.sh --paths                prints NAME=DIR of each bin dir, builds nothing
# The binaries never go into _output/bin: that directory is on the PATH of every hack/
# script and of the daemons they start, where they would shadow Debian's containerd 1.6, ctr
# and runc. hack/containerd2.sh names them by their full paths.
#
# Each is built as upstream's Makefile builds it, in the module's own directory in the Go
# module cache, with its own go.mod and go.sum: the exact dependencies of the release (neither
# module has a replace directive, so no tools module under hack/tools/ is needed; one module
# requiring both would let MVS move each one's dependencies to the other's).
#   containerd, ctr: cgo, -buildmode=pie, tags urfave_cli_no_docs no_btrfs (no_btrfs leaves
#     out the btrfs snapshotter and its need for libbtrfs-dev; this host runs overlayfs),
#     version.Version/Revision/Package in the ldflags.
#   containerd-shim-runc-v2: static, no cgo, tags no_grpc (upstream's SHIM_GO_TAGS).
#   runc: cgo with libseccomp (tag seccomp, Debian's libseccomp-dev), static-pie as
#     upstream's release binary (`make static`), so that it needs no library at run time.
# KTS_NICE=19 and KTS_GO_P=1 build at the lowest priority on one core (a build beside a
# test run); by default a build takes the whole machine. Measured so, with an empty Go build
# cache (the modules already downloaded), beside a conformance run: containerd 151 s, runc 19 s.
source "$(dirname "$0")/lib.sh"

CONTAINERD_MOD=github.com/containerd/containerd/v2
RUNC_MOD=github.com/opencontainers/runc
CTRD_DIR=$CONTAINERD2_BIN
RUNC_DIR=$RUNC2_BIN

if [ "${1:-}" = --paths ]; then
  echo "containerd=$CTRD_DIR"; echo "runc=$RUNC_DIR"; exit 0
fi
PARTS=(containerd runc)
for a in "$@"; do [[ " ${PARTS[*]} " = *" $a "* ]] || die "usage: $0 [--paths | ${PARTS[*]}...]"; done
ARGS=("$@")
wanted() { [ ${#ARGS[@]} -eq 0 ] || [[ " ${ARGS[*]} " = *" $1 "* ]]; }

# -mod=readonly: the module cache is read-only, and runc's zip carries a vendor/modules.txt
# without the vendored code (the default -mod=vendor would fail on it).
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly${KTS_GO_P:+ -p=$KTS_GO_P}"
command -v go >/dev/null || die "go is not installed (need Go >= 1.25 for containerd $CONTAINERD2_VERSION)"

# module_dir MODULE VERSION: the module's source in the Go module cache (downloaded if missing).
module_dir() {
  local dir
  dir=$(go mod download -json "$1@$2" 2>&1 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p') || true
  if [ -z "$dir" ] || [ ! -f "$dir/go.mod" ]; then
    die "cannot download $1@$2 from the Go module proxy: $(go mod download "$1@$2" 2>&1 | head -2 | tr '\n' ' ')"
  fi
  echo "$dir"
}
# commit MODULE VERSION: the commit of the tag, when the proxy recorded it (else empty).
commit() { go list -m -f '{{with .Origin}}{{.Hash}}{{end}}' "$1@$2" 2>/dev/null || true; }

# build NAME MODULE VERSION DIR BUILD BIN...: unless DIR holds every BIN, builds it with the
# function BUILD OUTDIR VERSION run in the module's directory (hack/lib.sh cached_build).
build() {
  local name=$1 module=$2 version=$3 dir=$4 fn=$5; shift 5
  ! have_bins "$dir" "$@" || { log "$name $version already built ($dir)"; return 0; }
  local src
  src=$(module_dir "$module" "$version")
  cached_build "$name" "$version" "$dir" "$src" "$fn" "$@"
}

# containerd as its Makefile (and Makefile.linux) builds a release: `make binaries`.
build_containerd() {
  local out=$1 version=$2 ld
  ld="-X $CONTAINERD_MOD/version.Version=$version -X $CONTAINERD_MOD/version.Revision=$(commit "$CONTAINERD_MOD" "$version")"
  ld+=" -X $CONTAINERD_MOD/version.Package=$CONTAINERD_MOD -s -w"
  for cmd in containerd ctr; do
    echo "== $cmd"
    CGO_ENABLED=1 go build -trimpath -buildmode=pie -tags "urfave_cli_no_docs no_btrfs" -ldflags "$ld" \
      -o "$out/$cmd" "./cmd/$cmd" || return 1
  done
  echo "== containerd-shim-runc-v2"
  CGO_ENABLED=0 go build -trimpath -tags "urfave_cli_no_docs no_btrfs no_grpc" -ldflags "$ld -extldflags -static" \
    -o "$out/containerd-shim-runc-v2" ./cmd/containerd-shim-runc-v2
}

# runc as its Makefile's `static` target (the release binary): the version comes from the
# embedded VERSION file, the commit from -X main.gitCommit.
build_runc() {
  local out=$1 version=$2
  CGO_ENABLED=1 go build -trimpath -buildmode=pie -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-X main.gitCommit=$(commit "$RUNC_MOD" "$version") -linkmode external -extldflags -static-pie" \
    -o "$out/runc" .
}

mkdir -p "$LOGS"
if wanted containerd; then
  # containerd's cgo: a C compiler (btrfs, its only C library, is left out).
  apt_install gcc libc6-dev
  build containerd "$CONTAINERD_MOD" "$CONTAINERD2_VERSION" "$CTRD_DIR" build_containerd containerd containerd-shim-runc-v2 ctr
  v=$("$CTRD_DIR/containerd" --version 2>&1) || die "$CTRD_DIR/containerd --version failed: $v"
  [[ $v = *" $CONTAINERD2_VERSION"* ]] || die "$CTRD_DIR/containerd --version says '$v', want $CONTAINERD2_VERSION"
fi
if wanted runc; then
  # runc's seccomp support links libseccomp (found through pkg-config); static, so the .a too.
  apt_install gcc libc6-dev libseccomp-dev pkgconf
  build runc "$RUNC_MOD" "$RUNC_VERSION" "$RUNC_DIR" build_runc runc
  v=$("$RUNC_DIR/runc" --version 2>&1) || die "$RUNC_DIR/runc --version failed: $v"
  [[ $v = "runc version ${RUNC_VERSION#v}"* ]] || die "$RUNC_DIR/runc --version says '${v%%$'\n'*}', want $RUNC_VERSION"
  grep -q '^libseccomp: ' <<<"$v" || die "$RUNC_DIR/runc was built without seccomp ($(tr '\n' ' ' <<<"$v"))"
fi
# The runc containerd was released with (its script/setup/runc-version): another one works,
# but say so, since it is the pair upstream tests.
want=$(cat "$(module_dir "$CONTAINERD_MOD" "$CONTAINERD2_VERSION")/script/setup/runc-version" 2>/dev/null || true)
[ -z "$want" ] || [ "$want" = "$RUNC_VERSION" ] \
  || log "warning: containerd $CONTAINERD2_VERSION is tested with runc $want, hack/versions.env pins $RUNC_VERSION"
log "runtime ready: $CTRD_DIR (containerd $CONTAINERD2_VERSION), $RUNC_DIR (runc $RUNC_VERSION)"

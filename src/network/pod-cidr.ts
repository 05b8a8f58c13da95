// The node's pod CIDR handed to the runtime, as upstream's updatePodCIDR (kubelet_network.go):
// the config's podCIDR at start (the standalone and node e2e way), then the Node's as the
// controller assigns it, each through CRI UpdateRuntimeConfig (containerd fills its CNI config
// template with it). An unchanged CIDR is not sent again; a failed update is logged and tried
// again with the next one, as upstream.
import type { Logger } from '../log/log.ts';

export interface RuntimeConfigUpdater {
  updateRuntimeConfig(request: { runtimeConfig: { networkConfig: { podCidr: string } } }): Promise<unknown>;
}

export function podCIDRUpdater(cri: RuntimeConfigUpdater, log: Pick<Logger, 'info' | 'error'>): (cidr: string) => Promise<void> {
  let current = '';
  return async (cidr) => {
    if (!cidr || cidr === current) return;
    try {
      await cri.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: cidr } } });
      log.info('Updating Pod CIDR', { originalPodCIDR: current, newPodCIDR: cidr });
      current = cidr;
    } catch (e) {
      log.error('Pod CIDR update failed', { podCIDR: cidr, err: e });
    }
  };
}

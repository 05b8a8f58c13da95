// What the kubelet side of a kind of plugin implements to take the plugins found under
// <root-dir>/plugins_registry (upstream's cache.PluginHandler). For each socket the manager
// calls validatePlugin, then registerPlugin, and deRegisterPlugin once the socket is gone or
// replaced; never two of them at once for one socket.

// PluginInfo.type values with a kubelet handler (upstream's registerapi.CSIPlugin, DRAPlugin).
export const CSI_PLUGIN = 'CSIPlugin';
export const DRA_PLUGIN = 'DRAPlugin';

export interface PluginHandler {
  /** Throws when the plugin cannot be taken (no supported version, ...); the plugin is told why. */
  validatePlugin(name: string, endpoint: string, versions: string[]): void;
  /** Rejects when the plugin could not be set up; the plugin is told why, and it is tried again later. */
  registerPlugin(name: string, endpoint: string, versions: string[], pluginClientTimeoutMs?: number): Promise<void>;
  deRegisterPlugin(name: string, endpoint: string): void;
}

// Whether a plugin's answer to GetInfo can go to a handler at all (upstream's checks in
// operationGenerator.GenerateRegisterPluginFunc); the handler's validatePlugin judges the rest.
import type { PluginInfo__Output } from './generated/pluginregistration/PluginInfo.ts';

export interface CheckedPluginInfo {
  type: string;
  name: string;
  endpoint: string;
  versions: string[];
}

/** The plugin as its handler sees it, or the error the plugin is told (upstream's messages). */
export function checkPluginInfo(
  info: PluginInfo__Output,
  socketPath: string,
  hasHandler: (type: string) => boolean,
): CheckedPluginInfo | { error: string } {
  if (!hasHandler(info.type))
    return { error: `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socketPath}` };
  // Not checked upstream, where every handler keys its plugins by name and an empty one is refused later or never found.
  if (!info.name) return { error: `RegisterPlugin error -- plugin of type ${info.type} at socket ${socketPath} has no name` };
  // A plugin may serve its API on another socket; by default it is the registration socket itself.
  return { type: info.type, name: info.name, endpoint: info.endpoint || socketPath, versions: info.supportedVersions };
}

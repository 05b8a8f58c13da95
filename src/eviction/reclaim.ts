// What the node can free on its own before it evicts a pod (upstream's
// buildSignalToNodeReclaimFuncs): dead containers and unused images, on whichever
// filesystem they occupy. Memory and pids have nothing to reclaim but pods.
import type { FsLayout, Signal } from './types.ts';

/** 'containers': delete all unused containers; 'images': delete unused images. In this order. */
export type NodeReclaimAction = 'containers' | 'images';

/** Pure: the actions to try for a signal under pressure, in order; [] when only evicting pods helps. */
export function nodeReclaimActions(signal: Signal, layout: FsLayout): NodeReclaimAction[] {
  const fs = signal.split('.')[0];
  if (fs !== 'nodefs' && fs !== 'imagefs' && fs !== 'containerfs') return [];
  const { dedicatedImageFs: image, splitContainerImageFs: split } = layout;
  if (image && !split) {
    // Images and writable layers on their own filesystem: the node's holds only logs and
    // volumes, which belong to running pods.
    return fs === 'nodefs' ? [] : ['containers', 'images'];
  }
  if (image && split) {
    // Images alone on theirs; writable layers on the node's.
    return fs === 'imagefs' ? ['images'] : ['containers'];
  }
  // One filesystem for everything.
  return ['containers', 'images'];
}

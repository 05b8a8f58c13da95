// Builders of resource requirements, containers and pods for the resource tests in this folder (as
// upstream's testing packages, e.g. pkg/kubelet/container/testing). Not named .test.ts, so the unit
// test glob does not run it as a test file; tsconfig.build.json leaves it out of dist.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container, Pod, ResourceRequirements } from 'kubernetes-types/core/v1.js';

type Quantities = Record<string, string>;

/** Requests and limits, each left out when not given, as a decoded pod spec has them. */
export const requirements = (requests?: Quantities, limits?: Quantities): ResourceRequirements => ({
  ...(requests ? { requests } : {}),
  ...(limits ? { limits } : {}),
});

/** CPU and memory requests and limits in the argument order of test/e2e/common/node/pod_level_resources.go; unset ones left out. */
export function cpuMemory(cpuReq?: string, cpuLim?: string, memReq?: string, memLim?: string): ResourceRequirements {
  const requests: Quantities = {};
  const limits: Quantities = {};
  if (cpuReq) requests.cpu = cpuReq;
  if (memReq) requests.memory = memReq;
  if (cpuLim) limits.cpu = cpuLim;
  if (memLim) limits.memory = memLim;
  return requirements(Object.keys(requests).length ? requests : undefined, Object.keys(limits).length ? limits : undefined);
}

/** A container with those requests and limits, and a restartPolicy (a sidecar's Always) when given. */
export const container = (name: string, requests?: Quantities, limits?: Quantities, restartPolicy?: string): Container => ({
  name,
  resources: requirements(requests, limits),
  ...(restartPolicy ? { restartPolicy } : {}),
});

/** A container with resources built by cpuMemory or requirements. */
export const withResources = (name: string, resources: ResourceRequirements = {}): Container => ({ name, resources });

/** A pod with pod-level resources (spec.resources) when given, over these containers. */
export const podLevel = (resources: ResourceRequirements | undefined, containers: Container[]): Pod => ({
  spec: { containers, ...(resources ? { resources } : {}) } as Pod['spec'],
});

/** A cgroup v1 root of these mounted controllers in a directory (each with its cgroup.procs, as a mount has). */
export function mountV1(root: string, ...controllers: string[]): void {
  for (const c of controllers) {
    mkdirSync(join(root, c), { recursive: true });
    writeFileSync(join(root, c, 'cgroup.procs'), '');
  }
}

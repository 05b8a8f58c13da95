import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseKubeletConfig } from '../config/kubelet-config.ts';
import { effectiveOptions, type KubeletOptions } from './options.ts';

const given = (yaml: string): KubeletOptions => ({
  kubeconfig: '/k',
  config: parseKubeletConfig(`apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${yaml}`),
  nodeName: 'n',
  certDir: '/c',
  runtimeEndpoint: '/r',
  rootDir: '/root',
  nodeLabels: {},
  taints: [],
  cniConfDir: '/cni',
  networkPlugin: 'cni',
  systemCgroups: {} as KubeletOptions['systemCgroups'],
});

test('effectiveOptions: the runtime cgroup driver and the reserved quantities replace the given ones, the rest kept', () => {
  const cases: {
    name: string;
    yaml: string;
    driver: 'cgroupfs' | 'systemd';
    reserved: { kubeReserved: Record<string, string>; systemReserved: Record<string, string> };
    want: { cgroupDriver: string; kubeReserved: Record<string, string>; systemReserved: Record<string, string> };
  }[] = [
    {
      name: 'the runtime says systemd; no reserved CPUs: the reserved quantities as given',
      yaml: 'cgroupDriver: cgroupfs\nkubeReserved: {cpu: 500m}\n',
      driver: 'systemd',
      reserved: { kubeReserved: { cpu: '500m' }, systemReserved: {} },
      want: { cgroupDriver: 'systemd', kubeReserved: { cpu: '500m' }, systemReserved: {} },
    },
    {
      name: 'reservedSystemCPUs stand for the cpu',
      yaml: 'kubeReserved: {cpu: 500m, memory: 1Gi}\n',
      driver: 'cgroupfs',
      reserved: { kubeReserved: { memory: '1Gi' }, systemReserved: { cpu: '2' } },
      want: { cgroupDriver: 'cgroupfs', kubeReserved: { memory: '1Gi' }, systemReserved: { cpu: '2' } },
    },
  ];
  for (const c of cases) {
    const g = given(c.yaml);
    const o = effectiveOptions(g, { cgroupDriver: c.driver }, c.reserved);
    const { cgroupDriver, kubeReserved, systemReserved } = o.config;
    assert.deepEqual({ cgroupDriver, kubeReserved, systemReserved }, c.want, c.name);
    assert.equal(o.config.maxPods, g.config.maxPods, c.name);
    assert.equal(o.nodeName, 'n', c.name);
    assert.notEqual(o.config, g.config, `${c.name}: the given config is not changed`);
  }
});

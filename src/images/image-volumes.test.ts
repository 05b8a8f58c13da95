import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { type ImageVolumePull, containerImageVolumes, pullImageVolumes } from './image-volumes.ts';
import type { ImageEvent, ImageToPull, PullResult } from './puller.ts';

const spec = (image: string) => ({ image, userSpecifiedImage: image.replace('sha256:', ''), annotations: {} });
const pulled = (name: string): ImageVolumePull => ({ spec: spec(`sha256:${name}`) });
const failed = (reason: string, message: string): ImageVolumePull => ({ waiting: { reason, message } });

test('containerImageVolumes: the images of the image volumes a container mounts, or the failure of one (toKubeContainerImageVolumes)', () => {
  const pulls = new Map<string, ImageVolumePull>([
    ['tools', pulled('tools')],
    ['models', pulled('models')],
    ['broken', failed('ErrImagePull', 'not found')],
    ['waiting', failed('ImagePullBackOff', 'Back-off pulling image "w"')],
  ]);
  const mounting = (...names: string[]): Container => ({ name: 'c', volumeMounts: names.map((n) => ({ name: n, mountPath: `/${n}` })) });
  const cases: { name: string; c: Container; want: ReturnType<typeof containerImageVolumes> }[] = [
    { name: 'no volume mounts', c: { name: 'c' }, want: { specs: new Map() } },
    { name: 'only volumes of other kinds', c: mounting('scratch', 'cfg'), want: { specs: new Map() } },
    {
      name: 'image volumes it mounts, not those it does not',
      c: mounting('scratch', 'tools'),
      want: { specs: new Map([['tools', spec('sha256:tools')]]) },
    },
    {
      name: 'one volume mounted twice (a subPath): one image',
      c: mounting('tools', 'tools', 'models'),
      want: {
        specs: new Map([
          ['tools', spec('sha256:tools')],
          ['models', spec('sha256:models')],
        ]),
      },
    },
    {
      name: 'a volume whose pull failed: the container fails with its reason and message',
      c: mounting('tools', 'broken'),
      want: { failed: { reason: 'ErrImagePull', message: 'not found' }, events: ['Error: ErrImagePull'] },
    },
    {
      name: 'two failed: an event each, the last one is the waiting reason',
      c: mounting('broken', 'tools', 'waiting'),
      want: {
        failed: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "w"' },
        events: ['Error: ErrImagePull', 'Error: ImagePullBackOff'],
      },
    },
    {
      name: 'a failed volume it does not mount: no matter',
      c: mounting('models'),
      want: { specs: new Map([['models', spec('sha256:models')]]) },
    },
  ];
  for (const k of cases) assert.deepEqual(containerImageVolumes(k.c, pulls), k.want, k.name);
});

test('pullImageVolumes: each image volume ensured with its reference and pullPolicy, per pod and volume; others left alone', async () => {
  const pod: Pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', annotations: { team: 'ml' } },
    spec: {
      containers: [],
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'tools', image: { reference: 'reg.example/tools:1', pullPolicy: 'IfNotPresent' } },
        { name: 'gone', image: { reference: 'reg.example/gone:1', pullPolicy: 'Never' } },
      ] as NonNullable<Pod['spec']>['volumes'],
    },
  };
  const asked: [ImageToPull, string][] = [];
  const events: ImageEvent[] = [];
  const images = {
    ensure: async (c: ImageToPull, key: string, emit: (e: ImageEvent) => void, p?: Pod): Promise<PullResult> => {
      asked.push([c, key]);
      assert.equal(p, pod, 'with the pod, for its pull secrets');
      if (c.imagePullPolicy === 'Never') return { waiting: { reason: 'ErrImageNeverPull', message: 'not present' } };
      emit({ type: 'Normal', reason: 'Pulled', message: 'present' });
      return { imageRef: 'sha256:t00l5' };
    },
  };
  const pulls = await pullImageVolumes(pod, images, (e) => events.push(e));
  assert.deepEqual(asked, [
    [{ image: 'reg.example/tools:1', imagePullPolicy: 'IfNotPresent' }, 'u1/volume/tools'],
    [{ image: 'reg.example/gone:1', imagePullPolicy: 'Never' }, 'u1/volume/gone'],
  ]);
  assert.deepEqual(
    pulls,
    new Map<string, ImageVolumePull>([
      ['tools', { spec: { image: 'sha256:t00l5', userSpecifiedImage: 'reg.example/tools:1', annotations: { team: 'ml' } } }],
      ['gone', { waiting: { reason: 'ErrImageNeverPull', message: 'not present' } }],
    ]),
  );
  assert.deepEqual(events, [{ type: 'Normal', reason: 'Pulled', message: 'present' }]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type FlagForm,
  boolForm,
  boolMapForm,
  colonMultimapForm,
  durationForm,
  intForm,
  langleMapForm,
  mapForm,
  mapNoSplitForm,
  quantityForm,
  reservedMemoryForm,
  stringsForm,
  taintsForm,
  vmoduleForm,
} from './flag-forms.ts';

// Each row: the form, the occurrences of one flag in order, the value they give (or the error).
const cases: [string, FlagForm, string[], unknown][] = [
  ['bool true', boolForm, ['true'], true],
  ['bool as strconv.ParseBool', boolForm, ['F'], false],
  ['bool: last wins', boolForm, ['1', '0'], false],
  ['bool: not one', boolForm, ['yes'], /ParseBool/],
  ['int', intForm, ['10250'], 10250],
  ['int negative', intForm, ['-999'], -999],
  ['int base 0', intForm, ['0x10'], 16],
  ['int octal', intForm, ['010'], 8],
  ['int: not one', intForm, ['1.5'], /ParseInt/],
  ['duration keeps the text', durationForm, ['1m30s'], '1m30s'],
  ['duration: not one', durationForm, ['90'], /invalid duration/],
  ['quantity', quantityForm, ['1Mi'], '1Mi'],
  ['quantity: not one', quantityForm, ['lots'], /quantities/],
  ['strings: comma-separated, repeats append', stringsForm, ['a,b', 'c'], ['a', 'b', 'c']],
  ['strings: empty is none', stringsForm, [''], []],
  ['map: pairs trimmed, repeats add', mapForm, ['cpu=200m, memory = 1Gi', 'pid=100'], { cpu: '200m', memory: '1Gi', pid: '100' }],
  ['map: value may hold =', mapForm, ['a=b=c'], { a: 'b=c' }],
  ['map: a pair without =', mapForm, ['cpu'], /malformed pair, expect string=string/],
  [
    'eviction thresholds with <',
    langleMapForm,
    ['memory.available<1Gi,nodefs.available<10%'],
    { 'memory.available': '1Gi', 'nodefs.available': '10%' },
  ],
  ['eviction thresholds: = is not <', langleMapForm, ['memory.available=1Gi'], /expect string<string/],
  ['no split: one pair an occurrence', mapNoSplitForm, ['a=1,2', 'b=3'], { a: '1,2', b: '3' }],
  ['feature gates', boolMapForm, ['A=true,B=false'], { A: true, B: false }],
  ['feature gates: not a bool', boolMapForm, ['A=yes'], /invalid value of yes/],
  ['headers: repeats append', colonMultimapForm, ['a:hello,b:again', 'b:beautiful'], { a: ['hello'], b: ['again', 'beautiful'] }],
  ['taints: each occurrence replaces', taintsForm, ['a=b:NoSchedule', 'c:NoExecute'], [{ key: 'c', effect: 'NoExecute' }]],
  ['taints: no effect', taintsForm, ['a=b'], /invalid taint spec/],
  [
    'reserved memory: repeats append',
    reservedMemoryForm,
    ['0:memory=1Gi,hugepages-1M=2Gi', '1:memory=2Gi'],
    [
      { numaNode: 0, limits: { memory: '1Gi', 'hugepages-1M': '2Gi' } },
      { numaNode: 1, limits: { memory: '2Gi' } },
    ],
  ],
  ['reserved memory: no node', reservedMemoryForm, ['memory=1Gi'], /numaNodeID:type=quantity/],
  [
    'vmodule',
    vmoduleForm,
    ['kubelet*=4,pleg=2'],
    [
      { filePattern: 'kubelet*', verbosity: 4 },
      { filePattern: 'pleg', verbosity: 2 },
    ],
  ],
];

for (const [name, form, texts, want] of cases) {
  test(`flag form: ${name}`, () => {
    const run = () => texts.reduce<unknown>((prev, t) => form(t, prev), undefined);
    if (want instanceof RegExp) assert.throws(run, want);
    else assert.deepEqual(run(), want);
  });
}

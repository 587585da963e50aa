// The sluiced container's memory follows the configuration: rendered with
// `memory` empty, its request and limit (equal: Guaranteed QoS) grow by
// exactly the flow caches' size when flowLimit or the PMD count grows, and
// include DPDK's memory in no-huge mode only; a given quantity is kept when
// it is enough.
//
// Usage: node check-memory.mjs CHART (helm from $SLUICE_HELM)
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

const chart = process.argv[2];
const helm = process.env.SLUICE_HELM;
let passed = 0, failed = 0;
const check = (ok, what) => { ok ? passed++ : failed++; console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); };

// The sluiced container's memory request and limit, in MiB, for these --set values.
function sluicedMemoryMiB(sets) {
  const args = ['template', 'sluice', chart, '--namespace', 'kube-system'];
  for (const s of sets) args.push('--set', s);
  const r = spawnSync(helm, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`helm template ${sets.join(' ')}: ${r.stderr}`);
  const ds = parseAllDocuments(r.stdout).map((d) => d.toJS()).find((o) => o && o.kind === 'DaemonSet');
  const c = ds.spec.template.spec.containers.find((x) => x.name === 'sluiced');
  const mib = (q) => {
    const m = /^([0-9]+)(Mi|Gi)$/.exec(q);
    if (!m) throw new Error(`unexpected quantity ${q}`);
    return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
  };
  if (c.resources.requests.memory !== c.resources.limits.memory) throw new Error('memory request differs from limit');
  return mib(c.resources.limits.memory);
}

const MiB = 1024 * 1024;
const base = sluicedMemoryMiB([]);  // one PMD, flowLimit 200000, no-huge
const moreFlows = sluicedMemoryMiB(['dataplane.cache.flowLimit=1000000']);
check(Math.abs(moreFlows - base - (800000 * 384) / MiB) < 1,
  `flowLimit 200000 -> 1000000 adds 800000 x 384 B on one PMD (${base}Mi -> ${moreFlows}Mi)`);
const twoPmds = sluicedMemoryMiB(['dataplane.pmdCores=1\\,2', 'dataplane.mainCore=0']);
const perPmd = (200000 * 384 + 8 * MiB + 8192 * 128) / MiB;
check(Math.abs(twoPmds - base - perPmd) < 1, `a second PMD adds its flow caches, ${perPmd.toFixed(1)}Mi (${base}Mi -> ${twoPmds}Mi)`);
const fourPmdsMoreFlows = sluicedMemoryMiB(['dataplane.pmdCores=1\\,2\\,3\\,4', 'dataplane.mainCore=0',
  'dataplane.cache.flowLimit=1000000']);
check(fourPmdsMoreFlows > twoPmds && fourPmdsMoreFlows > moreFlows,
  `four PMDs with flowLimit 1000000 need more than either alone (${fourPmdsMoreFlows}Mi)`);
const noSmc = sluicedMemoryMiB(['dataplane.cache.smcEnable=false']);
check(base - noSmc === 0, `the SMC's 8Mi per PMD are counted whether it runs or not: smc-enable switches it while sluiced runs (${base}Mi -> ${noSmc}Mi with it off)`);
const huge = sluicedMemoryMiB(['hugepages.enabled=true']);
check(base - huge === 1024, `with hugepages DPDK's 1024Mi come out of the hugepages, not memory (${huge}Mi)`);
check(sluicedMemoryMiB(['memory=8Gi']) === 8192, 'a given quantity that is enough is kept');

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

// The DaemonSet's checksum/config covers only the settings sluiced applies
// at start: a change of a live setting in the values changes the ConfigMap's
// live.json (which sluiced re-reads while running) and nothing of the
// DaemonSet, so no node restarts; a change of a restart-only setting changes
// the checksum, so the DaemonSet rolls. The chart's split is held to
// sluiced's own list (config_keys.def, printed by the checker): live.json has
// only live keys, the per-node configs only restart-only ones.
//
// Usage: node check-config-checksum.mjs CHART SLUICED_CONFIG_CHECK (helm from $SLUICE_HELM)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

const [chart, checker] = process.argv.slice(2);
if (!chart || !checker) { console.error('usage: check-config-checksum.mjs CHART SLUICED_CONFIG_CHECK'); process.exit(2); }
const helm = process.env.SLUICE_HELM;
let passed = 0, failed = 0;
function check(name, fn) {
  try { fn(); passed++; console.log(`ok   ${name}`); } catch (e) { failed++; console.log(`FAIL ${name}\n     ${e.message.split('\n').join('\n     ')}`); }
}

const keys = spawnSync(checker, ['--keys'], { encoding: 'utf8' });
assert.equal(keys.status, 0, keys.stderr);
const liveness = new Map(keys.stdout.trim().split('\n').map((l) => l.split(' ')));

function render(sets) {
  const args = ['template', 'sluice', chart, '--namespace', 'kube-system', '--kube-version', '1.34.0'];
  for (const s of sets) args.push('--set', s);
  const r = spawnSync(helm, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`helm template ${sets.join(' ')}: ${r.stderr}`);
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
  const ds = objects.find((o) => o.kind === 'DaemonSet');
  const cm = objects.find((o) => o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
  return { ds, cm, checksum: ds.spec.template.metadata.annotations['checksum/config'] };
}

const base = render([]);

check('live.json holds only keys sluiced changes while running', () => {
  const live = JSON.parse(base.cm.data['live.json']);
  assert.ok(Object.keys(live).length > 0, 'live.json is empty');
  for (const k of Object.keys(live)) assert.equal(liveness.get(k), 'live', `${k} in live.json`);
});

check('the per-node configs hold only settings sluiced applies at start', () => {
  for (const [file, text] of Object.entries(base.cm.data)) {
    if (file !== 'default.json' && !/^node-.+\.json$/.test(file)) continue;
    for (const k of Object.keys(JSON.parse(text)))
      assert.notEqual(liveness.get(k), 'live', `${file}: ${k} is live; it belongs in live.json`);
  }
});

check('sluiced reads live.json from the ConfigMap volume, mounted whole (updates reach it)', () => {
  const pod = base.ds.spec.template.spec;
  const sluiced = pod.containers.find((c) => c.name === 'sluiced');
  const at = sluiced.args.lastIndexOf('--config');
  assert.ok(at >= 0, 'a --config argument');
  const path = sluiced.args[at + 1];
  const mount = sluiced.volumeMounts.find((m) => path.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `a mount holding ${path}`);
  assert.equal(mount.subPath, undefined, 'no subPath: the kubelet does not update those');
  const volume = pod.volumes.find((v) => v.name === mount.name);
  assert.equal(volume.configMap?.name, base.cm.metadata.name);
  assert.equal(path.slice(mount.mountPath.length + 1), 'live.json');
});

const liveChanges = [['dataplane.logLevel=debug'], ['dataplane.txFlushInterval=50'],
  ['dataplane.pmdMaxSleepUs=500'], ['dataplane.cache.emcInsertInvProb=0'], ['dataplane.cache.smcEnable=false']];
for (const sets of liveChanges) {
  check(`${sets.join(' ')}: live.json changes, the DaemonSet does not`, () => {
    const r = render(sets);
    assert.equal(r.checksum, base.checksum, 'checksum/config changed');
    assert.deepEqual(r.ds, base.ds, 'the DaemonSet changed (its pods would restart)');
    assert.notEqual(r.cm.data['live.json'], base.cm.data['live.json'], 'live.json did not change');
  });
}

const restartChanges = [['dataplane.mbufs=65536'], ['dataplane.cache.flowLimit=100000'],
  ['dataplane.cache.emcEntries=4096'], ['dataplane.maxPorts=16'], ['dataplane.stateDir=/var/lib/sluice-2']];
for (const sets of restartChanges) {
  check(`${sets.join(' ')}: checksum/config changes (the DaemonSet rolls)`, () => {
    const r = render(sets);
    assert.notEqual(r.checksum, base.checksum);
    assert.equal(r.cm.data['live.json'], base.cm.data['live.json']);
  });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

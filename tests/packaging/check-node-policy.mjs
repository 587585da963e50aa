// sluice-cni's node config, the ConfigMap's cni.json that install-cni puts at
// the host's /etc/sluice/cni.json, follows the values: cni.nodePolicy's caps
// and any directory it sets, socketDirRoot from vhostUser.socketDir,
// routedPrefixRanges from network.routedPrefixRanges when set, and nothing
// else (a directory left unset keeps the plugin's default).
//
// Usage: node check-node-policy.mjs CHART (helm from $SLUICE_HELM)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

const chart = process.argv[2];
const helm = process.env.SLUICE_HELM;
let passed = 0, failed = 0;

// The rendered cni.json and the SR-IOV network's config, for these --set values.
function render(sets) {
  const args = ['template', 'sluice', chart, '--namespace', 'kube-system'];
  for (const s of sets) args.push('--set', s);
  const r = spawnSync(helm, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`helm template ${sets.join(' ')}: ${r.stderr}`);
  const cm = parseAllDocuments(r.stdout).map((d) => d.toJS()).find((o) => o && o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
  return { node: JSON.parse(cm.data['cni.json']), sriov: JSON.parse(cm.data['cni-sluice-sriov.conf']) };
}

function check(what, sets, fn) {
  try {
    fn(render(sets));
    passed++; console.log(`ok   ${what}`);
  } catch (e) { failed++; console.log(`FAIL ${what}: ${e.message}`); }
}

check('defaults: no VF trust, no spoofchk off, no source validation off, no shared socket dir, sockets only in sluiced\'s socket dir, only its API socket', [], ({ node, sriov }) => {
  assert.deepEqual(node, {
    allowVfTrust: false, allowVfSpoofchkOff: false, allowSourceValidationOff: false, allowSharedSocketDir: false,
    socketDirRoot: '/var/run/sluice/vhost', apiSockets: ['/var/run/sluice/sluice.sock'],
  });
  assert.equal(sriov.trust, 'off');
  assert.equal(sriov.spoofchk, 'on');
});
check('the caps, the directories and the socket dir come from the values', [
  'cni.nodePolicy.allowVfTrust=true', 'cni.nodePolicy.allowVfSpoofchkOff=true',
  'networks.sriov.trust=on', 'networks.sriov.spoofchk=off',
  'cni.nodePolicy.deviceInfoDir=/run/devinfo', 'cni.nodePolicy.logDir=/var/log/net',
  'cni.nodePolicy.dataDirRoot=/srv/cni', 'vhostUser.socketDir=/run/dpdk/vhost',
  'cni.nodePolicy.allowSourceValidationOff=true', 'cni.nodePolicy.allowSharedSocketDir=true',
], ({ node, sriov }) => {
  assert.deepEqual(node, {
    allowVfTrust: true, allowVfSpoofchkOff: true, deviceInfoDir: '/run/devinfo', logDir: '/var/log/net',
    dataDirRoot: '/srv/cni', socketDirRoot: '/run/dpdk/vhost', allowSourceValidationOff: true,
    allowSharedSocketDir: true, apiSockets: ['/var/run/sluice/sluice.sock'],
  });
  assert.equal(sriov.trust, 'on');
  assert.equal(sriov.spoofchk, 'off');
});
check('a cap may be granted without the chart\'s network using it (other networks may)', [
  'cni.nodePolicy.allowVfTrust=true',
], ({ node, sriov }) => {
  assert.equal(node.allowVfTrust, true);
  assert.equal(sriov.trust, 'off');
});
check('routed prefix ranges: none by default, network.routedPrefixRanges as given', [
  'network.routedPrefixRanges={10.100.0.0/16,fd00:100::/40}',
], ({ node }) => {
  assert.deepEqual(node.routedPrefixRanges, ['10.100.0.0/16', 'fd00:100::/40']);
});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

// Feeds every CNI network config the chart renders (each values file) to the
// real sluice-cni, under the node config (cni.json) the same render installs
// on the node, so a key or value the plugin would reject, or a path or VF
// setting the chart's own node config would refuse, fails here rather than at
// a pod's first ADD. STATUS is the one verb that parses the whole config and
// then only asks sluiced for its health: pointed at a socket nobody listens
// on, an accepted config ends in code 50 ("sluiced is not available"), a
// rejected one in code 7 (invalid config) before that. STATUS needs
// cniVersion 1.1.0, which is what the chart writes (check-rendered.mjs). The
// VF caps are checked by ADD only, before anything else: an SR-IOV config is
// also sent as an ADD whose IPAM plugin does not exist, so an allowed config
// fails only there (nothing is allocated or written).
//
// Usage: node check-cni-config.mjs SLUICE-CNI RENDERED.yaml...
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const [plugin, ...files] = process.argv.slice(2);
if (!plugin || !files.length) { console.error('usage: check-cni-config.mjs SLUICE-CNI RENDERED.yaml...'); process.exit(2); }
const tmp = mkdtempSync(join(tmpdir(), 'sluice-cni-config-'));
let passed = 0, failed = 0;

function invoke(command, conf, nodeConfig) {
  const env = { PATH: process.env.PATH, CNI_COMMAND: command, CNI_PATH: '/usr/lib/cni', SLUICE_CNI_NODE_CONFIG: nodeConfig };
  if (command === 'ADD') Object.assign(env, { CNI_CONTAINERID: 'chart-check', CNI_NETNS: '/proc/self/ns/net', CNI_IFNAME: 'net1' });
  const r = spawnSync(plugin, [], { input: JSON.stringify(conf), env, encoding: 'utf8' });
  return { out: r.stdout ? JSON.parse(r.stdout) : null, err: r.stderr, code: r.status };
}
const status = (conf, nodeConfig) => invoke('STATUS', conf, nodeConfig);
// ADD of an SR-IOV config up to its VF caps: the IPAM plugin, next, is missing.
const kNoIpam = 'sluice-chart-check-no-such-ipam';
function addUpToIpam(conf, nodeConfig) {
  const r = invoke('ADD', { ...conf, ipam: { type: kNoIpam } }, nodeConfig);
  const reachedIpam = r.out?.code === 7 && r.out.msg.includes(kNoIpam);
  return { ...r, reachedIpam };
}

const cases = [];
for (const f of files) {
  const objects = parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);
  const cm = objects.find((o) => o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
  const nodeConfig = join(tmp, `${basename(f, '.yaml')}-cni.json`);
  // The networks' apiSocket is the node config's (check-rendered.mjs); here
  // both name a socket nobody listens on, so STATUS stops at sluiced.
  writeFileSync(nodeConfig, JSON.stringify({ ...JSON.parse(cm.data['cni.json']), apiSockets: [join(tmp, 'nobody-listens.sock')] }));
  for (const [key, text] of Object.entries(cm.data).filter(([k]) => k.startsWith('cni-'))) {
    // What node-config does on the node, then the test's own changes.
    const conf = JSON.parse(text.replaceAll('@NODE_POD_CIDR@', '10.244.9.0/24')
      .replaceAll('@NODE_POD_CIDR_V6@', 'fd00:10:244:9::/64'));
    conf.apiSocket = join(tmp, 'nobody-listens.sock');
    cases.push([`${basename(f)} ${key}`, conf, nodeConfig]);
  }
}
// The checks themselves must be able to fail: a config the plugin rejects,
// and a VF setting the node config (the plugin's defaults here, but for the
// API socket nobody listens on) refuses.
const bad = structuredClone(cases[0][1]);
bad.mtu = 99999;
const defaultsOnly = join(tmp, 'defaults-node-config.json');
writeFileSync(defaultsOnly, JSON.stringify({ apiSockets: [join(tmp, 'nobody-listens.sock')] }));

try {
  for (const [name, conf, nodeConfig] of cases) {
    const r = status(conf, nodeConfig);
    try {
      assert.equal(r.out?.code, 50, `expected code 50 (config accepted, sluiced unavailable), got ${JSON.stringify(r.out)}`);
      assert.doesNotMatch(r.err, /ignoring unknown field/, 'the plugin knows every key');
      passed++; console.log(`ok   ${name}: accepted by sluice-cni under the chart's node config`);
    } catch (e) { failed++; console.log(`FAIL ${name}: ${e.message}\n${r.err}`); }
    if (conf.interfaceType !== 'sriov') continue;
    const a = addUpToIpam(conf, nodeConfig);
    if (a.reachedIpam) { passed++; console.log(`ok   ${name}: its VF settings are allowed by the chart's node config`); }
    else { failed++; console.log(`FAIL ${name}: ADD stopped before IPAM: ${JSON.stringify(a.out)}\n${a.err}`); }
  }
  const sriov = cases.find(([, conf]) => conf.interfaceType === 'sriov')[1];
  const trusted = addUpToIpam({ ...sriov, trust: 'on' }, defaultsOnly);
  if (trusted.out?.code === 7 && /"trust".*allowVfTrust/.test(trusted.out.msg)) {
    passed++; console.log('ok   trust "on" without the node config\'s consent is refused with code 7 (the check can fail)');
  } else { failed++; console.log(`FAIL trust "on" not refused: ${JSON.stringify(trusted.out)}`); }
  const r = status(bad, defaultsOnly);
  if (r.out?.code === 7) { passed++; console.log('ok   an out-of-range mtu is rejected with code 7 (the check can fail)'); }
  else { failed++; console.log(`FAIL out-of-range mtu not rejected: ${JSON.stringify(r.out)}`); }
} finally { rmSync(tmp, { recursive: true }); }
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

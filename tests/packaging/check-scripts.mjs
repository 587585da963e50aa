// Runs the chart's shell scripts the way the kubelet would, on this machine:
// the node-config init container (picks this node's sluiced config, fills in
// the node IP and pod CIDR, writes the CNI network configs for Multus), the
// install-cni init container (sluice-cni's node config and binary onto the
// host) and the example DPDK pod's device-info check. Their absolute paths (ConfigMap mount,
// boot emptyDir, host CNI dir, downward API file) are redirected into a
// temporary directory; the scripts themselves run unchanged under /bin/sh.
//
// Usage: node check-scripts.mjs PRODUCTION.yaml NODE-LOOKUP.yaml DEFAULT.yaml DUAL-STACK.yaml
//        NODE-LOOKUP-DUAL-STACK.yaml
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const [prodFile, lookupFile, defaultFile, dualFile, lookupDualFile] = process.argv.slice(2);
if (!lookupDualFile) {
  console.error('usage: check-scripts.mjs PRODUCTION.yaml NODE-LOOKUP.yaml DEFAULT.yaml DUAL-STACK.yaml NODE-LOOKUP-DUAL-STACK.yaml');
  process.exit(2);
}
const load = (f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);

let passed = 0, failed = 0;
async function check(name, fn) {
  try { await fn(); passed++; console.log(`ok   ${name}`); } catch (e) { failed++; console.log(`FAIL ${name}\n     ${e.message.split('\n').join('\n     ')}`); }
}

// Lays out the node-config container's world under a fresh directory and runs
// its script; returns the directory and the shell's result. `lookupResult`
// and `lookupResultV6`: what the lookup-pod-cidr container wrote, if it ran.
function runNodeConfig(objects, env, lookupResult, lookupResultV6) {
  const ds = objects.find((o) => o.kind === 'DaemonSet');
  const cm = objects.find((o) => o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
  const init = ds.spec.template.spec.initContainers.find((c) => c.name === 'node-config');
  const root = mkdtempSync(join(tmpdir(), 'sluice-node-config-'));
  for (const d of ['etc-sluice', 'boot', 'cni-conf']) mkdirSync(join(root, d));
  for (const [k, v] of Object.entries(cm.data)) writeFileSync(join(root, 'etc-sluice', k), v);
  if (lookupResult !== undefined) writeFileSync(join(root, 'boot', 'node-pod-cidr'), lookupResult);
  if (lookupResultV6 !== undefined) writeFileSync(join(root, 'boot', 'node-pod-cidr-v6'), lookupResultV6);
  const script = init.command.at(-1)
    .replaceAll('/etc/sluice/', `${root}/etc-sluice/`)
    .replaceAll('/run/sluice-boot', `${root}/boot`)
    .replaceAll('/host/cni-conf', `${root}/cni-conf`);
  assert.deepEqual(init.command.slice(0, 2), ['/bin/sh', '-ec']);
  const r = spawnSync('/bin/sh', ['-ec', script], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  return { root, r };
}
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

const prod = load(prodFile);
const lookup = load(lookupFile);
const dflt = load(defaultFile);
const dual = load(dualFile);
const lookupDual = load(lookupDualFile);

await check('node-config on a listed node: own CIDR and VTEP, others remote, CNI subnet = own CIDR', () => {
  const { root, r } = runNodeConfig(prod, { NODE_NAME: 'worker-2', HOST_IP: '198.51.100.7' });
  try {
    assert.equal(r.status, 0, r.stderr);
    const c = readJson(join(root, 'boot', 'sluiced.json'));
    assert.equal(c['pod-cidr'], '10.244.2.0/24');
    assert.equal(c.uplink.vtep, '192.0.2.12');
    assert.deepEqual(c['remote-nodes'].map((n) => n.name), ['worker-1', 'worker-3']);
    for (const n of ['sluice-vhost', 'sluice-sriov-ens1f0', 'sluice-sriov-ens1f1']) {  // one SR-IOV network per pool
      const conf = readJson(join(root, 'cni-conf', `${n}.conf`));
      assert.equal(conf.name, n);
      assert.equal(conf.ipam.ranges[0][0].subnet, '10.244.2.0/24');
    }
    assert.ok(!existsSync(join(root, 'boot', 'sluiced.json.tmp')), 'temporary file renamed away');
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config on an unlisted node: default config, VTEP = node IP', () => {
  const { root, r } = runNodeConfig(prod, { NODE_NAME: 'edge-9', HOST_IP: '198.51.100.7' });
  try {
    assert.equal(r.status, 0, r.stderr);
    const c = readJson(join(root, 'boot', 'sluiced.json'));
    assert.equal(c['pod-cidr'], '10.244.0.0/24');
    assert.equal(c.uplink.vtep, '198.51.100.7');
    assert.equal(c['remote-nodes'].length, 3);
    assert.doesNotMatch(readFileSync(join(root, 'boot', 'sluiced.json'), 'utf8'), /@[A-Z_]+@/);
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config with the Node lookup: spec.podCIDR becomes the config and the IPAM subnet', () => {
  const { root, r } = runNodeConfig(lookup, { NODE_NAME: 'n1', HOST_IP: '198.51.100.8' }, '10.244.7.0/24');
  try {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readJson(join(root, 'boot', 'sluiced.json'))['pod-cidr'], '10.244.7.0/24');
    assert.equal(readJson(join(root, 'cni-conf', 'sluice-vhost.conf')).ipam.ranges[0][0].subnet, '10.244.7.0/24');
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config refuses a node without spec.podCIDR, and writes nothing', () => {
  const { root, r } = runNodeConfig(lookup, { NODE_NAME: 'n1', HOST_IP: '198.51.100.8' }, '');
  try {
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /node n1: spec\.podCIDR is '', not an IPv4 CIDR/);
    assert.ok(!existsSync(join(root, 'boot', 'sluiced.json')));
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config, dual-stack table: the node\'s IPv4 and IPv6 CIDRs in sluiced and both IPAM ranges', () => {
  const { root, r } = runNodeConfig(dual, { NODE_NAME: 'worker-2', HOST_IP: '198.51.100.7' });
  try {
    assert.equal(r.status, 0, r.stderr);
    const c = readJson(join(root, 'boot', 'sluiced.json'));
    assert.equal(c['pod-cidr'], '10.244.2.0/24');
    assert.equal(c['pod-cidr-v6'], 'fd00:10:244:2::/64');
    assert.match(r.stdout, /pod CIDR 10\.244\.2\.0\/24, IPv6 pod CIDR fd00:10:244:2::\/64/);
    for (const n of ['sluice-vhost', 'sluice-sriov']) {
      assert.deepEqual(readJson(join(root, 'cni-conf', `${n}.conf`)).ipam.ranges,
        [[{ subnet: '10.244.2.0/24' }], [{ subnet: 'fd00:10:244:2::/64' }]], n);
    }
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config, dual-stack table, unlisted node: network.podCIDR and network.podCIDRv6', () => {
  const { root, r } = runNodeConfig(dual, { NODE_NAME: 'edge-9', HOST_IP: '198.51.100.7' });
  try {
    assert.equal(r.status, 0, r.stderr);
    const c = readJson(join(root, 'boot', 'sluiced.json'));
    assert.equal(c['pod-cidr-v6'], 'fd00:10:244::/64');
    assert.deepEqual(readJson(join(root, 'cni-conf', 'sluice-vhost.conf')).ipam.ranges,
      [[{ subnet: '10.244.0.0/24' }], [{ subnet: 'fd00:10:244::/64' }]]);
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config with the Node lookup and ipv6: spec.podCIDRs\' two families fill both', () => {
  const { root, r } = runNodeConfig(lookupDual, { NODE_NAME: 'n1', HOST_IP: '198.51.100.8' }, '10.244.7.0/24',
    'fd00:10:244:7::/64');
  try {
    assert.equal(r.status, 0, r.stderr);
    const c = readJson(join(root, 'boot', 'sluiced.json'));
    assert.equal(c['pod-cidr'], '10.244.7.0/24');
    assert.equal(c['pod-cidr-v6'], 'fd00:10:244:7::/64');
    assert.deepEqual(readJson(join(root, 'cni-conf', 'sluice-vhost.conf')).ipam.ranges,
      [[{ subnet: '10.244.7.0/24' }], [{ subnet: 'fd00:10:244:7::/64' }]]);
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config with the Node lookup and ipv6 refuses a node without an IPv6 CIDR, and writes nothing', () => {
  const { root, r } = runNodeConfig(lookupDual, { NODE_NAME: 'n1', HOST_IP: '198.51.100.8' }, '10.244.7.0/24', '');
  try {
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /node n1: spec\.podCIDRs has no IPv6 CIDR \(''\)/);
    assert.ok(!existsSync(join(root, 'boot', 'sluiced.json')));
  } finally { rmSync(root, { recursive: true }); }
});

await check('node-config with the Node lookup, IPv4 only: a node\'s IPv6 CIDR is not used', () => {
  const { root, r } = runNodeConfig(lookup, { NODE_NAME: 'n1', HOST_IP: '198.51.100.8' }, '10.244.7.0/24',
    'fd00:10:244:7::/64');
  try {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readJson(join(root, 'boot', 'sluiced.json'))['pod-cidr-v6'], undefined);
    assert.deepEqual(readJson(join(root, 'cni-conf', 'sluice-vhost.conf')).ipam.ranges, [[{ subnet: '10.244.7.0/24' }]]);
  } finally { rmSync(root, { recursive: true }); }
});

// The lookup-pod-cidr container's own script, with kubectl answering as the
// API server would for the node's spec.podCIDRs and spec.podCIDR.
function runLookup(objects, kubectlOutput) {
  const ds = objects.find((o) => o.kind === 'DaemonSet');
  const init = ds.spec.template.spec.initContainers.find((c) => c.name === 'lookup-pod-cidr');
  const root = mkdtempSync(join(tmpdir(), 'sluice-lookup-'));
  mkdirSync(join(root, 'boot'));
  mkdirSync(join(root, 'bin'));
  writeFileSync(join(root, 'bin', 'kubectl'), `#!/bin/sh\nprintf '%s' '${kubectlOutput}'\n`, { mode: 0o755 });
  const script = init.command.at(-1).replaceAll('/run/sluice-boot', `${root}/boot`);
  const r = spawnSync('/bin/sh', ['-ec', script], { env: { PATH: `${root}/bin:${process.env.PATH}`, NODE_NAME: 'n1' },
    encoding: 'utf8' });
  return { root, r };
}

for (const [what, out, v4, v6] of [
  ['dual-stack node', '10.244.7.0/24 fd00:10:244:7::/64 10.244.7.0/24', '10.244.7.0/24', 'fd00:10:244:7::/64'],
  ['IPv6-first dual-stack node', 'fd00:10:244:7::/64 10.244.7.0/24 fd00:10:244:7::/64', '10.244.7.0/24', 'fd00:10:244:7::/64'],
  ['IPv4-only node', '10.244.7.0/24 10.244.7.0/24', '10.244.7.0/24', ''],
  ['node from before spec.podCIDRs', ' 10.244.7.0/24', '10.244.7.0/24', ''],
]) {
  await check(`lookup-pod-cidr: ${what} -> IPv4 '${v4}', IPv6 '${v6}'`, () => {
    const { root, r } = runLookup(lookupDual, out);
    try {
      assert.equal(r.status, 0, r.stderr);
      assert.equal(readFileSync(join(root, 'boot', 'node-pod-cidr'), 'utf8'), v4);
      assert.equal(readFileSync(join(root, 'boot', 'node-pod-cidr-v6'), 'utf8'), v6);
    } finally { rmSync(root, { recursive: true }); }
  });
}

// The example pod: writes the downward-API annotation file as the kubelet does
// (key="Go-quoted value", one per line) and runs the container's script.
function runExample(networkStatus, root) {
  const pod = dflt.find((o) => o.kind === 'Pod' && o.metadata.annotations?.['helm.sh/hook'] === 'test');
  const ann = { 'k8s.v1.cni.cncf.io/networks': 'default/sluice-vhost' };
  if (networkStatus) ann['k8s.v1.cni.cncf.io/network-status'] = JSON.stringify(networkStatus, null, 4);
  writeFileSync(join(root, 'annotations'), Object.keys(ann).sort().map((k) => `${k}=${JSON.stringify(ann[k])}`).join('\n') + '\n');
  const script = pod.spec.containers[0].command.at(-1).replaceAll('/etc/podnetinfo/annotations', join(root, 'annotations'));
  return spawnSync('/bin/sh', ['-ec', script], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
}
// The network status Multus publishes; `mode` is the device-info's, the pod
// application's side: "server" when sluiced is the vhost-user client (the
// chart's default), "client" when sluiced is the server.
const status = (path, mode) => [
  { name: 'cbr0', interface: 'eth0', ips: ['10.88.0.5'], default: true },
  { name: 'default/sluice-vhost', interface: 'net1', ips: ['10.244.0.9'],
    'device-info': { type: 'vhost-user', version: '1.1.0', 'vhost-user': { mode, path } } },
];

await check('example pod: sluiced in client mode (the default), so the pod serves: server=1, no socket yet', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  try {
    // sluice-cni made the pod directory; the socket is the application's to create.
    const sock = join(root, 'pod', 'net1.sock');
    mkdirSync(join(root, 'pod'));
    const r = runExample(status(sock, 'server'), root);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`device-info: vhost-user socket ${sock} \\(pod side: server\\)`));
    assert.match(r.stdout, new RegExp(`--vdev=net_virtio_user0,path=${sock},server=1 `));
    assert.ok(!existsSync(sock), 'the check creates no socket');
  } finally { rmSync(root, { recursive: true }); }
});

await check('example pod: as the server, fails when the socket\'s directory is missing', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  try {
    const r = runExample(status(join(root, 'gone', 'net1.sock'), 'server'), root);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /socket directory .*\/gone does not exist/);
  } finally { rmSync(root, { recursive: true }); }
});

await check('example pod: sluiced as the server, so the pod connects to its existing socket: server=0', async () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  const sock = join(root, 'net1.sock');
  const server = createServer();
  await new Promise((res) => server.listen(sock, res));
  try {
    const r = runExample(status(sock, 'client'), root);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`device-info: vhost-user socket ${sock} \\(pod side: client\\)`));
    assert.match(r.stdout, new RegExp(`--vdev=net_virtio_user0,path=${sock},server=0 `));
  } finally { server.close(); rmSync(root, { recursive: true }); }
});

await check('example pod: as the client, fails when sluiced\'s socket named in the device-info is missing', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  try {
    const r = runExample(status(join(root, 'gone.sock'), 'client'), root);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /gone\.sock does not exist/);
  } finally { rmSync(root, { recursive: true }); }
});

await check('example pod: fails when the network status has no vhost-user device-info', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  try {
    const r = runExample([{ name: 'cbr0', interface: 'eth0', default: true }], root);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /no vhost-user device-info/);
  } finally { rmSync(root, { recursive: true }); }
});

await check('install-cni: the host\'s /etc/sluice/cni.json replaced by the ConfigMap\'s, then the binary installed', () => {
  const ds = dflt.find((o) => o.kind === 'DaemonSet');
  const cm = dflt.find((o) => o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
  const init = ds.spec.template.spec.initContainers.find((c) => c.name === 'install-cni');
  const root = mkdtempSync(join(tmpdir(), 'sluice-install-cni-'));
  try {
    for (const d of ['etc-sluice', 'host-etc-sluice', 'cni-bin', 'bin']) mkdirSync(join(root, d));
    writeFileSync(join(root, 'etc-sluice', 'cni.json'), cm.data['cni.json']);
    writeFileSync(join(root, 'bin', 'sluice-cni'), '#!/bin/sh\n');
    // A node config from an earlier install, to be replaced.
    writeFileSync(join(root, 'host-etc-sluice', 'cni.json'), '{"allowVfTrust":true}');
    const script = init.command.at(-1)
      .replaceAll('/host/etc-sluice', `${root}/host-etc-sluice`)
      .replaceAll('/etc/sluice/', `${root}/etc-sluice/`)
      .replaceAll('/host/cni-bin', `${root}/cni-bin`)
      .replaceAll('/usr/local/bin/', `${root}/bin/`);
    assert.deepEqual(init.command.slice(0, 2), ['/bin/sh', '-ec']);
    const r = spawnSync('/bin/sh', ['-ec', script], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(join(root, 'host-etc-sluice', 'cni.json'), 'utf8'), cm.data['cni.json']);
    assert.deepEqual(readJson(join(root, 'host-etc-sluice', 'cni.json')),
      { allowVfTrust: false, allowVfSpoofchkOff: false, allowSourceValidationOff: false, allowSharedSocketDir: false,
        apiSockets: ['/var/run/sluice/sluice.sock'], socketDirRoot: '/var/run/sluice/vhost' });
    assert.ok(!existsSync(join(root, 'host-etc-sluice', '.cni.json.tmp')), 'temporary file renamed away');
    assert.ok(existsSync(join(root, 'cni-bin', 'sluice-cni')), 'binary installed');
  } finally { rmSync(root, { recursive: true }); }
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

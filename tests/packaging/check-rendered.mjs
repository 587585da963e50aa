// Asserts what the chart promises about its rendered objects, beyond schema
// validity: Guaranteed QoS with whole CPUs per PMD core, hugepages wired through
// resources and volumes, the host paths and probes of the DaemonSet, sluiced's
// config keys, the network attachments and the least-privilege RBAC. One
// profile per values file the tests render (see run.sh).
//
// Usage: node check-rendered.mjs default|production|node-lookup|server-mode|kubernetes|monitors|metrics-off|metrics-exposed|dual-stack|node-lookup-dual-stack RENDERED.yaml
// (server-mode: the default values with vhostUser.mode=server; monitors: with
// the Prometheus operator's ServiceMonitor and PodMonitor; metrics-off: with
// metrics.enabled=false; metrics-exposed: on the node's IP for an allow-list,
// with pod labels; node-lookup-dual-stack: node-lookup with
// podCIDRFromNode.ipv6; single-node-dual-stack: the default values with
// network.podCIDRv6.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const [profile, file] = process.argv.slice(2);
const kProfiles = ['default', 'production', 'node-lookup', 'server-mode', 'kubernetes', 'monitors', 'metrics-off',
  'metrics-exposed',
  'dual-stack', 'node-lookup-dual-stack', 'single-node-dual-stack'];
if (!kProfiles.includes(profile) || !file) {
  console.error(`usage: check-rendered.mjs ${kProfiles.join('|')} RENDERED.yaml`);
  process.exit(2);
}
const objects = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const ofKind = (kind) => objects.filter((o) => o.kind === kind);
const one = (kind) => { const l = ofKind(kind); assert.equal(l.length, 1, `exactly one ${kind}`); return l[0]; };

// Keys sluiced knows or will know (the contract between chart and dataplane);
// a typo in the chart's config shows up here instead of as a warning at run time.
const kSluicedKeys = new Set(['config', 'api-socket', 'socket-dir', 'pmd-cores', 'main-core', 'eal', 'pod-cidr',
  'pod-cidr-v6', 'gateway-v6', 'gateway', 'gateway-mac', 'tx-flush-interval', 'pmd-max-sleep-us', 'max-ports', 'max-queues-per-port', 'mbufs', 'log-level', 'uplink', 'vni',
  'remote-nodes', 'emc-entries', 'emc-insert-inv-prob', 'smc-enable', 'flow-limit', 'offload', 'sriov-pools',
  'state-dir', 'metrics-address', 'metrics-port', 'metrics-allowed-cidrs', 'metrics-pod-labels',
  'agent-api-socket', 'agent-api-gid', 'pod-cidr-v6', 'gateway-v6', 'ipv6-router-lifetime', 'external-gateway',
  'external-vlan', 'host-interface', 'host-addresses', 'host-path-allowed-ports']);
const kCniKeys = new Set(['cniVersion', 'name', 'type', 'interfaceType', 'vhostMode', 'apiSocket', 'socketDir',
  'perPodSockets', 'socketVolume', 'podSocketDir', 'socketGroup',
  'mtu', 'vlan', 'trust', 'spoofchk', 'ipam', 'capabilities', 'sriovMode']);

let passed = 0, failed = 0;
function check(name, fn) {
  try { fn(); passed++; console.log(`ok   ${name}`); } catch (e) { failed++; console.log(`FAIL ${name}\n     ${e.message.split('\n').join('\n     ')}`); }
}

const ds = one('DaemonSet');
const pod = ds.spec.template.spec;
const sluiced = pod.containers.find((c) => c.name === 'sluiced');
const inits = pod.initContainers ?? [];
// The chart's config; the Grafana dashboard's ConfigMap is checked apart.
const isDashboard = (o) => o.metadata?.labels?.grafana_dashboard === '1';
const cms = ofKind('ConfigMap').filter((o) => !isDashboard(o));
assert.equal(cms.length, 1, 'exactly one config ConfigMap');
const cm = cms[0];
// sluiced's configs: default.json and node-<name>.json (cni.json is sluice-cni's node config).
const isSluicedConfig = (k) => k === 'default.json' || /^node-.+\.json$/.test(k);
const configs = Object.fromEntries(Object.entries(cm.data).filter(([k]) => isSluicedConfig(k)).map(([k, v]) => [k, JSON.parse(v)]));
const cniConfs = Object.fromEntries(Object.entries(cm.data).filter(([k]) => k.startsWith('cni-')).map(([k, v]) => [k, JSON.parse(v)]));
const volumes = Object.fromEntries(pod.volumes.map((v) => [v.name, v]));
const hostPathOf = (container, mountPath) => {
  const m = container.volumeMounts.find((vm) => vm.mountPath === mountPath);
  return m && volumes[m.name]?.hostPath?.path;
};
const def = configs['default.json'];

check('sluiced runs privileged on the host network with its rendered config', () => {
  assert.ok(sluiced, 'container sluiced');
  assert.equal(pod.hostNetwork, true);
  assert.equal(sluiced.securityContext.privileged, true);
  assert.deepEqual([...sluiced.command, ...sluiced.args],
    ['sluiced', '--config', '/run/sluice-boot/sluiced.json', '--config', '/etc/sluice/live.json']);
});

check('every container has requests == limits for cpu and memory (Guaranteed QoS)', () => {
  for (const c of [...inits, ...pod.containers]) {
    const { requests, limits } = c.resources;
    assert.ok(requests?.cpu && requests?.memory, `${c.name}: cpu and memory requests`);
    assert.deepEqual(requests, limits, `${c.name}: requests equal limits`);
  }
});

check('sluiced gets one whole CPU per PMD core plus one for the control thread', () => {
  const pmds = def['pmd-cores'].split(',').length;
  assert.equal(sluiced.resources.limits.cpu, String(pmds + 1));
  assert.ok(!def['pmd-cores'].split(',').includes(String(def['main-core'])), 'main core is not a PMD core');
});

check('probes: startup, liveness and readiness all run sluicectl health on the API socket', () => {
  for (const p of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
    assert.deepEqual(sluiced[p].exec.command, ['sluicectl', '--socket', def['api-socket'], 'health'], p);
  }
});

check('host paths: run dir, vhost sockets, /sys, /var/run/netns (HostToContainer)', () => {
  assert.equal(hostPathOf(sluiced, '/var/run/sluice'), '/var/run/sluice');
  assert.equal(hostPathOf(sluiced, def['socket-dir']), def['socket-dir']);
  assert.equal(hostPathOf(sluiced, '/sys'), '/sys');
  assert.equal(hostPathOf(sluiced, '/var/run/netns'), '/var/run/netns');
  assert.equal(sluiced.volumeMounts.find((m) => m.mountPath === '/var/run/netns').mountPropagation, 'HostToContainer');
  assert.ok(def['api-socket'].startsWith('/var/run/sluice/'), 'API socket lives in the shared run dir');
  // The links in the socket directory point into the pods' emptyDirs, at the
  // same path as on the host; a Memory emptyDir is a mount made after sluiced starts.
  assert.equal(hostPathOf(sluiced, '/var/lib/kubelet/pods'), '/var/lib/kubelet/pods');
  assert.equal(sluiced.volumeMounts.find((m) => m.mountPath === '/var/lib/kubelet/pods').mountPropagation, 'HostToContainer');
});

check('install-cni copies sluice-cni into the host CNI bin dir, atomically', () => {
  const ic = inits.find((c) => c.name === 'install-cni');
  assert.ok(ic, 'init container install-cni');
  assert.equal(hostPathOf(ic, '/host/cni-bin'), '/opt/cni/bin');
  const script = ic.command.at(-1);
  assert.match(script, /cp \/usr\/local\/bin\/sluice-cni \/host\/cni-bin\/\.sluice-cni\.tmp/);
  assert.match(script, /mv \/host\/cni-bin\/\.sluice-cni\.tmp \/host\/cni-bin\/sluice-cni/);
});

check('install-cni writes sluice-cni\'s node config to the host\'s /etc/sluice/cni.json, atomically, before the binary', () => {
  const ic = inits.find((c) => c.name === 'install-cni');
  assert.equal(hostPathOf(ic, '/host/etc-sluice'), '/etc/sluice');
  const m = ic.volumeMounts.find((vm) => vm.mountPath === '/host/etc-sluice');
  assert.equal(volumes[m.name].hostPath.type, 'DirectoryOrCreate');
  const cfg = ic.volumeMounts.find((vm) => vm.mountPath === '/etc/sluice');
  assert.equal(volumes[cfg.name].configMap?.name, cm.metadata.name, 'the ConfigMap is mounted at /etc/sluice');
  const script = ic.command.at(-1);
  const cp = script.indexOf('cp /etc/sluice/cni.json /host/etc-sluice/.cni.json.tmp');
  const mv = script.indexOf('mv /host/etc-sluice/.cni.json.tmp /host/etc-sluice/cni.json');
  assert.ok(cp >= 0 && mv > cp, 'copied beside the target, then renamed over it');
  assert.ok(mv < script.indexOf('cp /usr/local/bin/sluice-cni'), 'in place before the binary that reads it');
});

check('sluice-cni\'s node config: the plugin\'s keys only, socketDirRoot is sluiced\'s socket dir, and it allows what the chart\'s SR-IOV network asks for', () => {
  const node = JSON.parse(cm.data['cni.json']);
  const kNodeKeys = ['deviceInfoDir', 'logDir', 'dataDirRoot', 'socketDirRoot', 'kubeletDir', 'allowVfTrust', 'allowVfSpoofchkOff',
    'allowSourceValidationOff', 'allowSharedSocketDir', 'apiSockets'];
  for (const k of Object.keys(node)) assert.ok(kNodeKeys.includes(k), `unknown node config key ${k}`);
  assert.equal(node.socketDirRoot, def['socket-dir']);
  assert.deepEqual(node.apiSockets, [def['api-socket']], 'only this release\'s sluiced may be named');
  for (const c of Object.values(cniConfs)) assert.ok(node.apiSockets.includes(c.apiSocket), `${c.name}: apiSocket allowed`);
  assert.equal(typeof node.allowVfTrust, 'boolean');
  assert.equal(typeof node.allowVfSpoofchkOff, 'boolean');
  for (const sriov of Object.values(cniConfs).filter((c) => c.interfaceType === 'sriov')) {
    if (sriov.trust === 'on') assert.equal(node.allowVfTrust, true);
    if (sriov.spoofchk === 'off') assert.equal(node.allowVfSpoofchkOff, true);
  }
});

check('node-config writes network configs into the host Multus conf dir', () => {
  const nc = inits.find((c) => c.name === 'node-config');
  assert.ok(nc, 'init container node-config');
  assert.equal(hostPathOf(nc, '/host/cni-conf'), '/etc/cni/multus/net.d');
  assert.ok(!pod.volumes.some((v) => v.hostPath?.path === '/etc/cni/net.d'), 'never writes the runtime\'s own conf dir');
});

check('sluiced config files use only known keys', () => {
  for (const [name, c] of Object.entries({ ...configs, 'live.json': JSON.parse(cm.data['live.json']) })) {
    for (const k of Object.keys(c)) assert.ok(kSluicedKeys.has(k), `${name}: unknown key ${k}`);
  }
});

check('network attachments: vhost-user and SR-IOV, configs of type sluice-cni', () => {
  const nads = ofKind('NetworkAttachmentDefinition');
  // With VF pools, one SR-IOV network per pool carrying its device-plugin
  // resource; without, one carrying networks.sriov.resourceName.
  const pools = def['sriov-pools'] ?? [];
  const sriovNames = pools.length ? pools.map((p) => `sluice-sriov-${p.pf}`) : ['sluice-sriov'];
  assert.deepEqual(nads.map((n) => n.metadata.name).sort(), [...sriovNames, 'sluice-vhost'].sort());
  assert.deepEqual(Object.keys(cniConfs).sort(), [...sriovNames, 'sluice-vhost'].map((n) => `cni-${n}.conf`).sort());
  for (const n of nads) {
    const resource = n.metadata.annotations?.['k8s.v1.cni.cncf.io/resourceName'];
    if (n.metadata.name === 'sluice-vhost') assert.equal(resource, undefined, 'no device-plugin resource on vhost-user');
    else assert.match(resource ?? '', /^[a-z0-9.-]+\/[A-Za-z0-9_.-]+$/, `${n.metadata.name}: resourceName annotation`);
  }
  for (const [name, c] of Object.entries(cniConfs)) {
    for (const k of Object.keys(c)) assert.ok(kCniKeys.has(k), `${name}: unknown key ${k}`);
    assert.equal(c.type, 'sluice-cni');
    // 1.1.0: Multus passes the result's socketPath / pciID on only from it.
    assert.equal(c.cniVersion, '1.1.0');
    assert.equal(c.apiSocket, def['api-socket']);
    assert.equal(c.ipam.type, 'host-local');
    // Multus passes a device-info path; to SR-IOV also the device plugin's
    // deviceID and the pod's mac and ips.
    const caps = c.interfaceType === 'sriov' ? { CNIDeviceInfoFile: true, deviceID: true, mac: true, ips: true }
                                             : { CNIDeviceInfoFile: true };
    assert.deepEqual(c.capabilities, caps, `${name}: capabilities`);
  }
  const vhost = cniConfs['cni-sluice-vhost.conf'];
  assert.equal(vhost.interfaceType, 'vhost-user');
  assert.equal(vhost.socketDir, def['socket-dir']);
  // sluiced is the vhost-user client unless the values choose server: it
  // reconnects to the pods' sockets after a restart, a server's pods do not.
  assert.equal(vhost.vhostMode, profile === 'server-mode' ? 'server' : 'client');
  // Each pod's sockets in an emptyDir of its own, not in the host's directory.
  assert.equal(vhost.perPodSockets, true);
  assert.equal(vhost.socketVolume, 'sluice-sockets');
  assert.equal(vhost.podSocketDir, '/var/run/sluice');
  for (const sriovName of sriovNames) {
    const sriov = cniConfs[`cni-${sriovName}.conf`];
    assert.equal(sriov.interfaceType, 'sriov');
    for (const k of ['perPodSockets', 'socketVolume', 'podSocketDir', 'socketGroup']) {
      assert.ok(!(k in sriov), `no ${k} on the SR-IOV network`);
    }
  }
  pools.forEach((p, i) => assert.equal(cniConfs[`cni-${sriovNames[i]}.conf`].sriovMode, p.mode === 'vfio' ? 'dpdk' : 'kernel'));
  for (const n of nads) {
    if (n.spec.config) assert.deepEqual(JSON.parse(n.spec.config), cniConfs[`cni-${n.metadata.name}.conf`], `${n.metadata.name}: config equals the node copy`);
  }
});

check('example DPDK pod: a helm test on the vhost-user network, reading its device-info', () => {
  const ex = ofKind('Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test');
  assert.ok(ex, 'test-hook pod');
  assert.equal(ex.metadata.annotations['k8s.v1.cni.cncf.io/networks'], `${ds.metadata.namespace}/sluice-vhost`);
  const c = ex.spec.containers[0];
  const exVolumes = Object.fromEntries(ex.spec.volumes.map((v) => [v.name, v]));
  const vhost = cniConfs['cni-sluice-vhost.conf'];
  const sock = c.volumeMounts.find((m) => m.mountPath === vhost.podSocketDir);
  assert.equal(sock?.name, vhost.socketVolume, 'the network\'s socket volume at its podSocketDir');
  assert.deepEqual(exVolumes[sock.name], { name: vhost.socketVolume, emptyDir: {} }, 'an emptyDir, no host path');
  assert.ok(!ex.spec.volumes.some((v) => v.hostPath), 'no hostPath volume at all');
  const info = c.volumeMounts.find((m) => m.mountPath === '/etc/podnetinfo');
  assert.equal(exVolumes[info.name].downwardAPI.items[0].fieldRef.fieldPath, 'metadata.annotations');
});

check('service account: used by the DaemonSet', () => {
  assert.equal(pod.serviceAccountName, one('ServiceAccount').metadata.name);
});

if (profile === 'default') {
  check('default: no host path (network.hostInterface empty)', () => {
    assert.equal(def['host-interface'], undefined);
    assert.equal(def['host-addresses'], undefined);
    assert.equal(def['host-path-allowed-ports'], undefined);
  });
  check('default: no-huge mode, no hugepage resources or volumes', () => {
    assert.match(def.eal, /--no-huge -m 1024/);
    assert.match(def.eal, /--no-pci/);
    assert.ok(!Object.keys(sluiced.resources.limits).some((k) => k.startsWith('hugepages-')));
    assert.ok(!pod.volumes.some((v) => v.emptyDir?.medium?.startsWith('HugePages')));
  });
  check('default: no RBAC and no API token (sluiced reads nothing from the API)', () => {
    assert.equal(ofKind('ClusterRole').length + ofKind('Role').length + ofKind('ClusterRoleBinding').length + ofKind('RoleBinding').length, 0);
    assert.equal(pod.automountServiceAccountToken, false);
  });
  check('default: the vhost-user NetworkAttachmentDefinition makes sluiced the vhost-user client', () => {
    const nad = ofKind('NetworkAttachmentDefinition').find((n) => n.metadata.name === 'sluice-vhost');
    assert.equal(JSON.parse(nad.spec.config).vhostMode, 'client');
  });
  check('default: one pod CIDR, embedded in the attachments', () => {
    assert.equal(def['pod-cidr'], '10.244.0.0/24');
    for (const n of ofKind('NetworkAttachmentDefinition')) {
      assert.deepEqual(JSON.parse(n.spec.config).ipam.ranges, [[{ subnet: '10.244.0.0/24' }]]);
    }
  });
  check('default: IPv4 only (no pod-cidr-v6, one IPAM range set)', () => {
    for (const [name, c] of Object.entries(configs)) assert.equal(c['pod-cidr-v6'], undefined, name);
  });
}

if (profile === 'production') {
  check('production: every node has the host path, reaching the node at its own IP (filled in on the node)', () => {
    for (const [name, c] of Object.entries(configs)) {
      assert.equal(c['host-interface'], 'sluice-host', name);
      assert.deepEqual(c['host-addresses'], ['@HOST_IP@'], name);
      assert.deepEqual(c['host-path-allowed-ports'], ['53/udp'], name);
    }
  });
  check('production: 1Gi hugepages requested, limited and mounted at /dev/hugepages', () => {
    assert.equal(sluiced.resources.requests['hugepages-1Gi'], '2Gi');
    assert.equal(sluiced.resources.limits['hugepages-1Gi'], '2Gi');
    const m = sluiced.volumeMounts.find((vm) => vm.mountPath === '/dev/hugepages');
    assert.equal(volumes[m.name].emptyDir.medium, 'HugePages-1Gi');
    assert.match(def.eal, /^--huge-dir \/dev\/hugepages -m 2048 /, "all 2 x 1Gi pages reserved at start");
  });
  check('production: two PMD cores -> 3 CPUs; PCI uplink allow-listed, vfio mounted', () => {
    assert.equal(sluiced.resources.limits.cpu, '3');
    assert.match(def.eal, / -a 0000:3b:00\.0 /);
    assert.doesNotMatch(def.eal, /--no-pci/);
    assert.equal(hostPathOf(sluiced, '/dev/vfio'), '/dev/vfio');
  });
  check('production: per-node configs carry own CIDR and VTEP, the others as remote nodes', () => {
    const nodes = { 'worker-1': ['10.244.1.0/24', '192.0.2.11'], 'worker-2': ['10.244.2.0/24', '192.0.2.12'], 'worker-3': ['10.244.3.0/24', '192.0.2.13'] };
    for (const [name, [cidr, vtep]] of Object.entries(nodes)) {
      const c = configs[`node-${name}.json`];
      assert.ok(c, `node-${name}.json`);
      assert.equal(c['pod-cidr'], cidr);
      assert.equal(c.uplink.vtep, vtep);
      assert.deepEqual(c['remote-nodes'].map((r) => r.name).sort(), Object.keys(nodes).filter((n) => n !== name));
    }
    assert.equal(def.uplink.vtep, '@HOST_IP@');
    for (const c of [def, ...Object.keys(nodes).map((n) => configs[`node-${n}.json`])]) {
      assert.equal(c['external-gateway'], '192.0.2.1', 'every node reaches the outside through one router');
      assert.equal(c['external-vlan'], 20);
    }
    assert.equal(def['remote-nodes'].length, 3);
    assert.deepEqual(def['sriov-pools'], [{ pf: 'ens1f0', vfs: 8, mode: 'vfio' }, { pf: 'ens1f1', vfs: 8, mode: 'kernel' }]);
  });
  check('production: attachments defer to the per-node config (CIDR filled in on the node)', () => {
    for (const n of ofKind('NetworkAttachmentDefinition')) assert.deepEqual(n.spec, {});
    for (const c of Object.values(cniConfs)) assert.equal(c.ipam.ranges[0][0].subnet, '@NODE_POD_CIDR@');
    assert.equal(cniConfs['cni-sluice-sriov-ens1f0.conf'].vlan, 100);
    assert.equal(cniConfs['cni-sluice-sriov-ens1f1.conf'].vlan, 100);
    const resources = Object.fromEntries(ofKind('NetworkAttachmentDefinition')
      .map((n) => [n.metadata.name, n.metadata.annotations?.['k8s.v1.cni.cncf.io/resourceName']]));
    assert.equal(resources['sluice-sriov-ens1f0'], 'intel.com/sluice_dpdk');
    assert.equal(resources['sluice-sriov-ens1f1'], 'intel.com/sluice_netdev');
  });
}

if (profile === 'default' || profile === 'production' || profile === 'node-lookup') {
  check(`${profile}: no sluice-agent (no uplink, or the static node table)`, () => {
    assert.deepEqual(pod.containers.map((c) => c.name), ['sluiced']);
    assert.ok(!pod.volumes.some((v) => v.name === 'kube-api-access'));
  });
}

if (profile === 'kubernetes') {
  const agent = pod.containers.find((c) => c.name === 'sluice-agent');
  check('kubernetes: sluice-agent beside sluiced, on its API socket, NODE_NAME from spec.nodeName', () => {
    assert.deepEqual(pod.containers.map((c) => c.name), ['sluiced', 'sluice-agent']);
    assert.equal(agent.image, sluiced.image);
    assert.deepEqual(agent.command, ['sluice-agent']);
    assert.ok(agent.args.includes('--api-socket=/var/run/sluice/agent.sock'), 'its own socket, not the root one');
    assert.ok(agent.args.includes('--not-ready-grace=120'));
    assert.equal(hostPathOf(agent, '/var/run/sluice'), hostPathOf(sluiced, '/var/run/sluice'));
    const env = agent.env.find((e) => e.name === 'NODE_NAME');
    assert.equal(env.valueFrom.fieldRef.fieldPath, 'spec.nodeName');
    assert.ok(!agent.securityContext?.privileged, 'the agent is not privileged');
  });
  check('kubernetes: sluice-agent runs unprivileged on a socket sluiced gives its group', () => {
    assert.deepEqual(agent.securityContext, {
      runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const [name, c] of Object.entries(configs)) {
      assert.equal(c['agent-api-socket'], '/var/run/sluice/agent.sock', name);
      assert.equal(c['agent-api-gid'], 65532, name);
      assert.equal(c['api-socket'], '/var/run/sluice/sluice.sock', name);
    }
  });
  check('kubernetes: the API token is mounted into sluice-agent only', () => {
    const tokenPath = '/var/run/secrets/kubernetes.io/serviceaccount';
    const m = agent.volumeMounts.find((vm) => vm.mountPath === tokenPath);
    assert.ok(m, 'token mount');
    assert.ok(volumes[m.name].projected.sources.some((s) => s.serviceAccountToken?.path === 'token'));
    assert.ok(!sluiced.volumeMounts.some((vm) => vm.mountPath === tokenPath));
  });
  check('kubernetes: a ClusterRole with get/list/watch on nodes and patch on nodes/status only, bound to the service account', () => {
    const role = ofKind('ClusterRole').find((r) => r.metadata.name.endsWith('-node-controller'));
    assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] }]);
    const b = ofKind('ClusterRoleBinding').find((x) => x.roleRef.name === role.metadata.name);
    assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: ds.metadata.namespace }]);
  });
  check('kubernetes: the admission policy that narrows the agent\'s patch is bound (Deny)', () => {
    const policy = one('ValidatingAdmissionPolicy');
    assert.equal(one('ValidatingAdmissionPolicyBinding').spec.policyName, policy.metadata.name);
  });
  check('kubernetes: VTEPs outside InternalIPs are refused unless allowed', () => {
    assert.ok(!agent.args.includes('--allow-vtep-outside-internal-ips'));
  });
  check('kubernetes: no static remote nodes in the configs', () => {
    for (const c of Object.values(configs)) assert.deepEqual(c['remote-nodes'] ?? [], []);
    assert.equal(def.vni, 42);
  });
}

if (profile === 'server-mode') {
  check('server-mode: vhostUser.mode=server reaches the NetworkAttachmentDefinition, the SR-IOV one unchanged', () => {
    const nads = Object.fromEntries(ofKind('NetworkAttachmentDefinition').map((n) => [n.metadata.name, JSON.parse(n.spec.config)]));
    assert.equal(nads['sluice-vhost'].vhostMode, 'server');
    assert.ok(!('vhostMode' in nads['sluice-sriov']), 'no vhostMode on the SR-IOV network');
  });
}

if (profile === 'node-lookup') {
  check('node-lookup: a ClusterRole with get on nodes only, bound to the service account', () => {
    const role = one('ClusterRole');
    assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
    const b = one('ClusterRoleBinding');
    assert.equal(b.roleRef.name, role.metadata.name);
    assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: ds.metadata.namespace }]);
    assert.equal(pod.automountServiceAccountToken, true);
  });
  check('node-lookup: the lookup runs first and the config waits for its result', () => {
    assert.deepEqual(inits.map((c) => c.name), ['lookup-pod-cidr', 'node-config', 'install-cni']);
    assert.match(inits[0].command.at(-1), /kubectl get node "\$NODE_NAME" -o 'jsonpath=\{\.spec\.podCIDRs\[\*\]\} \{\.spec\.podCIDR\}'/);
    assert.equal(def['pod-cidr'], '@NODE_POD_CIDR@');
  });
  check('node-lookup: IPv4 only unless podCIDRFromNode.ipv6 (no pod-cidr-v6, one range set)', () => {
    assert.equal(def['pod-cidr-v6'], undefined);
    for (const c of Object.values(cniConfs)) assert.deepEqual(c.ipam.ranges, [[{ subnet: '@NODE_POD_CIDR@' }]]);
  });
}

if (profile === 'dual-stack') {
  check('dual-stack: every node config has its own pod-cidr and pod-cidr-v6; unlisted nodes the defaults', () => {
    const want = { 'default.json': ['10.244.0.0/24', 'fd00:10:244::/64'],
      'node-worker-1.json': ['10.244.1.0/24', 'fd00:10:244:1::/64'],
      'node-worker-2.json': ['10.244.2.0/24', 'fd00:10:244:2::/64'] };
    assert.deepEqual(Object.keys(configs).sort(), Object.keys(want));
    for (const [name, [v4, v6]] of Object.entries(want)) {
      assert.equal(configs[name]['pod-cidr'], v4, name);
      assert.equal(configs[name]['pod-cidr-v6'], v6, name);
    }
  });
  check('dual-stack: remote nodes carry both pod CIDRs of each other node', () => {
    assert.deepEqual(configs['node-worker-1.json']['remote-nodes'].map((r) => [r.name, r['pod-cidrs']]),
      [['worker-2', ['10.244.2.0/24', 'fd00:10:244:2::/64']]]);
    assert.deepEqual(configs['node-worker-2.json']['remote-nodes'].map((r) => [r.name, r['pod-cidrs']]),
      [['worker-1', ['10.244.1.0/24', 'fd00:10:244:1::/64']]]);
    for (const r of def['remote-nodes']) assert.equal(r['pod-cidrs'].length, 2, r.name);
  });
  check('dual-stack: host-local gets one range set per family, filled in per node', () => {
    for (const n of ofKind('NetworkAttachmentDefinition')) assert.deepEqual(n.spec, {});
    assert.ok(Object.keys(cniConfs).length >= 2, 'the vhost-user and SR-IOV networks');
    for (const [name, c] of Object.entries(cniConfs)) {
      assert.deepEqual(c.ipam, { type: 'host-local',
        ranges: [[{ subnet: '@NODE_POD_CIDR@' }], [{ subnet: '@NODE_POD_CIDR_V6@' }]] }, name);
    }
  });
}

if (profile === 'single-node-dual-stack') {
  check('single-node-dual-stack: sluiced and the attachments carry both CIDRs themselves', () => {
    assert.deepEqual(Object.keys(configs), ['default.json']);
    assert.equal(def['pod-cidr'], '10.244.0.0/24');
    assert.equal(def['pod-cidr-v6'], 'fd00:10:244::/64');
    const nads = ofKind('NetworkAttachmentDefinition');
    assert.ok(nads.length >= 2, 'the vhost-user and SR-IOV networks');
    for (const n of nads) {
      assert.deepEqual(JSON.parse(n.spec.config).ipam.ranges,
        [[{ subnet: '10.244.0.0/24' }], [{ subnet: 'fd00:10:244::/64' }]], n.metadata.name);
    }
  });
}

if (profile === 'node-lookup-dual-stack') {
  check('node-lookup-dual-stack: both families from spec.podCIDRs into sluiced and the IPAM', () => {
    assert.equal(inits[0].name, 'lookup-pod-cidr');
    assert.match(inits[0].command.at(-1), /jsonpath=\{\.spec\.podCIDRs\[\*\]\}/);
    assert.equal(def['pod-cidr'], '@NODE_POD_CIDR@');
    assert.equal(def['pod-cidr-v6'], '@NODE_POD_CIDR_V6@');
    for (const c of Object.values(cniConfs)) {
      assert.deepEqual(c.ipam.ranges, [[{ subnet: '@NODE_POD_CIDR@' }], [{ subnet: '@NODE_POD_CIDR_V6@' }]]);
    }
  });
}

// The metrics endpoint: on by default, in sluiced's config, on the container,
// in the Service and the scrape annotations alike; the dashboard in its
// ConfigMap for Grafana's sidecar; the operator's objects only when asked for.
if (profile === 'metrics-off') {
  check('metrics off: no endpoint, no Service, no dashboard, no annotations', () => {
    for (const [name, c] of Object.entries(configs)) {
      assert.equal(c['metrics-port'], undefined, name);
      assert.equal(c['metrics-address'], undefined, name);
    }
    assert.equal(sluiced.ports, undefined);
    assert.equal(ds.spec.template.metadata.annotations['prometheus.io/scrape'], undefined);
    assert.equal(ofKind('Service').length, 0);
    assert.equal(ofKind('ConfigMap').filter(isDashboard).length, 0);
  });
} else check('metrics: sluiced serves /metrics on the port the Service and annotations name', () => {
  const port = def['metrics-port'];
  assert.equal(port, 9476);
  if (profile === 'metrics-exposed') {
    // The node-config init container puts the node's status.hostIP there.
    assert.equal(def['metrics-address'], '@HOST_IP@');
    assert.equal(def['metrics-allowed-cidrs'], '10.0.0.0/8,192.0.2.7/32');
    assert.equal(def['metrics-pod-labels'], true);
  } else {
    assert.equal(def['metrics-address'], '127.0.0.1', 'loopback unless a value widens it');
    assert.equal(def['metrics-allowed-cidrs'], undefined);
    assert.equal(def['metrics-pod-labels'], undefined, 'pod labels are opt-in');
  }
  for (const [name, c] of Object.entries(configs)) assert.equal(c['metrics-port'], port, name);
  assert.deepEqual(sluiced.ports, [{ name: 'metrics', containerPort: port, protocol: 'TCP' }]);
  const ann = ds.spec.template.metadata.annotations;
  assert.equal(ann['prometheus.io/scrape'], 'true');
  assert.equal(ann['prometheus.io/port'], String(port));
  assert.equal(ann['prometheus.io/path'], '/metrics');
  const svc = one('Service');
  assert.equal(svc.spec.clusterIP, 'None', 'headless: one endpoint per node');
  assert.deepEqual(svc.spec.selector, ds.spec.selector.matchLabels);
  assert.deepEqual(svc.spec.ports, [{ name: 'metrics', port, targetPort: 'metrics', protocol: 'TCP' }]);
  if (profile === 'monitors') {
    const sm = one('ServiceMonitor');
    assert.deepEqual(sm.spec.selector.matchLabels, ds.spec.selector.matchLabels);
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata.labels[k], v, 'selects the Service');
    assert.deepEqual(sm.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    const pm = one('PodMonitor');
    assert.deepEqual(pm.spec.selector.matchLabels, ds.spec.selector.matchLabels);
    assert.deepEqual(pm.spec.podMetricsEndpoints, [{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    assert.equal(pm.metadata.labels.release, 'prometheus', 'the values\' extra labels');
  } else {
    assert.equal(ofKind('ServiceMonitor').length + ofKind('PodMonitor').length, 0, 'operator objects are opt-in');
  }
});

if (profile !== 'metrics-off') check('metrics: the Grafana dashboard is a ConfigMap with the sidecar label and valid JSON', () => {
  const dash = ofKind('ConfigMap').filter(isDashboard);
  assert.equal(dash.length, 1);
  const json = JSON.parse(dash[0].data['sluice.json']);
  assert.equal(json.uid, 'sluice-dataplane');
  assert.ok(json.panels.length >= 10);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

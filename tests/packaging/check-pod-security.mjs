// The Pod Security Standards' "baseline" profile, checked offline against the
// chart's rendered workload pods (the example DPDK pod, the pod a user copies)
// and the vhost-user networks they attach to: a pod on a Sluice network must
// be admissible in a namespace labelled pod-security.kubernetes.io/enforce:
// baseline. The controls and their allowed values are the standard's
// (kubernetes.io/docs/concepts/security/pod-security-standards, Baseline
// table), one function each. sluiced's own DaemonSet is a node agent and
// privileged by design: it is not a workload pod and is not checked here.
// The checker is shown able to fail first: each control must reject the
// example pod with one known violation added.
//
// Usage: node check-pod-security.mjs RENDERED.yaml...
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

// Capabilities a baseline pod may add (the standard's list).
const kBaselineCaps = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD',
  'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
// The "safe" sysctls (namespaced and isolated per pod) the standard allows.
const kSafeSysctls = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const kSeLinuxTypes = new Set(['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);

const allContainers = (spec) => [...(spec.containers ?? []), ...(spec.initContainers ?? []),
  ...(spec.ephemeralContainers ?? [])];
const isUnsetOr = (v, ...allowed) => v === undefined || v === null || allowed.includes(v);

// Each control: name → pod → list of violations (strings).
const kControls = {
  'HostProcess': (pod) => [pod.spec.securityContext, ...allContainers(pod.spec).map((c) => c.securityContext)]
    .filter((sc) => !isUnsetOr(sc?.windowsOptions?.hostProcess, false)).map(() => 'windowsOptions.hostProcess'),
  'Host Namespaces': (pod) => ['hostNetwork', 'hostPID', 'hostIPC']
    .filter((k) => !isUnsetOr(pod.spec[k], false)).map((k) => `spec.${k}`),
  'Privileged Containers': (pod) => allContainers(pod.spec)
    .filter((c) => !isUnsetOr(c.securityContext?.privileged, false)).map((c) => `${c.name}: privileged`),
  'Capabilities': (pod) => allContainers(pod.spec).flatMap((c) => (c.securityContext?.capabilities?.add ?? [])
    .filter((cap) => !kBaselineCaps.has(cap)).map((cap) => `${c.name}: capabilities.add ${cap}`)),
  'HostPath Volumes': (pod) => (pod.spec.volumes ?? []).filter((v) => v.hostPath !== undefined)
    .map((v) => `volume ${v.name}: hostPath`),
  'Host Ports': (pod) => allContainers(pod.spec).flatMap((c) => (c.ports ?? [])
    .filter((p) => !isUnsetOr(p.hostPort, 0)).map((p) => `${c.name}: hostPort ${p.hostPort}`)),
  'AppArmor': (pod) => [
    ...[pod.spec.securityContext, ...allContainers(pod.spec).map((c) => c.securityContext)]
      .filter((sc) => !isUnsetOr(sc?.appArmorProfile?.type, 'RuntimeDefault', 'Localhost'))
      .map((sc) => `appArmorProfile.type ${sc.appArmorProfile.type}`),
    ...Object.entries(pod.metadata?.annotations ?? {})
      .filter(([k, v]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/') &&
        v !== 'runtime/default' && !v.startsWith('localhost/'))
      .map(([k, v]) => `${k}: ${v}`),
  ],
  'SELinux': (pod) => [pod.spec.securityContext, ...allContainers(pod.spec).map((c) => c.securityContext)]
    .flatMap((sc) => {
      const o = sc?.seLinuxOptions;
      if (!o) return [];
      const out = [];
      if (!isUnsetOr(o.type, '') && !kSeLinuxTypes.has(o.type)) out.push(`seLinuxOptions.type ${o.type}`);
      if (!isUnsetOr(o.user, '')) out.push(`seLinuxOptions.user ${o.user}`);
      if (!isUnsetOr(o.role, '')) out.push(`seLinuxOptions.role ${o.role}`);
      return out;
    }),
  '/proc Mount Type': (pod) => allContainers(pod.spec)
    .filter((c) => !isUnsetOr(c.securityContext?.procMount, 'Default')).map((c) => `${c.name}: procMount`),
  'Seccomp': (pod) => [pod.spec.securityContext, ...allContainers(pod.spec).map((c) => c.securityContext)]
    .filter((sc) => sc?.seccompProfile?.type === 'Unconfined').map(() => 'seccompProfile.type Unconfined'),
  'Sysctls': (pod) => (pod.spec.securityContext?.sysctls ?? [])
    .filter((s) => !kSafeSysctls.has(s.name)).map((s) => `sysctl ${s.name}`),
};

function baselineViolations(pod) {
  return Object.entries(kControls).flatMap(([control, fn]) => fn(pod).map((v) => `${control}: ${v}`));
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: check-pod-security.mjs RENDERED.yaml...');
  process.exit(2);
}
const objects = files.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean));
const pods = objects.filter((o) => o.kind === 'Pod');
const nads = objects.filter((o) => o.kind === 'NetworkAttachmentDefinition');

let passed = 0, failed = 0;
function check(name, fn) {
  try { fn(); passed++; console.log(`ok   ${name}`); } catch (e) { failed++; console.log(`FAIL ${name}\n     ${e.message.split('\n').join('\n     ')}`); }
}

check('the rendered objects hold a workload pod on a Sluice network', () => {
  assert.ok(pods.some((p) => p.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks']),
    `pods: ${pods.map((p) => p.metadata?.name).join(', ') || 'none'}`);
});

for (const pod of pods) {
  check(`pod ${pod.metadata.name} passes Pod Security "baseline"`, () => {
    assert.deepEqual(baselineViolations(pod), []);
  });
  check(`pod ${pod.metadata.name} keeps its vhost-user sockets in an emptyDir of its own`, () => {
    const volumes = Object.fromEntries((pod.spec.volumes ?? []).map((v) => [v.name, v]));
    const conf = nads.map((n) => n.spec?.config && JSON.parse(n.spec.config))
      .find((c) => c?.interfaceType === 'vhost-user');
    assert.ok(conf, 'a vhost-user network with its config in the NAD');
    const name = conf.socketVolume ?? 'sluice-sockets';
    const dir = conf.podSocketDir ?? '/var/run/sluice';
    assert.ok(volumes[name]?.emptyDir, `volume ${name} is an emptyDir: ${JSON.stringify(volumes[name])}`);
    const mounts = allContainers(pod.spec).flatMap((c) => c.volumeMounts ?? []);
    assert.ok(mounts.some((m) => m.name === name && m.mountPath === dir), `${name} mounted at ${dir}`);
  });
}

// The vhost-user networks ask for per-pod sockets: the pods that use them need no hostPath.
check('the vhost-user networks put each pod\'s sockets in its own volume (perPodSockets)', () => {
  const confs = nads.map((n) => n.spec?.config && JSON.parse(n.spec.config)).filter((c) => c?.interfaceType === 'vhost-user');
  assert.ok(confs.length > 0, 'a vhost-user NetworkAttachmentDefinition with a config');
  for (const c of confs) assert.equal(c.perPodSockets, true, `${c.name}: perPodSockets`);
});

// The checker can fail: one known violation per control added to the example pod.
const example = pods.find((p) => p.metadata?.annotations?.['k8s.v1.cni.cncf.io/networks']);
const kMutations = [
  ['HostProcess', (p) => { p.spec.securityContext = { windowsOptions: { hostProcess: true } }; }],
  ['Host Namespaces', (p) => { p.spec.hostNetwork = true; }],
  ['Host Namespaces', (p) => { p.spec.hostPID = true; }],
  ['Host Namespaces', (p) => { p.spec.hostIPC = true; }],
  ['Privileged Containers', (p) => { p.spec.containers[0].securityContext = { privileged: true }; }],
  ['Capabilities', (p) => { p.spec.containers[0].securityContext = { capabilities: { add: ['NET_ADMIN'] } }; }],
  ['Capabilities', (p) => { p.spec.initContainers = [{ name: 'i', image: 'x', securityContext: { capabilities: { add: ['SYS_ADMIN'] } } }]; }],
  ['HostPath Volumes', (p) => { p.spec.volumes.push({ name: 'h', hostPath: { path: '/var/run/sluice/vhost' } }); }],
  ['Host Ports', (p) => { p.spec.containers[0].ports = [{ containerPort: 80, hostPort: 8080 }]; }],
  ['AppArmor', (p) => { p.spec.securityContext = { appArmorProfile: { type: 'Unconfined' } }; }],
  ['AppArmor', (p) => { p.metadata.annotations['container.apparmor.security.beta.kubernetes.io/dpdk-app'] = 'unconfined'; }],
  ['SELinux', (p) => { p.spec.securityContext = { seLinuxOptions: { type: 'spc_t' } }; }],
  ['SELinux', (p) => { p.spec.containers[0].securityContext = { seLinuxOptions: { user: 'system_u' } }; }],
  ['/proc Mount Type', (p) => { p.spec.containers[0].securityContext = { procMount: 'Unmasked' }; }],
  ['Seccomp', (p) => { p.spec.securityContext = { seccompProfile: { type: 'Unconfined' } }; }],
  ['Sysctls', (p) => { p.spec.securityContext = { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] }; }],
];
if (example) {
  for (const [control, mutate] of kMutations) {
    check(`the checker rejects the example pod with a "${control}" violation (${mutate.toString().slice(9, 70)})`, () => {
      const p = structuredClone(example);
      mutate(p);
      const v = baselineViolations(p);
      assert.ok(v.some((s) => s.startsWith(`${control}: `)), `violations: ${JSON.stringify(v)}`);
    });
  }
  check('the checker allows what baseline allows (safe capability, sysctl, RuntimeDefault seccomp)', () => {
    const p = structuredClone(example);
    p.spec.securityContext = { seccompProfile: { type: 'RuntimeDefault' }, sysctls: [{ name: 'net.ipv4.ping_group_range', value: '0 0' }] };
    p.spec.containers[0].securityContext = { capabilities: { add: ['NET_BIND_SERVICE'] }, allowPrivilegeEscalation: false };
    assert.deepEqual(baselineViolations(p), []);
  });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

// The node controller's ValidatingAdmissionPolicy (agent-admission-policy.yaml)
// evaluated offline: every CEL expression of the rendered policy is parsed and
// run by a CEL evaluator (@bufbuild/cel) on sample admission requests, as the
// API server binds them (object, oldObject, request, variables), and each
// request must be admitted or denied as the policy promises. This checks the
// expressions' syntax and logic; it is not the API server's type checker, and
// the policy has never run on a real API server.
//
// Usage: node check-admission-policy.mjs RENDERED.yaml NAMESPACE SERVICE-ACCOUNT
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { run } from '@bufbuild/cel';

const [file, namespace, serviceAccount] = process.argv.slice(2);
if (!file || !namespace || !serviceAccount) {
  console.error('usage: check-admission-policy.mjs RENDERED.yaml NAMESPACE SERVICE-ACCOUNT');
  process.exit(2);
}
const objects = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
assert.equal(policies.length, 1, 'exactly one ValidatingAdmissionPolicy');
const policy = policies[0];
const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
assert.equal(bindings.length, 1, 'exactly one ValidatingAdmissionPolicyBinding');
assert.equal(bindings[0].spec.policyName, policy.metadata.name);
assert.deepEqual(bindings[0].spec.validationActions, ['Deny']);
assert.deepEqual(policy.spec.matchConstraints.resourceRules,
  [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes', 'nodes/status'] }]);
assert.equal(policy.spec.failurePolicy, 'Fail');

// CEL maps and lists from JSON (plain objects would be messages to the evaluator).
const toCel = (v) => (Array.isArray(v) ? v.map(toCel)
  : v !== null && typeof v === 'object' ? new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)])) : v);

function evaluate(expression, bindings, what) {
  const r = run(expression, bindings);
  if (r instanceof Error) throw new Error(`${what}: ${r.message}\n  ${expression}`);
  return r;
}

// Runs the policy on one request: 'unmatched' (a match condition is false),
// 'admitted', or the message of the first failed validation.
function admit(request, object, oldObject) {
  const b = { request: toCel(request), object: toCel(object), oldObject: toCel(oldObject) };
  for (const c of policy.spec.matchConditions ?? []) {
    const r = evaluate(c.expression, b, `matchCondition ${c.name}`);
    assert.equal(typeof r, 'boolean', `matchCondition ${c.name} is a bool`);
    if (!r) return 'unmatched';
  }
  const variables = new Map();
  b.variables = variables;
  for (const v of policy.spec.variables ?? []) variables.set(v.name, evaluate(v.expression, b, `variable ${v.name}`));
  for (const v of policy.spec.validations) {
    const r = evaluate(v.expression, b, 'validation');
    assert.equal(typeof r, 'boolean', `validation is a bool: ${v.expression}`);
    if (r) continue;
    if (v.messageExpression) {
      const m = evaluate(v.messageExpression, b, 'messageExpression');
      assert.equal(typeof m, 'string', 'messageExpression is a string');
      return m;
    }
    return v.message;
  }
  return 'admitted';
}

const agentUser = (node) => ({
  userInfo: {
    username: `system:serviceaccount:${namespace}:${serviceAccount}`,
    extra: node === undefined ? { 'authentication.kubernetes.io/pod-name': ['sluice-x'] }
      : { 'authentication.kubernetes.io/node-name': [node], 'authentication.kubernetes.io/pod-name': ['sluice-x'] },
  },
});
const node = (name, annotations) => ({
  apiVersion: 'v1', kind: 'Node',
  metadata: { name, resourceVersion: '7', labels: { 'kubernetes.io/hostname': name }, annotations },
  spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
  status: { addresses: [{ type: 'InternalIP', address: '192.0.2.11' }], conditions: [{ type: 'Ready', status: 'True' }] },
});
const vtep = '{"version":1,"vtep":"192.0.2.11","mac":"02:00:00:00:00:11","vni":1}';
const before = node('worker-1', { 'flannel.example/x': 'y' });
const withVtep = node('worker-1', { 'flannel.example/x': 'y', 'sluice.dev/vtep': vtep });
const edited = (f) => { const n = structuredClone(withVtep); f(n); return n; };

let passed = 0, failed = 0;
function check(name, got, want) {
  try { assert.equal(got, want); passed++; console.log(`ok   ${name}`); } catch (e) {
    failed++; console.log(`FAIL ${name}\n     ${e.message.split('\n').join('\n     ')}`);
  }
}

check('the agent publishes its own VTEP', admit(agentUser('worker-1'), withVtep, before), 'admitted');
check('the agent changes its routed prefixes',
  admit(agentUser('worker-1'), edited((n) => { n.metadata.annotations['sluice.dev/routed-prefixes'] = '["10.100.0.0/16"]'; }), withVtep),
  'admitted');
check('the agent removes its own sluice.dev annotation', admit(agentUser('worker-1'), before, withVtep), 'admitted');
check('a Node without annotations gets its first one',
  admit(agentUser('worker-1'), node('worker-1', { 'sluice.dev/vtep': vtep }), node('worker-1', undefined)), 'admitted');
check('another Node is refused',
  admit(agentUser('worker-2'), withVtep, before), 'sluice-agent on node worker-2 may not change Node worker-1');
check('a token without the node-name claim is refused',
  admit(agentUser(undefined), withVtep, before), 'sluice-agent: the token names no node (authentication.kubernetes.io/node-name)');
check('another annotation is refused',
  admit(agentUser('worker-1'), edited((n) => { n.metadata.annotations['flannel.example/x'] = 'z'; }), withVtep),
  'sluice-agent may add or change only sluice.dev/ annotations');
check('a new foreign annotation is refused',
  admit(agentUser('worker-1'), edited((n) => { n.metadata.annotations['evil.example/y'] = '1'; }), withVtep),
  'sluice-agent may add or change only sluice.dev/ annotations');
check('removing a foreign annotation is refused',
  admit(agentUser('worker-1'), edited((n) => { delete n.metadata.annotations['flannel.example/x']; }), withVtep),
  'sluice-agent may remove only sluice.dev/ annotations');
check('a label is refused',
  admit(agentUser('worker-1'), edited((n) => { n.metadata.labels['node-role.kubernetes.io/control-plane'] = ''; }), withVtep),
  "sluice-agent may not change a Node's labels");
check('cordoning is refused',
  admit(agentUser('worker-1'), edited((n) => { n.spec.unschedulable = true; }), withVtep),
  "sluice-agent may not change a Node's spec (taints, unschedulable, pod CIDRs)");
check('a status change is refused',
  admit(agentUser('worker-1'), edited((n) => { n.status.conditions[0].status = 'False'; }), withVtep),
  "sluice-agent may not change a Node's status");
check('other users (the kubelet) are not this policy\'s',
  admit({ userInfo: { username: 'system:node:worker-1', extra: {} } }, edited((n) => { n.spec.unschedulable = true; }), withVtep),
  'unmatched');

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

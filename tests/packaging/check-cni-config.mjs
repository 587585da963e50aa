// Feeds every CNI network config the chart renders (each values file) to the
// real sluice-cni, so a key or value the plugin would reject fails here rather
// than at a pod's first ADD. STATUS is the one verb that parses the whole
// config and then only asks sluiced for its health: pointed at a socket
// nobody listens on, an accepted config ends in code 50 ("sluiced is not
// available"), a rejected one in code 7 (invalid config) before that. STATUS
// needs cniVersion 1.1.0, so the test raises the chart's 1.0.0 for the call.
//
// Usage: node check-cni-config.mjs SLUICE-CNI RENDERED.yaml...
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const [plugin, ...files] = process.argv.slice(2);
if (!plugin || !files.length) { console.error('usage: check-cni-config.mjs SLUICE-CNI RENDERED.yaml...'); process.exit(2); }
const tmp = mkdtempSync(join(tmpdir(), 'sluice-cni-config-'));
let passed = 0, failed = 0;

function status(conf) {
  const r = spawnSync(plugin, [], {
    input: JSON.stringify(conf),
    env: { PATH: process.env.PATH, CNI_COMMAND: 'STATUS', CNI_PATH: '/usr/lib/cni' },
    encoding: 'utf8',
  });
  return { out: r.stdout ? JSON.parse(r.stdout) : null, err: r.stderr, code: r.status };
}

const cases = [];
for (const f of files) {
  const objects = parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);
  const cm = objects.find((o) => o.kind === 'ConfigMap');
  for (const [key, text] of Object.entries(cm.data).filter(([k]) => k.startsWith('cni-'))) {
    // What node-config does on the node, then the test's own changes.
    const conf = JSON.parse(text.replaceAll('@NODE_POD_CIDR@', '10.244.9.0/24'));
    conf.cniVersion = '1.1.0';
    conf.apiSocket = join(tmp, 'nobody-listens.sock');
    cases.push([`${basename(f)} ${key}`, conf]);
  }
}
// The check itself must be able to fail: a config the plugin rejects.
const bad = structuredClone(cases[0][1]);
bad.mtu = 99999;

try {
  for (const [name, conf] of cases) {
    const r = status(conf);
    try {
      assert.equal(r.out?.code, 50, `expected code 50 (config accepted, sluiced unavailable), got ${JSON.stringify(r.out)}`);
      assert.doesNotMatch(r.err, /ignoring unknown field/, 'the plugin knows every key');
      passed++; console.log(`ok   ${name}: accepted by sluice-cni`);
    } catch (e) { failed++; console.log(`FAIL ${name}: ${e.message}\n${r.err}`); }
  }
  const r = status(bad);
  if (r.out?.code === 7) { passed++; console.log('ok   an out-of-range mtu is rejected with code 7 (the check can fail)'); }
  else { failed++; console.log(`FAIL out-of-range mtu not rejected: ${JSON.stringify(r.out)}`); }
} finally { rmSync(tmp, { recursive: true }); }
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

// Hands every sluiced config file the chart renders (each values file, each
// node's file) to sluiced's own parser via sluiced_config_check, after filling
// in the placeholders the node-config init container fills in on a node. Every
// file must be accepted; a deliberately bad one (a port count above sluiced's
// limit) must be rejected, so the check can fail.
//
// Usage: node check-sluiced-config.mjs SLUICED_CONFIG_CHECK RENDERED.yaml...
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const [checker, ...files] = process.argv.slice(2);
if (!checker || !files.length) { console.error('usage: check-sluiced-config.mjs CHECKER RENDERED.yaml...'); process.exit(2); }
const tmp = mkdtempSync(join(tmpdir(), 'sluiced-config-'));
let passed = 0, failed = 0;
const run = (paths) => spawnSync(checker, paths, { encoding: 'utf8' });

try {
  const paths = [];
  for (const f of files) {
    const objects = parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS()).filter(Boolean);
    const cm = objects.find((o) => o.kind === 'ConfigMap' && !o.metadata?.labels?.grafana_dashboard);
    for (const [key, text] of Object.entries(cm.data).filter(([k]) => k === 'default.json' || /^node-.+\.json$/.test(k))) {
      const p = join(tmp, `${basename(f, '.yaml')}-${key}`);
      writeFileSync(p, text.replaceAll('@HOST_IP@', '198.51.100.7').replaceAll('@NODE_POD_CIDR@', '10.244.9.0/24')
        .replaceAll('@NODE_POD_CIDR_V6@', 'fd00:10:244:9::/64'));
      paths.push(p);
    }
  }
  for (const p of paths) {
    const r = run([p]);
    if (r.status === 0) { passed++; console.log(`ok   ${r.stdout.trim()}`); }
    else { failed++; console.log(`FAIL ${r.stdout.trim()} ${r.stderr.trim()}`); }
  }
  const bad = JSON.parse(readFileSync(paths[0], 'utf8'));
  bad['max-ports'] = 4096;
  const badPath = join(tmp, 'too-many-ports.json');
  writeFileSync(badPath, JSON.stringify(bad));
  const r = run([badPath]);
  if (r.status !== 0 && /max-ports/.test(r.stdout)) { passed++; console.log(`ok   a bad config is rejected: ${r.stdout.trim()}`); }
  else { failed++; console.log(`FAIL a bad config was not rejected: ${r.stdout.trim()}`); }
} finally { rmSync(tmp, { recursive: true }); }
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

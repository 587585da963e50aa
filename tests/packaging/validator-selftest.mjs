// Shows that validate-k8s.mjs can fail: every fixture under fixtures/ is a
// manifest with one known defect, named on its "# expect:" line, and must be
// rejected with that message; the CRD (a valid object) must be accepted.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateText } from './validate-k8s.mjs';

const here = dirname(fileURLToPath(import.meta.url));
let passed = 0, failed = 0;
const report = (ok, what) => { ok ? passed++ : failed++; console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); };

for (const f of readdirSync(join(here, 'fixtures')).sort()) {
  const text = readFileSync(join(here, 'fixtures', f), 'utf8');
  const expect = /^# expect: (.+)$/m.exec(text)?.[1];
  if (!expect) { report(false, `${f}: no "# expect:" line`); continue; }
  const errors = (await validateText(text, f)).flatMap((r) => r.errors);
  const hit = errors.some((e) => e.includes(expect));
  report(hit, `${f} rejected with "${expect}"${hit ? '' : `; got: ${JSON.stringify(errors)}`}`);
}
const crd = readFileSync(join(here, 'crds', 'network-attachment-definitions.yaml'), 'utf8');
const crdErrors = (await validateText(crd, 'crd')).flatMap((r) => r.errors);
report(crdErrors.length === 0, `valid CRD accepted${crdErrors.length ? `; got: ${JSON.stringify(crdErrors)}` : ''}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || passed === 0 ? 1 : 0);

// The Grafana dashboard (helm/sluice/dashboards/sluice.json) against what
// sluiced exports: the JSON parses, every panel has queries, and every
// metric name a query (or a template variable) reads is a series the
// exporter produces (a page sluiced renders with every figure set, from
// metrics_page_sample).
//
// Usage: node check-dashboard.mjs DASHBOARD.json PAGE.txt
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const [dashFile, pageFile] = process.argv.slice(2);
const dash = JSON.parse(readFileSync(dashFile, 'utf8'));
const page = readFileSync(pageFile, 'utf8');

// The series names on the page: sample lines' names (with _bucket etc.).
const exported = new Set(page.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/)[0]));
assert.ok(exported.size > 20, `the page has series (${exported.size})`);

// PromQL's words that are not metric names: functions, aggregations,
// keywords; and label names inside by (...) / {...} are stripped first.
const kNotMetrics = new Set(['sum', 'rate', 'irate', 'increase', 'by', 'without', 'histogram_quantile', 'avg',
  'max', 'min', 'count', 'topk', 'bottomk', 'label_values', 'and', 'or', 'unless', 'on', 'ignoring', 'offset']);
function metricNames(expr) {
  const stripped = expr
    .replace(/\{[^}]*\}/g, '')           // label matchers
    .replace(/\[[^\]]*\]/g, '')          // range selectors
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '')  // grouping labels
    .replace(/"[^"]*"/g, '')             // strings
    .replace(/,\s*[a-z_]+\s*\)/g, ')');   // label_values(metric, label)
  return [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0])
    .filter((w) => !kNotMetrics.has(w) && !/^[0-9.e]+$/.test(w));
}

let queries = 0, failed = 0;
const check = (where, expr) => {
  queries++;
  const names = metricNames(expr);
  if (names.length === 0) { failed++; console.log(`FAIL ${where}: no metric in ${expr}`); return; }
  for (const n of names) {
    if (!exported.has(n)) { failed++; console.log(`FAIL ${where}: ${n} is not a series sluiced exports (${expr})`); }
  }
};
assert.ok(Array.isArray(dash.panels) && dash.panels.length > 0, 'panels');
for (const p of dash.panels) {
  assert.ok(p.targets?.length > 0, `panel "${p.title}" has queries`);
  for (const t of p.targets) check(`panel "${p.title}" ${t.refId}`, t.expr);
}
for (const v of dash.templating?.list ?? []) if (v.type === 'query') check(`variable ${v.name}`, v.query.query ?? v.query);
// The check itself: a name the exporter never produces is caught.
assert.deepEqual(metricNames('sum by (pmd) (rate(sluice_nope_total{pod!=""}[5m])) / 2'), ['sluice_nope_total']);
console.log(`${queries} queries, ${failed} naming series the exporter does not produce`);
process.exit(failed ? 1 : 0);

// Offline, strict validation of rendered Kubernetes manifests (what
// `kubectl apply --validate=strict` would check against a 1.34 API server,
// without one). Each object passes three checks:
//   1. YAML: parses, no duplicate keys (the `yaml` package rejects them).
//   2. Schema: types, required fields and enums from the Kubernetes OpenAPI
//      definitions, as compiled into `kubernetes-models`.
//   3. Unknown fields: every field must be declared by the API type; the field
//      lists come from `@kubernetes/client-node`'s generated models (the same
//      OpenAPI document). kubernetes-models alone accepts unknown fields.
// NetworkAttachmentDefinitions are checked against the CRD's openAPIV3Schema
// (crds/network-attachment-definitions.yaml) with ajv, unknown fields rejected
// the way the API server's strict field validation rejects unknown fields of a
// structural schema.
//
// Usage: node validate-k8s.mjs FILE...   (or "-" for stdin); exit 1 on any error.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import Ajv from 'ajv';
import * as k8s from '@kubernetes/client-node';

const here = dirname(fileURLToPath(import.meta.url));

// apiVersion -> [kubernetes-models import path prefix, client-node class prefix].
// Only the groups the chart renders; anything else is reported, never skipped.
const kGroups = {
  'v1': ['kubernetes-models/v1', 'V1'],
  'apps/v1': ['kubernetes-models/apps/v1', 'V1'],
  'rbac.authorization.k8s.io/v1': ['kubernetes-models/rbac.authorization.k8s.io/v1', 'V1'],
  'apiextensions.k8s.io/v1': ['kubernetes-models/apiextensions.k8s.io/v1', 'V1'],
  'admissionregistration.k8s.io/v1': ['kubernetes-models/admissionregistration.k8s.io/v1', 'V1'],
};

// Walks a value against a client-node type string and reports fields the type
// does not declare, and JSON types that cannot be the declared one.
function checkFields(value, type, path, errors) {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) { errors.push(`${path}: expected an array`); return; }
    value.forEach((v, i) => checkFields(v, array[1], `${path}[${i}]`, errors));
    return;
  }
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) { errors.push(`${path}: expected a map`); return; }
    for (const [k, v] of Object.entries(value)) checkFields(v, map[1], `${path}.${k}`, errors);
    return;
  }
  switch (type) {
    case 'string': case 'Date':
      if (typeof value !== 'string') errors.push(`${path}: expected a string, got ${JSON.stringify(value)}`);
      return;
    case 'number':
      if (typeof value !== 'number') errors.push(`${path}: expected a number, got ${JSON.stringify(value)}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') errors.push(`${path}: expected a boolean, got ${JSON.stringify(value)}`);
      return;
    case 'IntOrString':
      if (typeof value !== 'string' && !Number.isInteger(value)) errors.push(`${path}: expected an integer or a string`);
      return;
    case 'any': case 'object':
      return;
  }
  const model = k8s[type];
  if (!model || typeof model.getAttributeTypeMap !== 'function') {
    errors.push(`${path}: validator does not know type ${type}`);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) { errors.push(`${path}: expected an object (${type})`); return; }
  const attrs = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    const t = attrs.get(k);
    if (t === undefined) errors.push(`${path}.${k}: unknown field (not in ${type})`);
    else checkFields(v, t, `${path}.${k}`, errors);
  }
}

// The CRD's schema as ajv JSON Schema: every object that lists properties and
// does not opt into x-kubernetes-preserve-unknown-fields is closed.
function structuralToAjv(s) {
  if (!s || typeof s !== 'object') return s;
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith('x-kubernetes-') || k === 'description') continue;
    if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, structuralToAjv(ps)]));
    else if (k === 'items') out.items = structuralToAjv(v);
    else out[k] = v;
  }
  if (s.type === 'object' && s.properties && !s['x-kubernetes-preserve-unknown-fields'] && s.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return out;
}

function loadCrdValidators() {
  const validators = new Map();
  const ajv = new Ajv({ allErrors: true, strict: true });
  const texts = ['network-attachment-definitions.yaml', 'prometheus-operator-monitors.yaml']
    .map((f) => readFileSync(join(here, 'crds', f), 'utf8'));
  for (const doc of texts.flatMap((text) => parseAllDocuments(text))) {
    const crd = doc.toJS();
    for (const v of crd.spec.versions) {
      const schema = structuralToAjv(v.schema.openAPIV3Schema);
      // metadata is an ObjectMeta: the API server checks it, not the CRD schema.
      schema.properties.metadata = { type: 'object' };
      validators.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, ajv.compile(schema));
    }
  }
  return validators;
}

export async function validateObject(obj, crdValidators) {
  const errors = [];
  if (!obj || typeof obj !== 'object') return ['document is not an object'];
  const { apiVersion, kind } = obj;
  const crd = crdValidators.get(`${apiVersion}/${kind}`);
  if (crd) {
    if (!crd(obj)) for (const e of crd.errors) errors.push(`${e.instancePath || '(root)'}: ${e.message}${e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : ''}`);
    checkFields(obj.metadata, 'V1ObjectMeta', 'metadata', errors);
    if (!obj.metadata?.name) errors.push('metadata.name: required');
    return errors;
  }
  const group = kGroups[apiVersion];
  if (!group) return [`no schema for apiVersion ${apiVersion} (kind ${kind})`];
  let Model;
  try {
    Model = (await import(`${group[0]}/${kind}`))[kind];
  } catch {
    return [`no schema for ${apiVersion} ${kind}`];
  }
  try {
    new Model(obj).validate();
  } catch (e) {
    errors.push(`schema: ${e.message}`);
  }
  checkFields(obj, `${group[1]}${kind}`, kind, errors);
  return errors;
}

// Validates every document of a multi-document YAML text; returns [{where, errors}].
export async function validateText(text, label) {
  const crdValidators = loadCrdValidators();
  const results = [];
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  let n = 0;
  for (const doc of docs) {
    n++;
    if (doc.errors.length) { results.push({ where: `${label} document ${n}`, errors: doc.errors.map((e) => e.message) }); continue; }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) continue; // empty document between separators
    const where = `${label}: ${obj.kind ?? '?'} ${obj.metadata?.name ?? '?'}`;
    results.push({ where, errors: await validateObject(obj, crdValidators) });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (!files.length) { console.error('usage: validate-k8s.mjs FILE... (- for stdin)'); process.exit(2); }
  let failed = 0, objects = 0;
  for (const f of files) {
    const text = readFileSync(f === '-' ? 0 : f, 'utf8');
    for (const r of await validateText(text, f === '-' ? 'stdin' : f)) {
      objects++;
      if (r.errors.length) {
        failed++;
        console.log(`INVALID ${r.where}`);
        for (const e of r.errors) console.log(`  ${e}`);
      } else {
        console.log(`valid   ${r.where}`);
      }
    }
  }
  if (objects === 0) { console.log('no objects found'); process.exit(1); }
  console.log(`${objects} objects, ${failed} invalid`);
  process.exit(failed ? 1 : 0);
}

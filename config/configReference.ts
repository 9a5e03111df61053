/**
 * The configuration reference of docs/configuration.md, rendered from the configs' JSON Schema
 * (config/jsonSchema.ts): one row per field with its type, default and allowed values. Sources are
 * a union by `type`: the fields every source takes are listed once, then each type's own.
 */
import { buildConfigJsonSchema, evalConfigJsonSchema, type JsonSchema } from './jsonSchema.js';

interface Row {
  field: string;
  type: string;
  default: string;
  allowed: string;
}

const code = (s: string) => '`' + s.replaceAll('|', '\\|') + '`';
const json = (v: unknown) => code(JSON.stringify(v));

function typeOf(s: JsonSchema): string {
  if (s.const !== undefined) return json(s.const);
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map(json).join(' \\| ');
  const options = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (options) return options.map(typeOf).join(' \\| ');
  if (s.type === 'array') return `array of ${typeOf((s.items ?? {}) as JsonSchema)}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') return `map of ${typeOf(s.additionalProperties as JsonSchema)}`;
  return typeof s.type === 'string' ? s.type : 'any';
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function allowedOf(s: JsonSchema): string {
  const parts: string[] = [];
  if (typeof s.minimum === 'number') parts.push(`≥ ${s.minimum}`);
  if (typeof s.exclusiveMinimum === 'number') parts.push(`> ${s.exclusiveMinimum}`);
  if (typeof s.maximum === 'number' && s.maximum !== MAX_SAFE) parts.push(`≤ ${s.maximum}`);
  if (typeof s.exclusiveMaximum === 'number') parts.push(`< ${s.exclusiveMaximum}`);
  if (typeof s.minLength === 'number' && s.minLength > 1) parts.push(`length ≥ ${s.minLength}`);
  if (typeof s.maxLength === 'number') parts.push(`length ≤ ${s.maxLength}`);
  if (typeof s.minItems === 'number') parts.push(`items ≥ ${s.minItems}`);
  if (typeof s.pattern === 'string') parts.push(code(s.pattern));
  if (typeof s.format === 'string') parts.push(s.format);
  if (s.type === 'array' && s.items && typeof s.items === 'object') {
    const item = allowedOf(s.items as JsonSchema);
    if (item) parts.push(`each ${item}`);
  }
  return parts.join(', ');
}

/** A default as shown: an object's default is its fields' own, listed in their rows. */
const shownDefault = (field: JsonSchema) => (field.type === 'object' && field.properties ? "its fields' defaults" : json(field.default));

/** A field no value satisfies (`z.never()`: `layout` on a source type without layouts) is not listed. */
const forbidden = (field: JsonSchema) => Object.keys(field).length === 0 || field.not !== undefined;

/**
 * Rows for `s`'s properties under `prefix`, depth first; objects get a row of their own, then their
 * fields. Three or more sibling fields with one schema (the stages of `models`) are listed once, as
 * `<key>`, naming the keys.
 */
function rows(s: JsonSchema, prefix: string, required: boolean, out: Row[], skip: (path: string) => boolean = () => false): Row[] {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const requiredKeys = new Set((s.required ?? []) as string[]);
  const bySchema = new Map<string, string[]>();
  for (const [key, field] of Object.entries(properties)) bySchema.set(JSON.stringify(field), [...(bySchema.get(JSON.stringify(field)) ?? []), key]);
  const grouped = new Set<string>();
  for (const [key, field] of Object.entries(properties)) {
    const siblings = bySchema.get(JSON.stringify(field))!;
    if (grouped.has(key) || forbidden(field)) continue;
    const group = siblings.length >= 3 && field.type === 'object';
    if (group) for (const k of siblings) grouped.add(k);
    const name = group ? '<key>' : key;
    const path = prefix ? `${prefix}.${name}` : name;
    if (skip(path)) continue;
    const isRequired = required && requiredKeys.has(key) && field.default === undefined;
    const keys = group ? `\`<key>\`: ${siblings.map((k) => (requiredKeys.has(k) ? `${k} (required)` : k)).join(', ')}` : '';
    out.push({
      field: code(path),
      type: typeOf(field),
      default: field.default !== undefined ? shownDefault(field) : isRequired && !group ? '**required**' : '—',
      allowed: [keys, allowedOf(field)].filter(Boolean).join('; '),
    });
    if (field.type === 'object' && field.properties) rows(field, path, true, out);
    if (field.type === 'object' && field.additionalProperties && typeof field.additionalProperties === 'object') {
      rows(field.additionalProperties as JsonSchema, `${path}.<key>`, true, out);
    }
    if (field.type === 'array' && (field.items as JsonSchema | undefined)?.properties) rows(field.items as JsonSchema, `${path}[]`, true, out);
  }
  return out;
}

function table(rowList: Row[]): string {
  const lines = ['| field | type | default | allowed |', '|---|---|---|---|'];
  for (const r of rowList) lines.push(`| ${r.field} | ${r.type} | ${r.default} | ${r.allowed} |`);
  return lines.join('\n');
}

/** The source entries: fields shared by every `type` (same schema everywhere), then each type's own. */
function sourcesReference(variants: JsonSchema[]): string {
  const props = (v: JsonSchema) => (v.properties ?? {}) as Record<string, JsonSchema>;
  const typeName = (v: JsonSchema) => String(props(v).type?.const);
  const shared = Object.keys(props(variants[0]!)).filter(
    (key) => key !== 'type' && variants.every((v) => JSON.stringify(props(v)[key]) === JSON.stringify(props(variants[0]!)[key])),
  );
  const sharedSchema = { ...variants[0], properties: Object.fromEntries(shared.map((k) => [k, props(variants[0]!)[k]])) };
  const parts = ['Every source entry (`sources[]`) takes:', '', table(rows(sharedSchema, '', true, []))];
  for (const variant of variants) {
    const own = rows(variant, '', true, [], (path) => shared.some((k) => path === k || path.startsWith(`${k}.`)));
    parts.push('', `\`type: "${typeName(variant)}"\`:`, '', table(own));
  }
  return parts.join('\n');
}

export function configReferenceMarkdown(): string {
  const build = buildConfigJsonSchema();
  const sources = (build.properties as Record<string, JsonSchema>).sources!;
  const variants = ((sources.items as JsonSchema).oneOf ?? (sources.items as JsonSchema).anyOf) as JsonSchema[];
  return [
    '### Build config',
    '',
    table(rows(build, '', true, [], (path) => path === 'sources')),
    `| \`sources\` | array of source entries (below) | **required** | ${allowedOf(sources)} |`,
    '',
    '### Sources',
    '',
    sourcesReference(variants),
    '',
    '### Eval input (`npx mmif eval`, the `evaluateModel` workflow)',
    '',
    table(rows(evalConfigJsonSchema(), '', true, [])),
  ].join('\n');
}

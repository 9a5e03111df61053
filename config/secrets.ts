/**
 * Every secret the process holds comes from an environment variable (or a file one names: a Temporal
 * profile, worker/connectionFromEnv.ts); this module reads them and masks their values in any text
 * before it leaves the process (Temporal history, logs, stored records, reports). An endpoint or proxy that echoes the key in its error body ("Incorrect API key
 * provided: sk-...", or an `Authorization` header echoed base64-encoded) thereby never puts the key
 * anywhere. The variables below are always secret; those a config names (apiKeyEnv) become secret
 * when read through `readSecret` (or named by `markSecret`). docs/endpoints.md ("Keys") lists the
 * forms masked and how short values are treated.
 */
/**
 * The OTLP exporters' header variables (the OpenTelemetry exporter configuration spec,
 * https://opentelemetry.io/docs/specs/otel/protocol/exporter/): `key1=value1,key2=value2`, where a
 * hosted backend takes its API key. Each header's value is masked on its own, and its credential
 * after a scheme word (`Authorization=Bearer <token>`).
 */
const OTLP_HEADER_VARIABLES = ['', 'TRACES_', 'METRICS_', 'LOGS_'].map((signal) => `OTEL_EXPORTER_OTLP_${signal}HEADERS`);

/**
 * Besides the OTLP headers: the OpenAI and AWS credentials, and Temporal's as its environment
 * configuration reads them (https://docs.temporal.io/develop/environment-configuration): the API key,
 * a client key given inline, and the codec server's Authorization header.
 */
const ALWAYS_SECRET = [
  'OPENAI_API_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_CODEC_AUTH',
  ...OTLP_HEADER_VARIABLES,
];

/** Values this long or longer are masked wherever they appear; shorter ones where they stand as a word of their own. */
const ANYWHERE_LENGTH = 8;

/** Base64 fragments shorter than this would match unrelated base64 text: only whole encodings are masked then. */
const MIN_FRAGMENT = 8;

/** A %-escaped byte or a JSON escape: what may stand right before or after a value in echoed text. */
const ESCAPE = '%[0-9A-Fa-f]{2}|\\\\[nrt]';

/**
 * Variables secret by their prefix: Temporal's environment configuration sends each
 * TEMPORAL_GRPC_META_<NAME> as gRPC metadata (an `authorization` header, typically).
 */
const SECRET_PREFIXES = ['TEMPORAL_GRPC_META_'];

const secretNames = new Set(ALWAYS_SECRET);

/** Secret values that come from no variable (a Temporal profile's), by the label they are masked with. */
const secretValues = new Map<string, string>();

/** The value of a secret variable, remembered as secret so `maskSecrets` hides it from then on. */
export function readSecret(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  markSecret(name);
  return env[name] || undefined;
}

/** Names a variable as secret without reading it (a client masks what a config's endpoints name). */
export function markSecret(name: string): void {
  secretNames.add(name);
}

/** Names a value as secret that no variable holds (read from a file a variable names), masked as `[secret <label>]`. */
export function markSecretValue(label: string, value: string | undefined): void {
  if (value) secretValues.set(label, value);
}

/** `text` with every secret value, in every form it may be echoed in, replaced by `[secret NAME]`. */
export function maskSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let masked = text;
  const prefixed = Object.keys(env).filter((name) => SECRET_PREFIXES.some((prefix) => name.startsWith(prefix)));
  for (const name of new Set([...secretNames, ...prefixed])) {
    const value = env[name];
    if (!value) continue;
    for (const secret of OTLP_HEADER_VARIABLES.includes(name) ? headerSecrets(value) : [value]) masked = maskValue(masked, secret, `[secret ${name}]`);
  }
  for (const [label, value] of secretValues) masked = maskValue(masked, value, `[secret ${label}]`);
  return masked;
}

/**
 * The secrets of an OTLP header list: the list whole, and each header value (as written and
 * percent-decoded, as the exporter sends it) and a value's credential after its scheme word, of
 * ANYWHERE_LENGTH or more: a key is long, and a short value (`x-dataset=mmif`) is no key whose every
 * mention as a word should be masked.
 */
function headerSecrets(list: string): string[] {
  const secrets = [list];
  for (const header of list.split(',')) {
    if (!header.includes('=')) continue;
    const value = header.slice(header.indexOf('=') + 1).trim();
    const decoded = safeDecode(value);
    secrets.push(value, decoded, ...(/^\S+\s+(\S+)$/.exec(decoded)?.slice(1) ?? []));
  }
  // Longest first, so a whole value is masked before a part of it could be.
  return [...new Set(secrets)].filter((secret) => secret.length >= ANYWHERE_LENGTH).sort((a, b) => b.length - a.length);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const patternsOf = new Map<string, Array<{ form: string; pattern: RegExp }>>();

/** `text` with `value`, in every form it may be echoed in (echoedForms), replaced by `label`. */
export function maskValue(text: string, value: string, label: string): string {
  let patterns = patternsOf.get(value);
  if (!patterns) patternsOf.set(value, (patterns = compile(value)));
  let masked = text;
  // A plain search first: most forms are absent, and it is many times faster than the pattern.
  for (const { form, pattern } of patterns) if (masked.includes(form)) masked = masked.replace(pattern, label);
  return masked;
}

/** Longest forms first: a base64 encoding is masked whole before a fragment of it could be. */
function compile(value: string): Array<{ form: string; pattern: RegExp }> {
  const forms = [...echoedForms(value)].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
  return forms.map((form) => {
    const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // A short value masks only where it stands alone: "x" in "index" is no secret. A %-escape or a
    // JSON escape beside it ("Bearer%20key", "\nkey") ends a word too.
    return { form, pattern: new RegExp(form.length >= ANYWHERE_LENGTH ? escaped : `(?<=^|[^A-Za-z0-9_-]|${ESCAPE})${escaped}(?=$|[^A-Za-z0-9_-]|${ESCAPE})`, 'g') };
  });
}

/**
 * The forms a value is echoed in: as is, URL-encoded, JSON-escaped, and base64 (standard and URL
 * alphabets) of the value, of `Bearer <value>`, of `user:<value>` and `<value>:` (HTTP Basic), and
 * of any text holding the value at any offset: the characters of its base64 that depend on the value
 * alone, for each of the three alignments (when long enough to mean nothing else).
 */
function echoedForms(value: string): Set<string> {
  const forms = new Set<string>([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)]);
  const addBase64 = (bytes: Buffer) => {
    const standard = bytes.toString('base64');
    forms.add(standard);
    forms.add(standard.replace(/=+$/, ''));
    forms.add(bytes.toString('base64url'));
  };
  const bytes = Buffer.from(value, 'utf8');
  for (const whole of [bytes, Buffer.from(`Bearer ${value}`), Buffer.from(`${value}:`), Buffer.from(`:${value}`)]) addBase64(whole);
  for (const offset of [0, 1, 2]) {
    const aligned = Buffer.concat([Buffer.alloc(offset), bytes]);
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * aligned.length) / 6);
    if (end - first < MIN_FRAGMENT) continue;
    forms.add(aligned.toString('base64').slice(first, end));
    forms.add(aligned.toString('base64url').slice(first, end));
  }
  return forms;
}

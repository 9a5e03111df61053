/**
 * Every secret the process holds comes from an environment variable; this module reads them and
 * masks their values in any text before it leaves the process (Temporal history, logs, stored
 * records). An endpoint or proxy that echoes the key in its error body ("Incorrect API key
 * provided: sk-...") thereby never puts the key anywhere. The variables below are always secret;
 * those a config names (apiKeyEnv) become secret when read through `readSecret`.
 */
const ALWAYS_SECRET = ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'TEMPORAL_API_KEY'];

/** Shorter values (e.g. "x", "not-needed") are no secret and would mask ordinary words. */
const MIN_SECRET_LENGTH = 8;

const secretNames = new Set(ALWAYS_SECRET);

/** The value of a secret variable, remembered as secret so `maskSecrets` hides it from then on. */
export function readSecret(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  secretNames.add(name);
  return env[name] || undefined;
}

/** `text` with every secret value replaced by `[secret NAME]`. */
export function maskSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  let masked = text;
  for (const name of secretNames) {
    const value = env[name];
    if (value && value.length >= MIN_SECRET_LENGTH && masked.includes(value)) masked = masked.split(value).join(`[secret ${name}]`);
  }
  return masked;
}

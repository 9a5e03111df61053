/**
 * Reading a build config file in the CLI. Relative paths in it (`output`, `cacheUri`, each source's
 * `uri` and `richness.scores`) are resolved once, here, against the config file's folder, so the
 * build records them absolute: the CLI, the worker and a later `resume` then agree on where the data
 * is, whatever folder each process runs in. `s3://` URIs are left as they are.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseBuildConfig, type BuildConfig } from '../config/buildConfig.js';
import { ConfigError } from '../config/configError.js';
import { buildIdLengthProblem } from '../config/buildIds.js';
import { CliError, EXIT } from './exitCodes.js';

const isLocalRelative = (uri: unknown): uri is string => typeof uri === 'string' && uri !== '' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri) && !path.isAbsolute(uri);

/** `json` with its relative local paths resolved against `folder` (the document as written otherwise). */
function withAbsolutePaths(json: unknown, folder: string): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  const config = { ...(json as Record<string, unknown>) };
  const resolve = (uri: unknown) => (isLocalRelative(uri) ? path.resolve(folder, uri) : uri);
  for (const key of ['output', 'cacheUri']) if (key in config) config[key] = resolve(config[key]);
  if (Array.isArray(config.sources)) {
    config.sources = config.sources.map((source: unknown) => {
      if (source === null || typeof source !== 'object') return source;
      const copy = { ...(source as Record<string, unknown>) };
      if ('uri' in copy) copy.uri = resolve(copy.uri);
      const richness = copy.richness as Record<string, unknown> | undefined;
      if (richness && typeof richness === 'object' && 'scores' in richness) copy.richness = { ...richness, scores: resolve(richness.scores) };
      return copy;
    });
  }
  return config;
}

/** The config file parsed, its paths absolute; a file that cannot be read or parsed exits 2 naming it. */
export async function readConfig(file: string): Promise<BuildConfig> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new CliError(`cannot read build config ${file}: ${(err as Error).message}`, EXIT.usage);
  }
  let config: BuildConfig;
  try {
    config = parseBuildConfig(withAbsolutePaths(json, path.dirname(path.resolve(file))));
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`${file}: ${err.message}`, EXIT.usage);
    throw err;
  }
  const tooLong = buildIdLengthProblem(config.buildId);
  if (tooLong) throw new CliError(`${file}: invalid build config: ${tooLong}`, EXIT.usage);
  return config;
}

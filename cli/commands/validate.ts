/**
 * `mmif validate`: checks a build config without starting anything (fields, fingerprint against an
 * existing build, source layouts, output write probe), one line per problem.
 */
import type { BuildConfig } from '../../config/buildConfig.js';
import { parseFlags } from '../../config/commandFlags.js';
import { openSources } from '../../sources/source.js';
import { buildProblems } from '../../pipeline/planning/buildChecks.js';
import { extractEverySource } from '../../sources/sourceArchives.js';
import { readConfig } from '../configFile.js';
import { CliError, EXIT, exitCodesLine } from '../exitCodes.js';

export const VALIDATE_USAGE = `usage: mmif validate --config FILE
  Check a build config without starting anything: the config itself (every bad field named), the
  config against an existing build of the same buildId (its fingerprint), each source's layout
  under its uri (its first records read), and that the output can be written (a probe object
  written and deleted, as a build's pre-flight does; nothing is left): one line per problem, and
  each readable source's layout and mapping as its reader chose them. Runs here, with this
  machine's view of the paths and credentials; \`mmif build\` runs the same checks on a worker.
  ${exitCodesLine({ ok: 'all is well', usage: 'a bad flag, or problems (one line each)' })}`;

export async function validateCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { config: { type: 'string' } } });
  if (!values.config) throw new CliError(VALIDATE_USAGE, EXIT.usage);
  const config = await readConfig(values.config);
  const result = await validation(config, values.config);
  for (const line of result.lines) console.log(line);
  for (const problem of result.problems) console.error(problem);
  return result.problems.length > 0 ? EXIT.usage : EXIT.ok;
}

/**
 * `validate`'s verdict on a parsed config, as it prints it: one line per problem (each starting
 * with `file: `), the ok line when there is none, and the layout of each source that reads. `mmif init` prints the same for the
 * config it wrote.
 */
export async function validation(config: BuildConfig, file: string): Promise<{ problems: string[]; lines: string[] }> {
  // Extracted first, once: the checks and the layouts read the members, and a reader's view keeps the
  // extractions it saw first. Then both at once: neither extracts.
  const unwritable = await extractEverySource(config.sources, config.s3);
  const [problems, readable] = await Promise.all([buildProblems(config, unwritable), readableLayouts(config)]);
  if (problems.length > 0) return { problems: problems.map((problem) => `${file}: ${problem}`), lines: readable };
  const sources = config.sources.map((s) => `${s.type} ${s.uri}`).join(', ');
  return { problems, lines: [`${file}: ok (build ${config.buildId}: ${sources} -> ${config.output})`, ...readable] };
}

/**
 * The layout each source's reader chose under its root and how it maps the records
 * (SourceReader.describe), one line per source that reads; one that does not is among the problems.
 */
async function readableLayouts(config: Pick<BuildConfig, 'sources' | 's3'>): Promise<string[]> {
  const readers = openSources(config.sources, config.s3);
  const lines = await Promise.all(
    readers.map(async (reader, i) => {
      const described = await reader.describe().catch(() => undefined);
      return described === undefined ? [] : [`  sources[${i}] (${config.sources[i]!.type} ${config.sources[i]!.uri}): ${described}`];
    }),
  );
  return lines.flat();
}

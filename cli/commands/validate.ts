import type { BuildConfig } from '../../config/buildConfig.js';
import { parseFlags } from '../../config/commandFlags.js';
import { openSources } from '../../sources/source.js';
import { buildProblems } from '../../pipeline/planning/buildChecks.js';
import { readConfig } from '../configFile.js';
import { CliError, EXIT } from '../exitCodes.js';

export const VALIDATE_USAGE = `usage: mmif validate --config FILE
  Check a build config without starting anything: the config itself (every bad field named), the
  config against an existing build of the same buildId (its fingerprint), each source's layout
  under its uri (its first records read), and that the output can be written (a probe object
  written and deleted, as a build's pre-flight does; nothing is left). Exit 0 when all is well, 2
  with one line per problem; when all is well, each source's layout and mapping as its reader chose
  them. Runs here, with this machine's view of the paths and credentials;
  \`mmif build\` runs the same checks on a worker.`;

export async function validateCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({ args, options: { config: { type: 'string' } } });
  if (!values.config) throw new CliError(VALIDATE_USAGE, EXIT.usage);
  const config = await readConfig(values.config);
  const problems = await buildProblems(config);
  for (const problem of problems) console.error(`${values.config}: ${problem}`);
  if (problems.length > 0) return EXIT.usage;
  const sources = config.sources.map((s) => `${s.type} ${s.uri}`).join(', ');
  console.log(`${values.config}: ok (build ${config.buildId}: ${sources} -> ${config.output})`);
  for (const line of await sourceLayoutLines(config)) console.log(line);
  return EXIT.ok;
}

/**
 * One line per source: the layout its reader chose under its root and how it maps the records
 * (SourceReader.describe), or why the root cannot be read from here. What `validate` and `init` print.
 */
export async function sourceLayoutLines(config: Pick<BuildConfig, 'sources' | 's3'>): Promise<string[]> {
  const readers = openSources(config.sources, config.s3);
  return Promise.all(
    readers.map(async (reader, i) => {
      const what = `  sources[${i}] (${config.sources[i]!.type} ${config.sources[i]!.uri})`;
      try {
        return `${what}: ${await reader.describe()}`;
      } catch (err) {
        return `${what}: not readable here: ${(err as Error).message}`;
      }
    }),
  );
}

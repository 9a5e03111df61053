import { parseFlags } from '../../config/commandFlags.js';
import { buildProblems } from '../../pipeline/planning/buildChecks.js';
import { readConfig } from '../configFile.js';
import { CliError, EXIT } from '../exitCodes.js';

export const VALIDATE_USAGE = `usage: mmif validate --config FILE
  Check a build config without starting anything: the config itself (every bad field named), the
  config against an existing build of the same buildId (its fingerprint), each source's layout
  under its uri (its first records read), and that the output can be written (a probe object
  written and deleted, as a build's pre-flight does; nothing is left). Exit 0 when all is well, 2
  with one line per problem. Runs here, with this machine's view of the paths and credentials;
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
  return EXIT.ok;
}

/**
 * `mmif init`: writes a starter build config from flags or by asking on a terminal, so a first build
 * needs no hand-written JSON.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { parseFlags } from '../../config/commandFlags.js';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { readConfig } from '../configFile.js';
import { validation } from './validate.js';
import { buildIdLengthProblem } from '../../config/buildIds.js';
import { counted, mmifCommand } from '../wording.js';
import { SOURCE_TYPES } from '../../sources/registry.js';
import { CliError, EXIT } from '../exitCodes.js';
import { SCHEMA_FILE } from '../writeConfigReference.js';

export const INIT_USAGE = `usage: mmif init [--source TYPE=URI ...] [--build-id ID] [--output DIR] [--model M] [--samples N] [--out FILE] [--force]
  Write a starter build config (default build.json), from the flags or, without --source on a
  terminal, by asking. TYPE is one of ${SOURCE_TYPES.join(', ')}; URI the dataset's root as released
  (a local folder or s3://bucket/prefix). The file names the JSON Schema in "$schema", so editors
  complete its fields; examples/ holds fuller configs to copy.
  --source   a source, TYPE=URI; repeat it for a mix (the samples are shared evenly: set weight or quota after)
  --build-id the build's name (default my-build)
  --output   where datasets go (default out, next to the config file)
  --model    the model of every model role (default gpt-4o; set models.<role> after for others)
  --samples  maxSamples (default 1000)
  --out      the file to write (default build.json), its folder made when missing; --force overwrites it`;

interface Answers {
  buildId: string;
  output: string;
  model: string;
  samples: number;
  sources: Array<{ type: string; uri: string }>;
}

export async function initCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      source: { type: 'string', multiple: true },
      'build-id': { type: 'string' },
      output: { type: 'string' },
      model: { type: 'string' },
      samples: { type: 'string' },
      out: { type: 'string', default: 'build.json' },
      force: { type: 'boolean' },
    },
  });
  const file = path.resolve(values.out!);
  if (existsSync(file) && !values.force) throw new CliError(`${values.out} exists: pass --force to overwrite it, or --out another file`, EXIT.usage);
  const flags = {
    buildId: values['build-id'] ?? 'my-build',
    output: values.output ?? 'out',
    model: values.model ?? 'gpt-4o',
    samples: values.samples ?? '1000',
  };
  let answers: Answers;
  if (values.source?.length) answers = { ...flags, samples: count(flags.samples), sources: values.source.map(sourceFlag) };
  else if (process.stdin.isTTY) answers = await ask(flags);
  else throw new CliError(`give at least one --source TYPE=URI (or run it on a terminal to be asked)\n${INIT_USAGE}`, EXIT.usage);

  const config = starterConfig(answers, path.relative(path.dirname(file), SCHEMA_FILE));
  parseBuildConfig(config); // a ConfigError exits 2 with its message, as every input error does (cli/mmif.ts)
  const tooLong = buildIdLengthProblem(answers.buildId);
  if (tooLong) throw new CliError(tooLong, EXIT.usage);
  // `--out configs/new/build.json` names where the config goes: its folder is made, as an editor's "save as" would not refuse it.
  const created = existsSync(path.dirname(file)) ? '' : ` (made its folder ${path.relative(process.cwd(), path.dirname(file)) || '.'})`;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
  console.log(`wrote ${values.out}${created}`);
  // What `mmif validate` says of the file as written (relative uris read from its folder); a source
  // not in place yet is a problem to fix, not a reason to withhold the file.
  const written = await readConfig(file);
  const { problems, lines } = await validation(written, values.out!);
  if (problems.length === 0) {
    for (const line of lines) console.log(line);
    console.log(`next: \`${mmifCommand(`build --config ${values.out} --local`)}\``);
    return EXIT.ok;
  }
  for (const line of lines) console.log(line);
  console.log(`validate found ${counted(problems.length, 'problem')}:`);
  for (const problem of problems) console.log(`  ${problem}`);
  console.log(
    `next: fix ${problems.length === 1 ? 'it' : 'them'} (the config or the data), then \`${mmifCommand(`validate --config ${values.out}`)}\` and \`${mmifCommand(`build --config ${values.out} --local`)}\``,
  );
  return EXIT.ok;
}

export function starterConfig(answers: Answers, schemaPath: string): BuildConfigInput & { $schema: string } {
  return {
    $schema: schemaPath.split(path.sep).join('/'),
    buildId: answers.buildId,
    output: answers.output,
    sources: answers.sources.map((s) => ({ type: s.type, uri: s.uri })) as BuildConfigInput['sources'],
    maxSamples: answers.samples,
    models: { default: { model: answers.model } },
  };
}

function sourceFlag(flag: string): { type: string; uri: string } {
  const at = flag.indexOf('=');
  if (at <= 0 || at === flag.length - 1) throw new CliError(`--source takes TYPE=URI (e.g. chartqa=/data/ChartQA), got '${flag}'`, EXIT.usage);
  return { type: flag.slice(0, at).toLowerCase(), uri: flag.slice(at + 1) };
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--samples must be a positive integer, got '${value}'`, EXIT.usage);
  return n;
}

/** The same answers, asked one by one; an empty answer takes the default shown. */
export async function ask(
  defaults: { buildId: string; output: string; model: string; samples: string },
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Promise<Answers> {
  const rl = createInterface({ input, output });
  try {
    const question = async (text: string, fallback?: string) => (await rl.question(fallback ? `${text} [${fallback}]: ` : `${text}: `)).trim() || fallback || '';
    const sources: Answers['sources'] = [];
    do {
      let type = (await question(`source type (${SOURCE_TYPES.join(', ')})`)).toLowerCase();
      while (!(SOURCE_TYPES as readonly string[]).includes(type)) {
        output.write(`${type ? `'${type}' is not a source type` : 'a source type is needed'}: one of ${SOURCE_TYPES.join(', ')}\n`);
        type = (await question('source type')).toLowerCase();
      }
      const uri = await question(`  where its release is (a folder or s3://bucket/prefix)`);
      sources.push({ type, uri });
    } while ((await question('another source? (y/n)', 'n')).toLowerCase().startsWith('y'));
    return {
      buildId: await question('build id', defaults.buildId),
      output: await question('output folder (or s3://...)', defaults.output),
      model: await question('model', defaults.model),
      samples: count(await question('samples', defaults.samples)),
      sources,
    };
  } finally {
    rl.close();
  }
}

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { mapLimit } from '../../domain/mapLimit.js';
import { MAX_CHAT_INSTRUCTIONS } from '../../domain/multiturn/chatPlan.js';
import type { EndpointConfig } from '../../config/buildConfig.js';
import { clientFor, resolveEndpoint } from '../../llm/endpoint.js';
import { SIMULATOR_FINGERPRINT } from '../../llm/modelCaller.js';
import type { MmifevalLine } from '../../output/mmifeval.js';
import { evalMarkdown, scoreSingleTurn, type EvalReport } from '../../output/evalReport.js';
import { trainingPromptText } from '../../prompts/trainingPrompt.js';
import { CliError, EXIT } from '../exitCodes.js';

export const EVAL_USAGE = `usage: mmif eval --data DIR --model M [--samples N] [--base-url URL] [--api-key-env VAR]
                 [--prompt inline|numbered] [--concurrency C] [--out DIR]
  Runs an OpenAI-compatible endpoint on the held-out split that \`mmif export --format mmifeval\`
  wrote (DIR is the local dataset root: DIR/MM-IFEval/mmif_holdout.jsonl, images at DIR/<image>),
  N responses per sample (default 1), and scores them with the builds' rule verifiers:
  constraint-level and instruction-level accuracy, per category and per constraint type.
  Judge-scored constraints are counted, not scored. Prompts use MM-IFEval's inline form by default.
  Writes <out>/<model>.json, .md and .responses.jsonl (default out: DIR/MM-IFEval/eval) and prints the Markdown.
  Multi-turn (seed 002): --chats FILE (JSON lines {id, image, questions: [...]}, images under DIR)
  [--seed S] [--max-instructions 6] [--append-instructions] plans seeded global instructions per
  chat, samples N responses per turn and reports PIF per turn (95% intervals), corpus PIF and
  PIF-N-K for K = 1..N to <out>/<model>.multiturn[.appended].{json,md,turns.jsonl}.
  Answers from the mmif simulator are marked SIMULATED. Runs in this process, not on Temporal.`;

const MIME: Record<string, string> = { '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png', '.webp': 'image/webp' };

export async function evalCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      model: { type: 'string' },
      samples: { type: 'string', default: '1' },
      'base-url': { type: 'string' },
      'api-key-env': { type: 'string', default: 'OPENAI_API_KEY' },
      prompt: { type: 'string', default: 'inline' },
      concurrency: { type: 'string', default: '4' },
      out: { type: 'string' },
      chats: { type: 'string' },
      seed: { type: 'string', default: '0' },
      'max-instructions': { type: 'string', default: '6' },
      'append-instructions': { type: 'boolean', default: false },
    },
  });
  if (!values.data || !values.model) throw new CliError(EVAL_USAGE, EXIT.usage);
  const samples = Number(values.samples);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(samples) || samples < 1) throw new CliError(`--samples must be a positive integer, got '${values.samples}'`, EXIT.usage);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new CliError(`--concurrency must be a positive integer, got '${values.concurrency}'`, EXIT.usage);
  if (values.prompt !== 'inline' && values.prompt !== 'numbered') throw new CliError(`--prompt must be inline or numbered, got '${values.prompt}'`, EXIT.usage);
  // resolveEndpoint reads only model, baseUrl and apiKeyEnv; eval paces itself with --concurrency.
  const endpoint = resolveEndpoint({ model: values.model, baseUrl: values['base-url'], apiKeyEnv: values['api-key-env'] } as EndpointConfig);
  const client = clientFor(endpoint, 120_000);
  const out = values.out ?? join(values.data, 'MM-IFEval', 'eval');
  if (values.chats) {
    const seed = Number(values.seed);
    const maxInstructions = Number(values['max-instructions']);
    if (!Number.isInteger(maxInstructions) || maxInstructions < 1 || maxInstructions > MAX_CHAT_INSTRUCTIONS) throw new CliError(`--max-instructions must be an integer in 1..${MAX_CHAT_INSTRUCTIONS} (seed 002), got '${values['max-instructions']}'`, EXIT.usage);
    if (!Number.isInteger(seed)) throw new CliError(`--seed must be an integer, got '${values.seed}'`, EXIT.usage);
    const { runChatEval } = await import('./evalChats.js');
    return runChatEval({ client, model: endpoint.model, data: values.data, chatsFile: values.chats, samples, seed, maxInstructions, appendInstructions: values['append-instructions'], concurrency, out });
  }
  const lines = await readHeldOut(values.data);
  const template = values.prompt;
  let simulated = false;
  const main = lines.filter((l) => l.infer_type === 'main');
  const answered = await mapLimit(main, concurrency, async (line) => {
    const image = await imageDataUrl(values.data!, line);
    const text = trainingPromptText(template, line.instruction, line.constraints.map((c) => ({ type: c.key, value: c.value })));
    const responses: string[] = [];
    for (let i = 0; i < samples; i++) {
      // `seed` per sample: N draws of the same prompt, reproducible where the endpoint honours it.
      const completion = await client.chat.completions.create({
        model: endpoint.model,
        seed: i,
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }, { type: 'text', text }] }],
      });
      if (completion.system_fingerprint === SIMULATOR_FINGERPRINT) simulated = true;
      const content = completion.choices[0]?.message.content;
      if (typeof content !== 'string') throw new Error(`sample ${line.id}: the endpoint returned no text (finish reason ${completion.choices[0]?.finish_reason ?? 'none'})`);
      responses.push(content);
    }
    return [line.id, responses] as const;
  });
  const report = scoreSingleTurn(lines, new Map(answered), endpoint.model, simulated);
  await writeReport(out, report, answered);
  return EXIT.ok;
}

async function readHeldOut(root: string): Promise<MmifevalLine[]> {
  const path = join(root, 'MM-IFEval', 'mmif_holdout.jsonl');
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`${path}: ${err.code === 'ENOENT' ? 'not found (write it with mmif export --format mmifeval)' : err.message}`, EXIT.notFound);
  });
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as MmifevalLine;
      } catch (err) {
        throw new CliError(`${path} line ${i + 1}: not JSON (${(err as Error).message})`, EXIT.usage);
      }
    });
}

export async function imageDataUrl(root: string, line: { id: string; image: string }): Promise<string> {
  const mime = MIME[extname(line.image).toLowerCase()];
  if (!mime) throw new CliError(`sample ${line.id}: image ${line.image} has an unsupported extension`, EXIT.usage);
  const bytes = await readFile(join(root, line.image)).catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`sample ${line.id}: image ${join(root, line.image)}: ${err.code ?? err.message}`, EXIT.notFound);
  });
  return `data:${mime};base64,${bytes.toString('base64')}`;
}

/** The report (JSON, Markdown) and every response scored, one JSON line per sample, for audit. */
export async function writeReport(dir: string, report: EvalReport, answered: ReadonlyArray<readonly [string, string[]]>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const name = report.model.replace(/[^A-Za-z0-9._-]+/g, '_');
  const markdown = evalMarkdown(report);
  await writeFile(join(dir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(dir, `${name}.md`), markdown);
  await writeFile(join(dir, `${name}.responses.jsonl`), answered.map(([id, responses]) => `${JSON.stringify({ id, responses })}\n`).join(''));
  console.log(markdown);
  console.log(`wrote ${join(dir, `${name}.json`)}, ${name}.md and ${name}.responses.jsonl`);
}

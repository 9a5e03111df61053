/**
 * `mmif eval`: evaluates a model endpoint on a dataset the engine wrote (or on chats), as a
 * resumable Temporal workflow like a build, and prints its scores.
 */
import { resolve } from 'node:path';
import { parseFlags } from '../../config/commandFlags.js';
import { WorkflowFailedError } from '@temporalio/client';
import type { BuildConfig } from '../../config/buildConfig.js';
import type { EndpointConfig } from '../../config/modelsConfig.js';
import { ConfigError } from '../../config/configError.js';
import { evalFingerprintMaterial, evalOutput, evalWorkflowId, parseEvalConfig, type EvalConfig, type EvalConfigInput } from '../../config/evalConfig.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { EvalSummary } from '../../output/reports/evalOutputs.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { evalIdPrefix, evalReportName } from '../../storage/evalLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import { exitCodeFor, rootFailure } from '../failures.js';
import { CliError, EXIT } from '../exitCodes.js';
import { withLocalTemporal } from '../localTemporal.js';
import { s3FromEnv } from '../s3FromEnv.js';
import { connectTemporal, type Temporal } from '../temporalClient.js';

export const EVAL_USAGE = `usage: mmif eval --data DIR --model M [--samples N] [--base-url URL] [--api-key-env VAR]
                 [--prompt inline|numbered] [--vacuous pass|fail] [--judge-model J [--judge-base-url URL] [--judge-api-key-env VAR] | --no-judge]
                 [--concurrency C] [--out DIR] [--cache DIR] [--eval-id ID] [--local]
  Evaluates an OpenAI-compatible endpoint on Temporal, like a build (workflow eval-<ID> on
  MMIF_TASK_QUEUE): resumable (a killed worker or a re-run with the same ID continues), every call
  through the builds' model-call cache (a re-run pays nothing) and endpoint limiter.
  Single-turn: the held-out split DIR/MM-IFEval/mmif_holdout.jsonl (written by a build with config
  holdout, or by mmif export --format mmifeval), N responses per sample (default 1), scored with the
  builds' rule verifiers and judges: constraint-level and instruction-level accuracy, per judge method,
  category and constraint type. The judge is --judge-model, else the build's own judge (models.judge or
  models.default of DIR/_work/config.json); --no-judge leaves judged constraints unscored.
  Multi-turn (seed 002): --multiturn (the held-out chats of a multiturn build with config holdout,
  DIR/MM-IFEval/mmif_holdout_chats.jsonl) or --chats FILE (JSON lines {id, image, questions: [...]},
  images under DIR), [--seed S] [--max-instructions 6] [--append-instructions]: each chat's questions
  get seeded rule-checked global instructions; PIF per turn (95% intervals), corpus PIF, PIF-N-K for K = 1..N.
  Writes <out>/<model>[.multiturn[.appended]].{json,md,responses.jsonl|turns.jsonl} (default out:
  DIR/MM-IFEval/eval) and prints the Markdown. DIR, --out and --chats may be s3:// URIs (MMIF_S3_ENDPOINT, AWS_*).
  Answers from the mmif simulator are marked SIMULATED.
  --vacuous     pass (default): a rule check the response never exercised (no number for a precision
                check, an empty response) passes, as MM-IFEval scores; fail: it counts as not followed
  --cache DIR   where the model-call cache lives (DIR/_cache/llm); default: the out directory
  --eval-id ID  default: the model and a hash of the settings, so the same command continues the same run
  --local       a Temporal dev server, a worker and (without OPENAI_BASE_URL) the simulator in this process`;

export async function evalCommand(args: string[]): Promise<number> {
  const { values } = parseFlags({
    args,
    options: {
      data: { type: 'string' },
      model: { type: 'string' },
      samples: { type: 'string', default: '1' },
      'base-url': { type: 'string' },
      'api-key-env': { type: 'string', default: 'OPENAI_API_KEY' },
      prompt: { type: 'string', default: 'inline' },
      vacuous: { type: 'string', default: 'pass' },
      'judge-model': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      'no-judge': { type: 'boolean', default: false },
      concurrency: { type: 'string' },
      out: { type: 'string' },
      cache: { type: 'string' },
      chats: { type: 'string' },
      multiturn: { type: 'boolean', default: false },
      seed: { type: 'string', default: '0' },
      'max-instructions': { type: 'string', default: '6' },
      'append-instructions': { type: 'boolean', default: false },
      'eval-id': { type: 'string' },
      local: { type: 'boolean', default: false },
    },
  });
  if (!values.data || !values.model) throw new CliError(EVAL_USAGE, EXIT.usage);
  const uri = (u: string) => (u.startsWith('s3://') ? u : resolve(u));
  const int = (flag: string, value: string | undefined) => {
    const n = Number(value);
    if (value !== undefined && !Number.isInteger(n)) throw new CliError(`--${flag} must be an integer, got '${value}'`, EXIT.usage);
    return value === undefined ? undefined : n;
  };
  const s3 = s3FromEnv();
  const data = uri(values.data);
  if (values.multiturn && values.chats) throw new CliError("--multiturn reads the build's held-out chats; --chats FILE names others: give one of them", EXIT.usage);
  const chats = values.multiturn ? `${data.replace(/\/+$/, '')}/${DATASET.inDataset(DATASET.mmifevalHoldoutChats)}` : values.chats && uri(values.chats);
  const model: Record<string, unknown> = { model: values.model, apiKeyEnv: values['api-key-env'] };
  if (values['base-url']) model.baseUrl = values['base-url'];
  if (values.concurrency) model.concurrency = int('concurrency', values.concurrency);
  const input: Omit<EvalConfigInput, 'evalId'> = {
    data,
    ...(values.out ? { out: uri(values.out) } : {}),
    ...(values.cache ? { cacheUri: uri(values.cache) } : {}),
    s3,
    model: model as EvalConfigInput['model'],
    responses: int('samples', values.samples),
    prompt: values.prompt as 'inline',
    vacuous: values.vacuous as 'pass',
    ...(chats
      ? {
          chats: {
            uri: chats,
            seed: int('seed', values.seed),
            maxInstructions: int('max-instructions', values['max-instructions']),
            appendInstructions: values['append-instructions'],
          },
        }
      : {}),
  };
  if (!chats && !values['no-judge']) {
    const judge = values['judge-model'] ? judgeFromFlags(values) : await buildJudge(data, s3);
    if (judge) input.judge = judge;
    else console.log(`no judge endpoint (no --judge-model, and ${data} holds no build config): judged constraints will be counted, not scored`);
  }
  const config = withEvalId(input, values['eval-id']);
  if (values.local) return withLocalTemporal((temporal) => runEval(temporal, config));
  const temporal = await connectTemporal();
  try {
    return await runEval(temporal, config);
  } finally {
    await temporal.close();
  }
}

function judgeFromFlags(values: { 'judge-model'?: string; 'judge-base-url'?: string; 'judge-api-key-env'?: string }): EvalConfigInput['judge'] {
  return {
    model: values['judge-model']!,
    ...(values['judge-base-url'] ? { baseUrl: values['judge-base-url'] } : {}),
    ...(values['judge-api-key-env'] ? { apiKeyEnv: values['judge-api-key-env'] } : {}),
  };
}

/** A build's layout without its build id: `--data` names the dataset root itself. */
const DATASET = buildLayout('');

/** The judge the build that wrote the dataset used (models.judge, else models.default). */
async function buildJudge(data: string, s3: EvalConfigInput['s3']): Promise<EndpointConfig | undefined> {
  const stored = await getJson<{ config: BuildConfig }>(openStore(data, s3), DATASET.inDataset(DATASET.config));
  const models = stored?.config.models;
  return models && (models.judge ?? models.default);
}

/** Validates the settings and names the run: the given id, or the model and a hash of every setting. */
function withEvalId(input: Omit<EvalConfigInput, 'evalId'>, evalId: string | undefined): EvalConfig {
  try {
    const probe = parseEvalConfig({ ...input, evalId: 'x' });
    const id = evalId ?? `${evalIdPrefix(probe.model.model, probe).slice(0, 60)}-${sha256Hex(evalFingerprintMaterial(probe)).slice(0, 10)}`;
    return parseEvalConfig({ ...input, evalId: id });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message.replace('invalid eval config', 'invalid mmif eval settings'), EXIT.usage);
    throw err;
  }
}

async function runEval(temporal: Temporal, config: EvalConfig): Promise<number> {
  const workflowId = evalWorkflowId(config.evalId);
  // A run already under way (or finished) with this id is joined, not started again: its result is the same.
  const handle = await temporal.client.workflow
    .start('evaluateModel', { taskQueue: temporal.settings.taskQueue, workflowId, args: [config], workflowIdConflictPolicy: 'USE_EXISTING' })
    .catch(async (err: unknown) => {
      if ((err as Error).name === 'WorkflowExecutionAlreadyStartedError') return temporal.client.workflow.getHandle(workflowId);
      throw err;
    });
  console.log(`eval ${config.evalId}: workflow ${workflowId} on task queue ${temporal.settings.taskQueue}`);
  let summary: EvalSummary;
  try {
    summary = (await handle.result()) as EvalSummary;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const failure = rootFailure(err);
    throw new CliError(`eval ${config.evalId} failed: ${failure.message}`, exitCodeFor(failure));
  }
  const out = openStore(evalOutput(config), config.s3);
  const markdown = await out.get(`${evalReportName(config.evalId)}.md`);
  console.log(markdown?.toString('utf8') ?? '');
  console.log(`wrote ${summary.files.join(', ')}`);
  console.log(`model calls of eval ${config.evalId} (every run of it): ${summary.requests.paid} paid, ${summary.requests.cached} answered from the cache`);
  return EXIT.ok;
}

/**
 * `mmif reward serve`: serves rewards for an RL run's responses, scored against a build's ground
 * truth, within a spending limit.
 */
import { parseFlags } from '../../config/commandFlags.js';
import { endpointFor } from '../../config/endpointRouting.js';
import { endpointSchema, type EndpointConfig } from '../../config/modelsConfig.js';
import { llmSchema } from '../../config/llmConfig.js';
import { BuildBudget, writeBudget } from '../../llm/buildBudget.js';
import { resolveBaseUrl } from '../../llm/endpoint.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import { configuredLimits } from '../../llm/endpointLimits.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import { loadRewardData, type RewardData } from '../../output/formats/rewardData.js';
import { NoCommittedShardError } from '../../output/formats/export.js';
import { REWARD_MODES, type RewardJudge, type RewardMode } from '../../pipeline/rewards/scoreResponse.js';
import { LLM_CACHE_PREFIX } from '../../storage/buildLayout.js';
import { CliError, EXIT } from '../exitCodes.js';
import { openDatasetRoot, serveUntilStopped } from '../datasetRoot.js';
import { rewardServer } from '../rewardServer.js';

export const REWARD_USAGE = `usage: mmif reward serve --data ROOT [--port N] [--host H] [--reward fraction|all|vector]
                         [--judge-model M [--judge-base-url URL] [--judge-api-key-env VAR] | --no-judge]
                         [--max-usd X] [--max-requests N] [--max-batch N] [--max-response-chars N]
  Serves rewards for the responses of an RL run, scored against the ground truth of the build at
  ROOT (<output>/<build-id>; mmif schema --ground-truth), on 127.0.0.1:N (default 8000; name --host
  to listen wider):
  POST /get_reward   OpenRLHF's remote reward model: {query, prompts, labels} -> {rewards};
                     a label is a record id or a ground truth (JSON text)
  POST /v1/rewards   {items: [{id | ground_truth, response}]} -> per item the reward and each
                     constraint's verdict, method and vacuity
  GET  /healthz
  Rule constraints are checked in process with the build's verifiers. Judged ones go to the judge
  endpoint (default: the build's judge) through the model-call cache beside the build, its limiter
  and a budget (default: the build's llm.budget; --max-usd, --max-requests): a repeated response is
  never paid twice. --no-judge scores rule constraints only, and every reply says so.
  --reward  fraction (default): share of constraints followed; all: 1 only when every one is;
            vector: one 1/0 per constraint (null: not scored; /v1/rewards only)
  Vacuous rule passes count per the build's verification.vacuous. A bad item is a 4xx naming it
  (unknown id, malformed ground truth, response over --max-response-chars, default 32768; batch over
  --max-batch, default 512); a judge that is down is a 503 naming it. docs/rl-rewards.md`;

const positiveInt = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`--${name} must be a positive integer, got '${value}'`, EXIT.usage);
  return n;
};

export async function rewardCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags({
    args,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      port: { type: 'string', default: '8000' },
      host: { type: 'string', default: '127.0.0.1' },
      reward: { type: 'string', default: 'fraction' },
      'judge-model': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-api-key-env': { type: 'string' },
      'no-judge': { type: 'boolean', default: false },
      'max-usd': { type: 'string' },
      'max-requests': { type: 'string' },
      'max-batch': { type: 'string' },
      'max-response-chars': { type: 'string' },
    },
  });
  if (positionals[0] !== 'serve' || positionals.length > 1 || !values.data) throw new CliError(REWARD_USAGE, EXIT.usage);
  const mode = REWARD_MODES.find((m) => m === values.reward);
  if (!mode) throw new CliError(`--reward must be fraction, all or vector, got '${values.reward}'`, EXIT.usage);
  if (values['no-judge'] && (values['judge-model'] || values['judge-base-url'])) throw new CliError('--no-judge and --judge-model/--judge-base-url exclude each other', EXIT.usage);
  const { store, layout } = openDatasetRoot(values.data);
  const data = await loadRewardData(store, layout).catch((err: unknown) => {
    throw err instanceof NoCommittedShardError ? new CliError(err.message, EXIT.notFound) : err;
  });
  const budget = {
    maxUsd: values['max-usd'] === undefined ? undefined : Number(values['max-usd']),
    maxRequests: values['max-requests'] === undefined ? undefined : positiveInt('max-requests', values['max-requests'], 1),
  };
  if (budget.maxUsd !== undefined && !(budget.maxUsd > 0)) throw new CliError(`--max-usd must be a positive number, got '${values['max-usd']}'`, EXIT.usage);
  const judge = values['no-judge']
    ? undefined
    : await judgeOf(data, { model: values['judge-model'], baseUrl: values['judge-base-url'], apiKeyEnv: values['judge-api-key-env'] }, budget, store, layout);
  const server = rewardServer({
    truths: data.truths,
    mode: mode satisfies RewardMode,
    judge,
    maxBatch: positiveInt('max-batch', values['max-batch'], 512),
    maxResponseChars: positiveInt('max-response-chars', values['max-response-chars'], 32_768),
  });
  const judgeText = judge ? `judge ${judge.name}` : 'no judge: rule constraints only';
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number (0: a free one), got '${values.port}'`, EXIT.usage);
  await serveUntilStopped(server, values.host!, port, `rewards for ${data.truths.size} records, ${mode}, ${judgeText}`);
  return EXIT.ok;
}

/**
 * The judge, called as a build calls it: the build's llm settings (retries, timeouts, judge
 * temperature, prices), the model-call cache beside the build (a build's own judge replies are hits),
 * the endpoint's limiter, and a budget of the service's own under the build's work folder.
 */
async function judgeOf(
  data: RewardData,
  flags: { model?: string; baseUrl?: string; apiKeyEnv?: string },
  limits: { maxUsd?: number; maxRequests?: number },
  store: ReturnType<typeof openDatasetRoot>['store'],
  layout: ReturnType<typeof openDatasetRoot>['layout'],
): Promise<RewardJudge & { name: string }> {
  const built = data.stored ? endpointFor(data.stored.config, 'judge') : undefined;
  if (!built && !flags.model)
    throw new CliError('the build at --data has no stored config to take the judge from: name --judge-model (and --judge-base-url), or --no-judge', EXIT.usage);
  const endpoint: EndpointConfig = endpointSchema.parse({
    ...(flags.model ? {} : built),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}),
  });
  const llm = data.stored?.config.llm ?? llmSchema.unwrap().parse({});
  const budgetKey = `${layout.root}/_work/reward/budget.json`;
  await writeBudget(store, budgetKey, { ...llm.budget, ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)) });
  const models = new ModelCaller(store, LLM_CACHE_PREFIX, llm, {
    limits: configuredLimits,
    prices: llm.prices,
    retry: llm.retry,
    owner: `${layout.root}\u0000reward`,
    budget: new BuildBudget(store, budgetKey, new SpendLedger(store, `${layout.root}/_work/reward/spend/`)),
  });
  return {
    name: `${resolveBaseUrl(endpoint)} (${endpoint.model})`,
    ask: (prompt, image) => models.text({ stage: 'judge', endpoint, prompt, image, temperature: llm.judgeTemperature }, []),
    image: data.image,
  };
}

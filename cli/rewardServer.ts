/**
 * The HTTP server of `mmif reward serve`: scores responses against a dataset's ground truths
 * (pipeline/rewards/scoreResponse.ts). `POST /get_reward` speaks OpenRLHF's remote reward-model
 * protocol (its client, `SingleTurnAgentExecutor` in openrlhf/utils/agent.py, posts `{query, prompts,
 * labels}` and reads `rewards`, as openrlhf/cli/serve_rm.py answers; here a label is a record id or
 * a ground truth's JSON text, the response the query after its prompt); `POST /v1/rewards` takes
 * `{items: [{id | ground_truth, response}]}`; `GET /healthz`. Every item is checked before any is
 * scored: a bad one is a 4xx with one line naming it and nothing is paid for; a judge that is down
 * is a 503 naming it, never a reward of 0.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { groundTruthSchema, type GroundTruth } from '../domain/groundTruth.js';
import { describeIssues } from '../verification/functions.js';
import { scoreResponse, type RewardJudge, type RewardMode } from '../pipeline/rewards/scoreResponse.js';
import { BudgetExhausted } from '../llm/buildBudget.js';
import { EndpointGaveUp } from '../llm/sendCompletion.js';
import { SampleRejection } from '../domain/rejection.js';

interface RewardServerOptions {
  truths: ReadonlyMap<string, GroundTruth>;
  mode: RewardMode;
  /** Undefined: --no-judge. `name`: the endpoint as a 503 names it. */
  judge?: RewardJudge & { name: string };
  maxBatch: number;
  maxResponseChars: number;
}

/** A request the service refuses: its status and one line. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Item {
  id: string | null;
  truth: GroundTruth;
  response: string;
}

export function rewardServer(options: RewardServerOptions): Server {
  const judgeLine = options.judge ? `on: ${options.judge.name}` : 'off (--no-judge): judged constraints are not scored; rewards are over the rule constraints';
  const routes: Record<string, (body: unknown) => Promise<unknown>> = {
    'POST /v1/rewards': async (body) => {
      const items = itemsOf(body, options);
      const scored = await scoreAll(items, options);
      return { reward_mode: options.mode, judge: judgeLine, items: scored.map((s, i) => ({ id: items[i]!.id, ...s })) };
    },
    'POST /get_reward': async (body) => {
      if (options.mode === 'vector') throw new Refusal(400, '/get_reward answers one number per query: serve with --reward fraction or all, or use /v1/rewards');
      const items = openRlhfItems(body, options);
      const rewards = (await scoreAll(items, options)).map((s) => s.reward as number);
      return { rewards, scores: rewards, extra_logs: {}, judge: judgeLine };
    },
  };
  const maxBody = options.maxBatch * (options.maxResponseChars * 4 + 64 * 1024);
  return createServer((req, res) => {
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://localhost').pathname}`;
    if (route === 'GET /healthz') return reply(res, 200, { ok: true, records: options.truths.size, reward_mode: options.mode, judge: judgeLine });
    const handle = routes[route];
    if (!handle) return reply(res, 404, { error: `no route ${route}: POST /get_reward, POST /v1/rewards, GET /healthz` });
    readJson(req, maxBody)
      .then(handle)
      .then(
        (out) => reply(res, 200, out),
        (err: unknown) => {
          const refusal = refusalOf(err, options.judge?.name);
          reply(res, refusal.status, { error: refusal.message });
        },
      );
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Refusal(413, `request body over ${maxBytes} bytes (--max-batch items of --max-response-chars each)`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new Refusal(400, `body is not JSON: ${(err as Error).message}`);
  }
}

function checkBatch(count: number, options: RewardServerOptions): void {
  if (count === 0) throw new Refusal(400, 'the batch is empty');
  if (count > options.maxBatch) throw new Refusal(413, `batch of ${count} items is over the limit of ${options.maxBatch} (--max-batch)`);
}

function checkResponse(where: string, response: unknown, options: RewardServerOptions): string {
  if (typeof response !== 'string') throw new Refusal(400, `${where}: response must be a string`);
  if (response.length > options.maxResponseChars)
    throw new Refusal(413, `${where}: response of ${response.length} characters is over the cap of ${options.maxResponseChars} (--max-response-chars)`);
  return response;
}

/** A label or item's ground truth: a record id, or a ground truth (object or JSON text). */
function truthOf(where: string, label: unknown, options: RewardServerOptions): { id: string | null; truth: GroundTruth } {
  if (typeof label === 'string' && !label.trimStart().startsWith('{')) {
    const truth = options.truths.get(label);
    if (!truth) throw new Refusal(404, `${where}: unknown id '${label}' (not a record of this dataset)`);
    return { id: label, truth };
  }
  let value = label;
  if (typeof label === 'string') {
    try {
      value = JSON.parse(label);
    } catch (err) {
      throw new Refusal(400, `${where}: malformed ground truth: not JSON (${(err as Error).message})`);
    }
  }
  const parsed = groundTruthSchema.safeParse(value);
  if (!parsed.success) throw new Refusal(400, `${where}: malformed ground truth: ${describeIssues(parsed.error, 'ground_truth')}`);
  return { id: parsed.data.id, truth: parsed.data };
}

function itemsOf(body: unknown, options: RewardServerOptions): Item[] {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new Refusal(400, 'body: items must be a list of {id | ground_truth, response}');
  checkBatch(items.length, options);
  return items.map((raw: unknown, i) => {
    const where = `item ${i}`;
    const item = (raw ?? {}) as { id?: unknown; ground_truth?: unknown; response?: unknown };
    if (item.id === undefined && item.ground_truth === undefined) throw new Refusal(400, `${where}: give an id or a ground_truth`);
    const response = checkResponse(where, item.response, options);
    if (item.id !== undefined && typeof item.id !== 'string') throw new Refusal(400, `${where}: id must be a string`);
    return { ...truthOf(where, item.ground_truth ?? item.id, options), response };
  });
}

function openRlhfItems(body: unknown, options: RewardServerOptions): Item[] {
  const { query, prompts, labels } = (body ?? {}) as { query?: unknown; prompts?: unknown; labels?: unknown };
  if (!Array.isArray(query) || !Array.isArray(labels) || labels.length !== query.length) {
    throw new Refusal(400, 'body: query and labels must be lists of the same length (labels: a record id or a ground truth per query)');
  }
  if (prompts !== undefined && (!Array.isArray(prompts) || prompts.length !== query.length)) throw new Refusal(400, 'body: prompts must be a list as long as query');
  checkBatch(query.length, options);
  return query.map((q: unknown, i) => {
    const where = `query ${i}`;
    const text = checkResponse(where, q, options);
    const prompt = (prompts as unknown[] | undefined)?.[i];
    const response = typeof prompt === 'string' && text.startsWith(prompt) ? text.slice(prompt.length) : text;
    return { ...truthOf(`label ${i}`, labels[i], options), response };
  });
}

function scoreAll(items: readonly Item[], options: RewardServerOptions) {
  return Promise.all(items.map((item) => scoreResponse(item.truth, item.response, options.mode, options.judge)));
}

function refusalOf(err: unknown, judge: string | undefined): Refusal {
  if (err instanceof Refusal) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof EndpointGaveUp) return new Refusal(503, `judge endpoint ${judge} is down: ${message}`);
  if (err instanceof BudgetExhausted) return new Refusal(503, `judge ${judge}: ${message} (llm.budget; raise it with --max-usd / --max-requests)`);
  if (err instanceof SampleRejection) return new Refusal(502, `judge endpoint ${judge} gave no usable reply: ${err.reason}`);
  return new Refusal(500, message.split('\n')[0]!);
}

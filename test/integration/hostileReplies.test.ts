/**
 * Model calls against an endpoint that misbehaves as gateways and proxies do (test/harness/
 * hostileEndpoint.ts in front of the simulator): usage numbers that are nonsense, a Retry-After of a
 * day or a month, a socket closed in the middle of a reply, a runaway reply to a JSON stage. What is
 * asserted is what the endpoint saw (requests it answered, the largest request body) and what the
 * engine counted, paid and said.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SampleRejection } from '../../domain/rejection.js';
import { withTallies } from '../../llm/tallyScope.js';
import { noTallies } from '../../domain/tallies.js';
import { BudgetExhausted, BuildBudget, writeBudget } from '../../llm/buildBudget.js';
import { limiterSnapshots } from '../../llm/limiter.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import { EndpointGaveUp } from '../../llm/sendCompletion.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { startHostileEndpoint, type HostileEndpoint } from '../harness/hostileEndpoint.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';

let sim: SimulatorHandle;
let hostile: HostileEndpoint;
let dir: string;
const llm = defaultLlmSettings();
const image = { jpeg: Buffer.from('not really a jpeg, the simulator only counts it'), sha256: 'abc123' };

before(async () => {
  sim = await startSimulator({ seed: 29 });
  hostile = await startHostileEndpoint(sim.url);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-hostile-'));
});
after(async () => {
  await hostile.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/** `gpt-4o`: a model the price table knows (priced as OpenAI's); other names give a test a limiter of its own. */
const endpoint = (model: string) => ({ model, baseUrl: hostile.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 4, batch: false });
const ask = (model: string, i: number, what = model) => ({ stage: 'answer' as const, endpoint: endpoint(model), prompt: renderAnswerPrompt(`Describe scene ${what} ${i}.`, []) });

function budgetOf(store: LocalStore) {
  const ledger = new SpendLedger(store, 'spend/');
  return { budget: new BuildBudget(store, 'budget.json', ledger), ledger };
}

const NONSENSE: Array<(u: Record<string, unknown>) => unknown> = [
  (u) => ({ ...u, prompt_tokens_details: { cached_tokens: -2_000_000 } }),
  (u) => ({ ...u, prompt_tokens: -2_000_000 }),
  (u) => ({ ...u, completion_tokens: 2e300 }),
  (u) => ({ ...u, prompt_tokens: 'lots', completion_tokens: 'lots' }),
  () => undefined,
];

function nonsenseUsage(): (u: Record<string, unknown>) => unknown {
  let n = 0;
  return (u) => NONSENSE[n++ % NONSENSE.length]!(u);
}

test('nonsense usage (negative cached tokens on a priced model, negative, 2e300, "lots", none) is estimated, priced finite, and paid once per request', async () => {
  hostile.set({ usage: nonsenseUsage() });
  hostile.reset();
  const store = new LocalStore(path.join(dir, 'usage'));
  const { budget, ledger } = budgetOf(store);
  const calls: CallRecord[] = [];
  const models = new ModelCaller(store, '_cache/llm', llm, { budget });
  for (let i = 0; i < 5; i++) await models.forExecution(`s${i}/answer`).text(ask('gpt-4o', i, 'usage'), calls);
  assert.equal(calls.length, 5);
  for (const c of calls) {
    assert.match(c.estimated ?? '', /negative|beyond what the request could use|not a number|no usage reported/, JSON.stringify(c));
    for (const n of [c.promptTokens, c.completionTokens, c.costUsd, c.cachedPromptTokens ?? 0]) assert.ok(typeof n === 'number' && Number.isFinite(n) && n >= 0, JSON.stringify(c));
    assert.equal(c.costSource, 'table');
    assert.ok(c.costUsd > 0);
  }
  await ledger.flush();
  assert.deepEqual(ledger.total(), { usd: calls.reduce((s, c) => s + c.costUsd, 0), requests: 5 });
  assert.equal(hostile.counts().paid, 5);
  // A retried execution (as Temporal retries a failed activity) answers from the cache: nothing is paid again.
  const again = new ModelCaller(store, '_cache/llm', llm, { budget });
  const replayed: CallRecord[] = [];
  for (let i = 0; i < 5; i++) await again.forExecution(`s${i}/answer`).text(ask('gpt-4o', i, 'usage'), replayed);
  assert.ok(
    replayed.every((c) => c.cached || c.recovered),
    JSON.stringify(replayed),
  );
  assert.equal(hostile.counts().paid, 5, 'paid once per request');
  hostile.set({});
});

test('a budget below the cost stops the calls even when the endpoint reports nonsense usage', async () => {
  hostile.set({ usage: nonsenseUsage() });
  hostile.reset();
  const store = new LocalStore(path.join(dir, 'budget'));
  await writeBudget(store, 'budget.json', { maxUsd: 0.0005 });
  const { budget, ledger } = budgetOf(store);
  const models = new ModelCaller(store, '_cache/llm', llm, { budget });
  let stopped: unknown;
  let made = 0;
  for (let i = 0; i < 40 && !stopped; i++) {
    await models
      .forExecution(`b${i}/answer`)
      .text(ask('gpt-4o', i, 'budget'), [])
      .then(() => made++)
      .catch((err: unknown) => (stopped = err));
  }
  assert.ok(stopped instanceof BudgetExhausted, String(stopped));
  assert.ok(made >= 1 && made < 40, `${made} calls made before the budget stopped them`);
  await ledger.flush();
  const spent = ledger.total();
  assert.ok(Number.isFinite(spent.usd) && spent.usd >= 0.0005, `spent $${spent.usd}`);
  assert.equal(spent.requests, hostile.counts().paid, 'every paid request counted');
  hostile.set({});
});

test('a Retry-After beyond llm.maxRetryAfterSeconds fails the request at once naming the wait asked for, counted; a month sets no overflowing timer', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    for (const [suffix, headers, said] of [
      ['day', { 'retry-after': '100000' }, 'asked to wait 100000 s (27.8 h)'],
      ['ms', { 'retry-after-ms': '1e8' }, 'asked to wait 100000 s (27.8 h)'],
      ['month', { 'retry-after': '3000000' }, 'asked to wait 3000000 s (833.3 h)'],
    ] as const) {
      hostile.set({ rateLimit: { headers, times: 1 } });
      hostile.reset();
      const tallies = noTallies();
      const models = new ModelCaller(new LocalStore(path.join(dir, `retry-${suffix}`)), '_cache/llm', llm);
      const call = withTallies(tallies, () => models.text(ask(`slow-${suffix}`, 0), []));
      await assert.rejects(
        call,
        (err: unknown) =>
          err instanceof EndpointGaveUp &&
          err.message ===
            `answer: model endpoint ${hostile.url} (model slow-${suffix}): HTTP 429: ${said}, beyond llm.maxRetryAfterSeconds (300 s): the endpoint refuses requests for now, 1 attempt`,
      );
      assert.deepEqual(tallies.failedAttempts, { 'rate-limited': 1 });
      assert.equal(hostile.counts().requests, 1);
      // The endpoint is paused for the bound at most.
      const paused = Math.max(...limiterSnapshots().map((s) => s.pausedForMs));
      assert.ok(paused > 0 && paused <= 300_000, `paused ${paused} ms`);
    }
  } finally {
    process.off('warning', onWarning);
    hostile.set({});
  }
  assert.deepEqual(
    warnings.map((w) => `${w.name}: ${w.message}`),
    [],
  );
});

test('a server closing the socket mid-body reads as the connection closed mid-reply, not as no connection', async () => {
  hostile.set({ cutMidBody: { times: 2 } });
  const models = new ModelCaller(new LocalStore(path.join(dir, 'cut')), '_cache/llm', llm, { retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } });
  await assert.rejects(models.text(ask('cut-vlm', 0), []), (err: unknown) => {
    assert.ok(err instanceof EndpointGaveUp);
    assert.match(err.message, /^answer: model endpoint \S+ \(model cut-vlm\): the connection closed mid-reply \(after \d+ bytes of the body: aborted\), 2 attempts$/);
    return true;
  });
  hostile.set({});
});

test('a runaway JSON reply is quoted in the repair request as a bounded excerpt, never whole', async () => {
  // 500 KB of nested JSON that is no valid instruction reply.
  const runaway = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`.padEnd(500_000, ' ');
  hostile.set({ content: () => runaway });
  hostile.reset();
  const models = new ModelCaller(new LocalStore(path.join(dir, 'repair')), '_cache/llm', llm);
  const req = { stage: 'instruction' as const, endpoint: endpoint('repair-vlm'), prompt: renderInstructionPrompt(['Describe it.']), image };
  await assert.rejects(models.json(req, 'instructions', instructionReplySchema, []), SampleRejection);
  const counts = hostile.counts();
  assert.equal(counts.requests, 6, 'three tries, each a request and its repair');
  assert.ok(counts.largestRequestBytes < 16_000, `the largest request was ${counts.largestRequestBytes} bytes`);
  hostile.set({});
});

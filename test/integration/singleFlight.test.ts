/**
 * Single-flight (llm/singleFlight.ts through ModelCaller): identical requests in flight at once in
 * one process are sent once, and the others are answered from the cache when the first reply lands.
 * Against a fake OpenAI-compatible endpoint on loopback that counts the requests it receives and
 * holds every reply until the test releases it, so the requests overlap for certain.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SampleRejection } from '../../domain/rejection.js';
import { withAbortSignal } from '../../llm/abortScope.js';
import { BuildBudget } from '../../llm/buildBudget.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { LocalStore } from '../../storage/localStore.js';
import { eventually } from '../harness/datasetChecks.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';

/** Answers every chat completion once released; `next` answers the next one with a 400 (`refuse`) or an empty reply (`empty`). */
class FakeEndpoint {
  received = 0;
  private held: Array<() => void> = [];
  private released = false;
  next: 'refuse' | 'empty' | undefined;
  constructor(readonly server: Server) {}

  static async start(): Promise<FakeEndpoint> {
    const fake: FakeEndpoint = new FakeEndpoint(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          fake.received += 1;
          const next = fake.next;
          fake.next = undefined;
          const answer = () => {
            if (res.destroyed) return;
            if (next === 'refuse') {
              res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'refused by the fake', type: 'invalid_request_error' } }));
              return;
            }
            const completion = {
              id: `c${fake.received}`,
              object: 'chat.completion',
              created: 0,
              model: 'fake-vlm',
              choices: [{ index: 0, message: { role: 'assistant', content: next === 'empty' ? '' : 'A harbour at dusk.' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
            };
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
          };
          if (fake.released) answer();
          else fake.held.push(answer);
        });
      }),
    );
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Holds replies again from now on. */
  hold(): void {
    this.released = false;
    this.received = 0;
  }

  /** Sends the replies held so far (and every later one, until `hold`). */
  release(): void {
    this.released = true;
    for (const answer of this.held.splice(0)) answer();
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A store that counts its finished reads: once every caller has read the cache, each has decided to send or to wait. */
class CountingStore extends LocalStore {
  reads = 0;
  override async get(key: string): Promise<Buffer | undefined> {
    const body = await super.get(key);
    this.reads += 1;
    return body;
  }
}

let fake: FakeEndpoint;
let dir: string;
before(async () => {
  fake = await FakeEndpoint.start();
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-single-flight-'));
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const PRICES = { 'fake-vlm': { inputPerMTok: 1000, outputPerMTok: 1000, batchDiscount: 0.5 } };
const request = (text: string) => ({
  stage: 'answer' as const,
  endpoint: { model: 'fake-vlm', baseUrl: fake.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false },
  prompt: renderAnswerPrompt(text, []),
});

function setup(sub: string) {
  const store = new CountingStore(path.join(dir, sub));
  const budget = new BuildBudget(store, 'b/_work/budget.json', new SpendLedger(store, 'b/_work/spend/'));
  const models = new ModelCaller(
    store,
    '_cache/llm',
    { ...defaultLlmSettings(), retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 } },
    { owner: 'build-a', prices: PRICES, budget },
  );
  return { store, budget, models };
}

/** Lets every caller that has read the cache go on to its decision (microtasks and one I/O turn). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('four samples asking the identical request at once: one request reaches the endpoint, the other three are cache hits', async () => {
  fake.hold();
  const { store, budget, models } = setup('four');
  const req = request('Describe the harbour.');
  const calls = [[], [], [], []] as CallRecord[][];
  const replies = Promise.all(calls.map((c, i) => models.forExecution(`s${i}/answer`).text(req, c)));
  await eventually(() => store.reads >= 4 && fake.received >= 1, 10_000, 'every caller read the cache, the first request arrived');
  await settle();
  fake.release();
  const texts = await replies;
  assert.equal(fake.received, 1, 'identical requests in flight at once are sent once');
  assert.deepEqual(new Set(texts), new Set(['A harbour at dusk.']));
  const records = calls.flat();
  assert.deepEqual(records.map((c) => c.cached).sort(), [false, true, true, true], 'the waiters are served from the cache, not paid');
  const paid = records.find((c) => !c.cached)!;
  assert.ok(paid.costUsd > 0);
  for (const hit of records.filter((c) => c.cached)) assert.deepEqual([hit.costUsd, hit.savedUsd], [0, paid.costUsd]);
  await budget.ledger.flush();
  assert.deepEqual(budget.ledger.total(), { usd: paid.costUsd, requests: 1 }, 'the spend ledger counts the one request paid');
});

test('when the first request fails, its waiters send their own: one of them pays, the rest wait for it', async () => {
  fake.hold();
  fake.next = 'refuse';
  const { store, budget, models } = setup('refused');
  const req = request('Describe the quay.');
  const first: CallRecord[] = [];
  const refused = models.forExecution('s0/answer').text(req, first);
  await eventually(() => fake.received >= 1, 10_000, 'the first request arrived');
  const calls = [[], [], []] as CallRecord[][];
  const replies = Promise.all(calls.map((c, i) => models.forExecution(`s${i + 1}/answer`).text(req, c)));
  await eventually(() => store.reads >= 4, 10_000, 'the waiters read the cache');
  await settle();
  assert.equal(fake.received, 1, 'the waiters wait for the first request');
  fake.release();
  await assert.rejects(refused, (err: unknown) => err instanceof SampleRejection && /endpoint-refused/.test(err.reason));
  await replies;
  assert.equal(fake.received, 2, 'after the refusal, one waiter sent the request and the others waited for it');
  assert.deepEqual(
    calls
      .flat()
      .map((c) => c.cached)
      .sort(),
    [false, true, true],
  );
  await budget.ledger.flush();
  assert.equal(budget.ledger.total().requests, 1, 'a refusal is not paid');
});

test('an unusable first reply is what its waiters read from the cache: a past try of the build, each goes on to the next try, sent once', async () => {
  fake.hold();
  fake.next = 'empty';
  const { store, budget, models } = setup('unusable');
  const req = request('Describe the slipway.');
  const calls = [[], [], []] as CallRecord[][];
  const replies = Promise.all(calls.map((c, i) => models.forExecution(`s${i}/answer`).text(req, c)));
  await eventually(() => store.reads >= 3 && fake.received >= 1, 10_000, 'every caller read the cache, the first request arrived');
  await settle();
  fake.release();
  assert.deepEqual(await replies, ['A harbour at dusk.', 'A harbour at dusk.', 'A harbour at dusk.']);
  assert.equal(fake.received, 2, 'the empty first try and the second try, each sent once');
  // Each sample saw both tries, one of them paying for each; the others read them from the cache.
  for (const c of calls)
    assert.deepEqual(
      c.map((r) => [r.replyTry ?? 0, r.problem]),
      [
        [0, 'empty-reply'],
        [1, undefined],
      ],
    );
  assert.equal(calls.flat().filter((r) => !r.cached).length, 2);
  await budget.ledger.flush();
  assert.equal(budget.ledger.total().requests, 2);
});

test('a cancelled first request leaves its waiter to send its own; a cancelled waiter stops waiting at once', async () => {
  fake.hold();
  const { store, models } = setup('cancelled');
  const req = request('Describe the lighthouse.');
  const leader = new AbortController();
  const cancelled = withAbortSignal(leader.signal, () => models.forExecution('s0/answer').text(req, []));
  await eventually(() => fake.received >= 1, 10_000, 'the first request arrived');
  const waiterCalls: CallRecord[] = [];
  const waiter = models.forExecution('s1/answer').text(req, waiterCalls);
  await eventually(() => store.reads >= 2, 10_000, 'the waiter read the cache');
  await settle();
  leader.abort(new Error('activity cancelled'));
  await assert.rejects(cancelled);
  await eventually(() => fake.received >= 2, 10_000, "the waiter's own request arrived");
  fake.release();
  await waiter;
  assert.deepEqual(
    waiterCalls.map((c) => c.cached),
    [false],
    'the waiter paid for its own request',
  );

  // A waiter cancelled while the first request is in flight ends with its cancellation, and the first still lands.
  fake.hold();
  const other = request('Describe the ferry.');
  const leading = models.forExecution('s2/answer').text(other, []);
  await eventually(() => fake.received >= 1, 10_000, 'the first request arrived');
  const reads = store.reads;
  const stop = new AbortController();
  const waiting = withAbortSignal(stop.signal, () => models.forExecution('s3/answer').text(other, []));
  await eventually(() => store.reads > reads, 10_000, 'the waiter read the cache');
  await settle();
  stop.abort(new Error('waiter cancelled'));
  await assert.rejects(waiting, /waiter cancelled/);
  fake.release();
  assert.equal(await leading, 'A harbour at dusk.');
  assert.equal(fake.received, 1);
});

test('only identical requests wait: two different ones in flight at once are both sent', async () => {
  fake.hold();
  const { store, models } = setup('different');
  const both = Promise.all([models.forExecution('s0/answer').text(request('Describe the pier.'), []), models.forExecution('s1/answer').text(request('Describe the dock.'), [])]);
  await eventually(() => store.reads >= 2 && fake.received >= 2, 10_000, 'both requests arrived');
  fake.release();
  await both;
  assert.equal(fake.received, 2);
});

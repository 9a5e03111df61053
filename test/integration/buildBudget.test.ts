/**
 * The hard budget across workers: each process's spend ledger on one real store (two ledgers stand
 * for two worker processes), requests admitted against what all of them paid, and a ModelCaller
 * against the simulator that stops sending once the budget is spent.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUDGET_REFRESH_MS, BudgetExhausted, BuildBudget, writeBudget } from '../../llm/buildBudget.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { ReadCounts } from '../harness/readCounts.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { parseEvalConfig } from '../../config/evalConfig.js';
import { configFingerprint } from '../../pipeline/planning/planBuild.js';

let dir: string;
let sim: SimulatorHandle;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-budget-'));
  sim = await startSimulator({ seed: 3 });
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const BUDGET = 'b/_work/budget.json';
const SPEND = 'b/_work/spend/';

test('spend written by one worker process is seen by another; a restarted process keeps what earlier ones paid', async () => {
  const store = new LocalStore(path.join(dir, 'ledger'));
  let now = 0;
  const a = new SpendLedger(store, SPEND, () => now);
  const b = new SpendLedger(store, SPEND, () => now);
  await Promise.all([a.add({ usd: 0.25, requests: 1 }), a.add({ usd: 0.5, requests: 2 })]);
  await b.add({ usd: 1, requests: 1 });
  assert.deepEqual(a.total(), { usd: 0.75, requests: 3 }, 'its own at once');
  await a.refresh(BUDGET_REFRESH_MS);
  assert.deepEqual(a.total(), { usd: 1.75, requests: 4 });
  await b.add({ usd: 1, requests: 1 });
  await a.refresh(BUDGET_REFRESH_MS);
  assert.deepEqual(a.total(), { usd: 1.75, requests: 4 }, 'read again only when older than the refresh age');
  now += BUDGET_REFRESH_MS;
  await a.refresh(BUDGET_REFRESH_MS);
  assert.deepEqual(a.total(), { usd: 2.75, requests: 5 });
  // A new process (a resumed build's worker) starts from what every earlier one wrote.
  const c = new SpendLedger(store, SPEND, () => now);
  await c.refresh(BUDGET_REFRESH_MS);
  assert.deepEqual(c.total(), { usd: 2.75, requests: 5 });
});

test('requests are admitted until the budget is spent; in flight they count against maxRequests; a raised budget admits again', async () => {
  const store = new LocalStore(path.join(dir, 'admit'));
  let now = 0;
  const budget = new BuildBudget(store, BUDGET, new SpendLedger(store, SPEND, () => now), () => now);
  await writeBudget(store, BUDGET, { maxUsd: 1, maxRequests: 3 });
  await budget.admit();
  await budget.admit();
  await budget.admit();
  await assert.rejects(budget.admit(), (err: Error) => err instanceof BudgetExhausted && err.message === 'budget exhausted: 3 of 3 requests sent ($0.0000 spent)');
  await budget.paid(0.6);
  budget.unpaid(); // answered with an error status: no bill, no request counted
  await budget.admit(); // 1 paid + 1 in flight: room for one more
  await assert.rejects(budget.admit(), /budget exhausted: 3 of 3 requests sent \(\$0\.6000 spent\)/);
  await budget.paid(0.5); // in flight when the limit was reached: the overshoot
  await assert.rejects(budget.admit(), (err: Error) => err.message === 'budget exhausted: $1.1000 of $1.0000 spent');

  await assert.rejects(budget.admitBatch(), (err: Error) => err.message === 'budget exhausted: $1.1000 of $1.0000 spent', 'no Batch API submission once spent');

  await writeBudget(store, BUDGET, { maxUsd: 5 });
  // Raised (a resume with a larger budget): read again before refusing, though read under the refresh age ago.
  await budget.admit();
  now += BUDGET_REFRESH_MS;
  await budget.admit();
  // Another worker paid meanwhile: counted once read.
  await new SpendLedger(store, SPEND, () => now).add({ usd: 4, requests: 1 });
  now += BUDGET_REFRESH_MS;
  await assert.rejects(budget.admit(), (err: Error) => err.message === 'budget exhausted: $5.1000 of $5.0000 spent');
});

test('requests admitted together read the budget once per refresh, and once more before refusing', async () => {
  const store = new ReadCounts(path.join(dir, 'together'));
  let now = 0;
  const budget = new BuildBudget(store, BUDGET, new SpendLedger(store, SPEND, () => now), () => now);
  await writeBudget(store, BUDGET, { maxRequests: 40 });
  store.reads.clear(); // writeBudget's own read
  await Promise.all(Array.from({ length: 20 }, () => budget.admit()));
  assert.equal(store.readsOf(BUDGET), 1, '20 requests admitted at once: one read');
  await Promise.all(Array.from({ length: 10 }, () => budget.admit()));
  assert.equal(store.readsOf(BUDGET), 1, 'within the refresh age: none');
  now += BUDGET_REFRESH_MS;
  await Promise.all(Array.from({ length: 10 }, () => budget.admit()));
  assert.equal(store.readsOf(BUDGET), 2, 'a second later: one more');
  await assert.rejects(budget.admit(), /budget exhausted: 40 of 40 requests sent/);
  assert.equal(store.readsOf(BUDGET), 3, 'read afresh before refusing');
});

test('a ModelCaller sends nothing once the budget is spent, and a raised budget lets it go on from its cache', async () => {
  const store = new LocalStore(path.join(dir, 'caller'));
  let now = 0;
  const budget = new BuildBudget(store, BUDGET, new SpendLedger(store, SPEND, () => now), () => now);
  // Each simulated answer costs a few hundred tokens: at 1,000 USD per MTok about $0.3 a call.
  const prices = { 'budget-sim': { inputPerMTok: 1000, outputPerMTok: 1000, batchDiscount: 0.5 } };
  const caller = new ModelCaller(store, '_cache/llm', defaultLlmSettings(), { prices, budget });
  const ask = (i: number, calls: CallRecord[]) =>
    caller.text(
      {
        stage: 'answer',
        endpoint: { model: 'budget-sim', baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 1, batch: false },
        prompt: renderAnswerPrompt(`Describe scene ${i}.`, []),
      },
      calls,
    );
  await writeBudget(store, BUDGET, { maxUsd: 0.5 });
  sim.resetStats();
  const calls: CallRecord[] = [];
  let refused: Error | undefined;
  for (let i = 0; i < 10 && !refused; i++) await ask(i, calls).catch((err: Error) => (refused = err));
  assert.ok(refused instanceof BudgetExhausted, String(refused));
  const spent = calls.reduce((sum, c) => sum + c.costUsd, 0);
  assert.equal(sim.stats().requests, calls.length, 'the refused request never reached the endpoint');
  assert.ok(spent >= 0.5 && spent - calls.at(-1)!.costUsd < 0.5, `stopped at the first call past the budget: $${spent} over ${calls.length} calls`);
  assert.equal(refused.message, `budget exhausted: $${spent.toFixed(4)} of $0.5000 spent`);

  await writeBudget(store, BUDGET, { maxUsd: 100 });
  now += BUDGET_REFRESH_MS;
  const again: CallRecord[] = [];
  for (let i = 0; i < calls.length; i++) await ask(i, again);
  assert.ok(
    again.every((c) => c.cached),
    'the calls paid before are cache hits',
  );
  assert.equal(sim.stats().requests, calls.length);
  await budget.ledger.flush();
  const reader = new SpendLedger(store, SPEND, () => now);
  await reader.refresh(0);
  assert.deepEqual(reader.total().requests, calls.length, 'each paid call counted once');
});

test('the budget is not part of the config fingerprint: raising it continues the same build', () => {
  const input = { buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m' as const, uri: '/tmp/cc3m' }], maxSamples: 4, models: { default: { model: 'm' } } };
  const fingerprint = (budget?: { maxUsd: number }) => configFingerprint(parseBuildConfig({ ...input, ...(budget ? { llm: { budget } } : {}) }));
  assert.equal(fingerprint({ maxUsd: 1 }), fingerprint({ maxUsd: 100 }));
  assert.equal(fingerprint({ maxUsd: 1 }), fingerprint());
  assert.throws(
    () => parseEvalConfig({ evalId: 'e', data: '/tmp/d', model: { model: 'm' }, llm: { budget: { maxUsd: 1 } } }),
    /budget/,
    'evals take no budget: it would hold nothing',
  );
});

/**
 * The hard budget end to end (Temporal dev server, a worker, the simulator over HTTP, the `mmif`
 * CLI): a build held to a third of what it costs stops within the stated bound (the requests in
 * flight when the budget ran out), fails with `budget exhausted: $X of $Y spent`, resumed as it was
 * stops again at once, and resumed with a larger budget in its config (`mmif resume --config`)
 * completes without paying any call twice, with the same records as a build that never had a budget.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { SpendLedger } from '../../llm/spendLedger.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { getJson } from '../../storage/objectStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertCommittedShardsIntact } from '../harness/datasetChecks.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
const BUILD_ID = 'budget';
/** Requests in flight to the one endpoint, all workers together: the overshoot bound is this many calls. */
const CONCURRENCY = 4;

before(async () => {
  stack = await startStack({ simulator: { seed: 17 }, taskQueue: 'mmif-budget' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-budget-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 2 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (output: string, budget?: { maxUsd: number }): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 5,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 8,
  shardSize: 4,
  sliceSize: 2,
  models: { default: { model: 'mmif-sim-vlm', concurrency: CONCURRENCY } },
  // No pre-flight: every request the simulator answers is then one of the pipeline's.
  llm: { preflight: false, prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } }, ...(budget ? { budget } : {}) },
});

/** What the build's spend ledger holds: every worker process's object summed. */
async function ledgerTotal(output: string) {
  const ledger = new SpendLedger(new LocalStore(output), buildLayout(BUILD_ID).spendPrefix);
  await ledger.refresh(0);
  return ledger.total();
}

/** The dearest single call of a build, from its samples' stage states. */
async function dearestCall(output: string): Promise<number> {
  const store = new LocalStore(output);
  let max = 0;
  for await (const { key } of store.list(`${BUILD_ID}/_work/samples/`)) {
    const state = await getJson<{ calls?: CallRecord[] }>(store, key);
    for (const c of state?.calls ?? []) max = Math.max(max, c.costUsd);
  }
  return max;
}

async function configFile(output: string, budget: { maxUsd: number }): Promise<string> {
  const file = path.join(dir, `config-${budget.maxUsd}.json`);
  await writeFile(file, JSON.stringify(config(output, budget)));
  return file;
}

test('a build stops within its budget, and run again with a larger one ends with the records of an unlimited build, paying nothing twice', async () => {
  const unlimitedOutput = path.join(dir, 'unlimited');
  let before = stack.simulator.stats().requests;
  const unlimited = (await stack.client.workflow.execute('buildDataset', {
    taskQueue: stack.taskQueue,
    workflowId: BUILD_ID,
    args: [config(unlimitedOutput)],
  })) as BuildReport;
  const fullRequests = stack.simulator.stats().requests - before;
  assert.equal(unlimited.shards.committed, 2);
  assert.ok(unlimited.cost.usd > 0);
  assert.deepEqual(await ledgerTotal(unlimitedOutput).then((t) => t.requests), fullRequests, 'the ledger counted every request answered, once');

  const output = path.join(dir, 'limited');
  const maxUsd = Number((unlimited.cost.usd / 3).toFixed(6));
  before = stack.simulator.stats().requests;
  const stopped = await mmif(stack, 'build', '--config', await configFile(output, { maxUsd }), '--wait');
  const limitedRequests = stack.simulator.stats().requests - before;
  assert.equal(stopped.code, 1, stopped.stderr);
  const line = /^STOPPED: budget exhausted: \$(\d+\.\d{4}) of \$(\d+\.\d{4}) spent \(raise llm\.budget in the config, then `npx mmif resume budget --config FILE`\)$/m.exec(
    stopped.stdout,
  );
  assert.ok(line, stopped.stdout);
  assert.equal(line[2], maxUsd.toFixed(4));
  // The build fails with the same line, which the CLI prints as its cause.
  assert.equal(stopped.stderr.trim().split('\n').at(-1), `mmif: build ${BUILD_ID} failed: budget exhausted: $${line[1]} of $${line[2]} spent`);
  assert.ok(Number(line[1]) >= maxUsd);
  const spent = await ledgerTotal(output);
  assert.equal(spent.requests, limitedRequests, 'every request answered was counted, once');
  assert.ok(limitedRequests < fullRequests, 'the build stopped early');
  // The stated bound: what was paid before the budget ran out is under it; beyond it, at most the requests in flight.
  const bound = maxUsd + CONCURRENCY * (await dearestCall(unlimitedOutput));
  assert.ok(spent.usd >= maxUsd && spent.usd <= bound, `spent $${spent.usd} with a budget of $${maxUsd} (bound $${bound})`);
  console.log(
    `budget $${maxUsd}: stopped at $${spent.usd.toFixed(6)} after ${limitedRequests} of ${fullRequests} requests (bound $${bound.toFixed(6)}; unlimited $${unlimited.cost.usd.toFixed(6)})`,
  );

  // Resumed as it was started, the build is held to the same budget: it stops at once, paying nothing.
  before = stack.simulator.stats().requests;
  const again = await mmif(stack, 'resume', BUILD_ID, '--wait');
  assert.equal(again.code, 1, again.stdout + again.stderr);
  assert.match(again.stdout, /^STOPPED: budget exhausted: \$\d+\.\d{4} of \$\d+\.\d{4} spent/m);
  assert.equal(stack.simulator.stats().requests, before, 'a spent budget sends nothing');

  // Its pre-flight is held to the budget as well: run again with one (no check passed before), the
  // spent budget lets its request go no further than the stages', and `mmif build` stops at its check.
  const withPreflight = path.join(dir, 'config-preflight.json');
  const spentConfig = config(output, { maxUsd });
  await writeFile(withPreflight, JSON.stringify({ ...spentConfig, llm: { ...spentConfig.llm, preflight: true } }));
  const checked = await mmif(stack, 'build', '--config', withPreflight, '--wait');
  assert.equal(checked.code, 1, checked.stdout + checked.stderr);
  assert.equal(checked.stderr.trim().split('\n').at(-1), `mmif: pre-flight failed: budget exhausted: $${spent.usd.toFixed(4)} of $${maxUsd.toFixed(4)} spent`);
  assert.equal(stack.simulator.stats().requests, before, 'the pre-flight sent nothing');

  // Resumed with the budget raised in its config: it continues.
  const resumed = await mmif(stack, 'resume', BUILD_ID, '--config', await configFile(output, { maxUsd: 1000 }), '--wait');
  assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
  const resumedRequests = stack.simulator.stats().requests - before;
  // No call paid twice: together both runs made the unlimited build's requests, exactly (identical
  // requests of two samples in flight at once are sent once: llm/singleFlight.ts).
  assert.equal(limitedRequests + resumedRequests, fullRequests, `${limitedRequests} + ${resumedRequests} requests, unlimited ${fullRequests}`);
  assert.equal((await ledgerTotal(output)).requests, limitedRequests + resumedRequests, 'every request answered was counted, once');

  const withBudget = await assertCommittedShardsIntact(new LocalStore(output), BUILD_ID, 2);
  const without = await assertCommittedShardsIntact(new LocalStore(unlimitedOutput), BUILD_ID, 2);
  const data = (sums: Map<string, string>) => [...sums].filter(([file]) => !file.startsWith('manifests/')).sort();
  assert.deepEqual(data(withBudget), data(without), 'the same records, byte for byte');
});

/**
 * A budget stop under `mmif build --local`: its Temporal server goes with the command, so `resume`
 * cannot continue it. The summary says what was paid (committed or not), where the uncommitted
 * shards' stage results are kept and that the same command runs it again; run again as it says, with a
 * raised budget, the build completes paying no request twice (the simulator's request count against
 * an unlimited build's), and `mmif status` shows the spend the ledger holds, before and after.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { paidSpend } from '../../output/reports/buildReport.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { runMmif } from '../harness/mmifCli.js';

let dir: string;
let sim: SimulatorHandle;
const BUILD_ID = 'budget-local';

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-budget-local-'));
  sim = await startSimulator({ seed: 17 });
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 4, shards: 2 });
});

after(async () => {
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (output: string, maxUsd?: number): BuildConfigInput => ({
  buildId: BUILD_ID,
  seed: 5,
  output,
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 8,
  shardSize: 4,
  sliceSize: 2,
  models: { default: { model: 'mmif-sim-vlm', concurrency: 4 } },
  llm: { prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } }, ...(maxUsd ? { budget: { maxUsd } } : {}) },
});

/** `mmif ARGS` as a user runs it with --local: no Temporal address, the calls to this test's simulator (whose requests it counts). */
async function local(...args: string[]) {
  const before = sim.stats().requests;
  const result = await runMmif(args, { cwd: dir, env: { TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined, OPENAI_BASE_URL: sim.url } });
  return { ...result, requests: sim.stats().requests - before };
}

async function configFile(name: string, input: BuildConfigInput): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(input));
  return file;
}

/**
 * The spend headline every report shows (output/reports/costSummary.ts), for what the ledger holds:
 * once a shard of the simulator's is committed the build is a simulated one, its figure a forecast.
 */
const paidHeadline = ({ usd, requests }: { usd: number; requests: number }, flags = 'm') => {
  const paid = usd.toFixed(4).replace('.', '\\.');
  return new RegExp(`^ {2}(paid \\$${paid} for ${requests} requests|all ${requests} requests would cost \\$${paid}) \\(all runs, committed or not\\)`, flags);
};

test('a budget-stopped --local build says what it paid and kept, and run again as it says completes paying nothing twice', async () => {
  const unlimited = await local('build', '--config', await configFile('unlimited', config(path.join(dir, 'unlimited'))), '--local');
  assert.equal(unlimited.code, 0, unlimited.stdout + unlimited.stderr);
  const unlimitedPaid = await paidSpend(new LocalStore(path.join(dir, 'unlimited')), buildLayout(BUILD_ID));

  const output = path.join(dir, 'limited');
  const store = new LocalStore(output);
  const stopped = await local('build', '--config', await configFile('limited', config(output, unlimitedPaid.usd / 3)), '--local');
  assert.equal(stopped.code, 1, stopped.stdout + stopped.stderr);
  assert.ok(stopped.requests < unlimited.requests, `stopped early: ${stopped.requests} of ${unlimited.requests} requests`);
  const paid = await paidSpend(store, buildLayout(BUILD_ID));
  assert.equal(paid.requests, stopped.requests, 'the ledger counted every request answered');
  // The summary: the spend first, then what is kept and the command that goes on (not `resume`: its server is gone).
  assert.match(stopped.stdout, paidHeadline(paid));
  const kept = new RegExp(
    `^STOPPED: budget exhausted: \\$\\d+\\.\\d{4} of \\$\\d+\\.\\d{4} spent\\. The stage results the uncommitted shards paid for \\(\\$\\d+\\.\\d{4} of the spend\\) are kept in ` +
      `${path.join(output, BUILD_ID, '_work', 'samples')}/: raise llm\\.budget in the config, then run \`npx mmif build --config FILE --local\` again; it commits them`,
    'm',
  );
  assert.match(stopped.stdout, kept);
  assert.doesNotMatch(stopped.stdout, /mmif resume/);
  assert.match(stopped.stderr.trim().split('\n').at(-1)!, new RegExp(`^mmif: build ${BUILD_ID} failed: budget exhausted: `));

  // Status, with the server gone: the spend the ledger holds, not the committed shards' share.
  const before = await local('status', BUILD_ID);
  assert.equal(before.code, 1, before.stdout + before.stderr);
  assert.match(before.stdout, paidHeadline(paid));
  assert.match(before.stdout, /`npx mmif build --config FILE --local` again/);

  // Run again as the summary says: the same command with the budget raised.
  const rerun = await local('build', '--config', await configFile('limited', config(output, 1000)), '--local');
  assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr);
  assert.equal(stopped.requests + rerun.requests, unlimited.requests, `${stopped.requests} + ${rerun.requests} requests, unlimited ${unlimited.requests}: none paid twice`);
  const total = await paidSpend(store, buildLayout(BUILD_ID));
  assert.equal(total.requests, unlimited.requests);
  const after = await local('status', BUILD_ID);
  assert.equal(after.code, 0, after.stdout + after.stderr);
  assert.match(after.stdout, paidHeadline(total));
  // One cost table, one total: the closed run's last progress screen is not printed before the
  // summary, whose headline is the ledger's; the screens before it showed the spend as it grew.
  assert.doesNotMatch(rerun.stdout, new RegExp(`^${BUILD_ID} done`, 'm'));
  const summary = rerun.stdout.slice(rerun.stdout.indexOf(`build ${BUILD_ID}: COMPLETED`));
  assert.equal(summary.match(paidHeadline(total, 'gm'))?.length, 1, summary);
  assert.doesNotMatch(summary, /^ {2}(cost|forecast) \$/m, 'no second total beside it');
});

/**
 * `mmif reward serve` on a simulated six-source build: its rule verdicts on every record's answers
 * equal the build's recorded verdicts; for every DPO pair the chosen answer's reward is at least the
 * rejected one's and the rejected answer fails what the pair says it fails; judged constraints go to
 * the judge once per distinct response (a repeat is a cache hit, paid once); a judge that is down is
 * a 503 naming it; bad input is a 4xx with one line naming the item and the cause.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import { credited } from '../../domain/verdict.js';
import { groundTruthOf } from '../../domain/groundTruth.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { mixedSources, writeMixedSources } from '../fixtures/mixedSources.js';
import { closedPort } from '../harness/closedPort.js';
import { readRecords } from '../harness/quickstartData.js';
import { startRewardService, type RewardService } from '../harness/rewardService.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
let root: string;
let instruct: InstructRecord[] = [];
let dpo: DpoRecord[] = [];
let rules: RewardService;
const services: RewardService[] = [];

interface Scored {
  id: string;
  reward: number;
  constraints: Array<{ index: number; method: string; followed: boolean | null; vacuous?: boolean; detail: string }>;
}
type Rewards = { judge: string; items: Scored[]; error?: string };

before(async () => {
  stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-rewards' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-rewards-'));
  await writeMixedSources(dir);
  const config: BuildConfigInput = {
    buildId: 'rewards',
    seed: 3,
    output: path.join(dir, 'out'),
    sources: mixedSources(dir),
    maxSamples: 24,
    shardSize: 6,
    models: { default: { model: 'mmif-sim-vlm' } },
    // A judge that is down fails fast in the 503 test (the service calls with the build's llm settings).
    llm: { retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'rewards', args: [config] })) as BuildReport;
  assert.equal(report.shards.failed, 0);
  root = path.join(dir, 'out', 'rewards');
  instruct = await readRecords(root, 'instruct/sharegpt', instructRecordFromLine);
  dpo = await readRecords(root, 'dpo/sharegpt', dpoRecordFromLine);
  assert.ok(new Set(instruct.map((r) => r.source)).size >= 5, `records from most of the six sources: ${[...new Set(instruct.map((r) => r.source))].join(', ')}`);
  assert.ok(dpo.length > 0, 'the build made DPO pairs');
  rules = await startRewardService(['--data', root, '--no-judge']);
  services.push(rules);
});

after(async () => {
  for (const s of services) await s.stop();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the service binds 127.0.0.1 by default, answers /healthz, and with --no-judge says so in every reply', async () => {
  assert.match(rules.banner, /serving http:\/\/127\.0\.0\.1:\d+\//);
  const health = (await (await fetch(`${rules.url}/healthz`)).json()) as { ok: boolean; records: number; judge: string };
  assert.equal(health.ok, true);
  assert.equal(health.records, instruct.length + dpo.length);
  const { body } = await rules.post<Rewards>('/v1/rewards', { items: [{ id: instruct[0]!.id, response: instruct[0]!.answer }] });
  assert.match(body.judge, /^off \(--no-judge\)/);
  assert.ok(body.items[0]!.constraints.filter((c) => c.method !== 'rule').every((c) => c.followed === null));
});

test("on every record of the six-source build, the service's rule verdicts equal the build's recorded verdicts", async () => {
  const cases = [
    ...instruct.map((r) => ({ id: r.id, response: r.answer, verdicts: r.verdicts })),
    ...dpo.map((r) => ({ id: r.id, response: r.chosen, verdicts: r.verdicts })),
    ...dpo.map((r) => ({ id: r.id, response: r.rejected, verdicts: r.rejected_verdicts })),
  ];
  const { status, body } = await rules.post<Rewards>('/v1/rewards', { items: cases.map(({ id, response }) => ({ id, response })) });
  assert.equal(status, 200, body.error);
  let compared = 0;
  for (const [i, c] of cases.entries()) {
    for (const v of c.verdicts.filter((v) => v.method === 'rule')) {
      const got = body.items[i]!.constraints[v.index]!;
      assert.deepEqual([got.followed, got.vacuous], [credited(v, 'fail'), v.vacuous ?? false], `${c.id} constraint ${v.index} (${v.type}): ${got.detail} vs ${v.detail}`);
      compared++;
    }
  }
  assert.ok(compared > 50, `${compared} rule verdicts compared`);
});

test('for every DPO pair the chosen reward is at least the rejected one, and the rejected answer fails what the pair says it fails', async () => {
  const items = dpo.flatMap((r) => [
    { id: r.id, response: r.chosen },
    { id: r.id, response: r.rejected },
  ]);
  const { body } = await rules.post<Rewards>('/v1/rewards', { items });
  for (const [i, r] of dpo.entries()) {
    const [chosen, rejected] = [body.items[2 * i]!, body.items[2 * i + 1]!];
    assert.ok(chosen.reward >= rejected.reward, `${r.id}: chosen ${chosen.reward} < rejected ${rejected.reward}`);
    for (const v of r.rejected_verdicts.filter((v) => v.method === 'rule' && !credited(v, 'fail'))) {
      assert.equal(rejected.constraints[v.index]!.followed, false, `${r.id}: the rejected answer fails constraint ${v.index} (${v.type})`);
    }
  }
  // OpenRLHF's protocol gives the same rewards: query = prompt + response, labels = record ids.
  const queries = dpo.map((r) => ({ prompt: `<|user|>${r.prompt}<|assistant|>`, response: r.rejected, id: r.id }));
  const openrlhf = await rules.post<{ rewards: number[] }>('/get_reward', {
    query: queries.map((q) => q.prompt + q.response),
    prompts: queries.map((q) => q.prompt),
    labels: queries.map((q) => q.id),
  });
  assert.deepEqual(
    openrlhf.body.rewards,
    dpo.map((_, i) => body.items[2 * i + 1]!.reward),
  );
});

test("the service's compare-judge verdicts on the build's own accepted answers equal the build's recorded ones (same prompt, judge and answer without the constraint)", async () => {
  const judged = await startRewardService(['--data', root]);
  services.push(judged);
  assert.ok(judged.banner.includes(`judge ${stack.simulator.url}`), `the build's judge endpoint: ${judged.banner}`);
  const cases = [
    ...instruct.map((r) => ({ id: r.id, response: r.answer, verdicts: r.verdicts })),
    ...dpo.map((r) => ({ id: r.id, response: r.chosen, verdicts: r.verdicts })),
  ].filter((c) => c.verdicts.some((v) => v.method === 'compare_judge'));
  const { status, body } = await judged.post<Rewards>('/v1/rewards', { items: cases.map(({ id, response }) => ({ id, response })) });
  assert.equal(status, 200, body.error);
  let compared = 0;
  for (const [i, c] of cases.entries()) {
    for (const v of c.verdicts.filter((v) => v.method === 'compare_judge')) {
      const got = body.items[i]!.constraints[v.index]!;
      assert.equal(got.method, 'compare_judge');
      assert.match(got.detail, /^compare judge: /);
      assert.equal(got.followed, v.passed, `${c.id} constraint ${v.index} (${v.type}): ${got.detail} vs the build's ${v.detail}`);
      compared++;
    }
  }
  assert.ok(compared >= 5, `${compared} compare verdicts compared`);
  // A response other than the build's is weighed against the same answer without the constraint.
  const truth = groundTruthOf(
    instruct.find((r) => r.verdicts.some((v) => v.method === 'compare_judge'))!,
    'fail',
  );
  const compare = truth.constraints.find((c) => c.method === 'compare_judge')!;
  assert.ok(compare.method === 'compare_judge' && compare.without.length > 0, 'the ground truth carries the answer without the constraint');
});

test('bad input is a 4xx with one line naming the item and the cause; nothing in the batch is scored', async () => {
  const small = await startRewardService(['--data', root, '--no-judge', '--max-batch', '2', '--max-response-chars', '100']);
  services.push(small);
  const truth = groundTruthOf(instruct[0]!, 'fail');
  const cases: Array<[unknown, number, RegExp]> = [
    [
      {
        items: [
          { id: instruct[0]!.id, response: 'ok' },
          { id: 'no-such-record', response: 'x' },
        ],
      },
      404,
      /^item 1: unknown id 'no-such-record'/,
    ],
    [
      { items: [{ ground_truth: { ...truth, constraints: [{ type: 'x', text: 'y', method: 'rule', verifiers: [] }] }, response: 'x' }] },
      400,
      /^item 0: malformed ground truth: .*constraints/,
    ],
    [{ items: [{ ground_truth: '{not json', response: 'x' }] }, 400, /^item 0: malformed ground truth: not JSON/],
    [{ items: [{ id: instruct[0]!.id, response: 'x'.repeat(101) }] }, 413, /^item 0: response of 101 characters is over the cap of 100/],
    [{ items: [1, 2, 3].map(() => ({ id: instruct[0]!.id, response: 'x' })) }, 413, /^batch of 3 items is over the limit of 2/],
    [{ query: ['a'], labels: ['no-such-record'] }, 404, /^label 0: unknown id/],
  ];
  for (const [body, status, line] of cases) {
    const route = 'query' in (body as object) ? '/get_reward' : '/v1/rewards';
    const res = await small.post<{ error: string }>(route, body);
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.match(res.body.error, line);
    assert.ok(!res.body.error.includes('\n'), 'one line');
  }
  // An inline ground truth scores like the record's id.
  const inline = await small.post<Rewards>('/v1/rewards', { items: [{ ground_truth: JSON.stringify(truth), response: 'A short reply.' }] });
  const byId = await small.post<Rewards>('/v1/rewards', { items: [{ id: instruct[0]!.id, response: 'A short reply.' }] });
  assert.equal(inline.status, 200, inline.body.error);
  assert.deepEqual(inline.body.items[0]!.constraints, byId.body.items[0]!.constraints);
});

test('judged constraints go to the judge once per distinct response (a repeat is paid once); a judge that is down is a 503 naming it', async () => {
  const judged = await startRewardService(['--data', root, '--judge-model', 'mmif-sim-vlm', '--judge-base-url', stack.simulator.url, '--reward', 'vector']);
  services.push(judged);
  const record = instruct.find((r) => r.constraints.some((c) => c.method !== 'rule'))!;
  const before = stack.simulator.stats().requests;
  const response = `${record.answer}\n\nA fresh ending for the reward test.`;
  const first = await judged.post<Rewards>('/v1/rewards', { items: [{ id: record.id, response }] });
  assert.equal(first.status, 200, first.body.error);
  const paid = stack.simulator.stats().requests - before;
  assert.ok(paid >= 1, 'the judge was asked');
  const item = first.body.items[0]!;
  assert.ok(
    item.constraints.filter((c) => c.method !== 'rule').every((c) => typeof c.followed === 'boolean'),
    'every judged constraint is scored',
  );
  assert.deepEqual(
    item.reward,
    item.constraints.map((c) => (c.followed ? 1 : 0)),
  );
  const again = await judged.post<Rewards>('/v1/rewards', {
    items: [
      { id: record.id, response },
      { id: record.id, response },
    ],
  });
  assert.equal(stack.simulator.stats().requests - before, paid, 'a repeated response is not paid again');
  assert.deepEqual(again.body.items[1], first.body.items[0]);

  const port = await closedPort();
  const down = await startRewardService(['--data', root, '--judge-model', 'mmif-sim-vlm', '--judge-base-url', `http://127.0.0.1:${port}/v1`]);
  services.push(down);
  const res = await down.post<{ error: string }>('/v1/rewards', { items: [{ id: record.id, response: 'anything' }] });
  assert.equal(res.status, 503);
  assert.match(res.body.error, new RegExp(`^judge endpoint http://127\\.0\\.0\\.1:${port}/v1 \\(mmif-sim-vlm\\) is down`));
});

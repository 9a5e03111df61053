/**
 * The trainers' own call paths against `mmif reward serve` (opt-in: `npm run test:rl`, after
 * `tools/install.sh rl` puts torch, TRL and verl in tools/rl-venv; too large for `npm test`): TRL's
 * GRPOTrainer runs two steps on CPU with a tiny random policy built in the script, on a `rlvr` export
 * of the simulated quickstart build, rewarded through rewards/trl_reward.py; verl's loader loads
 * rewards/verl_reward.py, whose `compute_score` on the `verl` export gives the service's rewards; and
 * verl's own `RLHFDataset` loads the `verl` export through a Qwen2-VL processor built in the script;
 * and OpenRLHF's own remote reward client posts the `rlvr` rows to `/get_reward`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { InstructRecord } from '../../output/contracts/records.js';
import { instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { groundTruthOf, type GroundTruth } from '../../domain/groundTruth.js';
import { TOOLS_DIR } from '../../local/tools.js';
import { readRecords, simulatedMmif as mmif } from '../harness/quickstartData.js';
import { startRewardService, type RewardService } from '../harness/rewardService.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = `${TOOLS_DIR}rl-venv/bin/python`;
let dir: string;
let root: string;
let instruct: InstructRecord[] = [];
let service: RewardService;

async function python<T>(script: string, args: string[]): Promise<T> {
  const { stdout } = await run(PYTHON, [path.join(REPO, 'test/rl', script), ...args], {
    env: { ...process.env, MMIF_REWARD_URL: service.url, HF_DATASETS_CACHE: path.join(dir, 'hf') },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as T;
}

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-rl-'));
  await mmif('quickstart', '--out', dir);
  root = path.join(dir, 'quickstart-sim');
  instruct = await readRecords(root, 'instruct/sharegpt', instructRecordFromLine);
  for (const format of ['rlvr', 'verl']) await mmif('export', '--output', dir, '--build-id', 'quickstart-sim', '--format', format);
  service = await startRewardService(['--data', root, '--no-judge']);
});
after(async () => {
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("TRL's GRPOTrainer completes two steps on CPU, rewarded by the service through rewards/trl_reward.py", async () => {
  const out = await python<{ steps: number; rewards: number[][]; log: Array<Record<string, number>> }>('grpo_two_steps.py', [
    path.join(root, 'rlvr'),
    path.join(REPO, 'rewards'),
    path.join(dir, 'grpo'),
  ]);
  assert.equal(out.steps, 2);
  assert.equal(out.rewards.length, 2, 'one reward call per step');
  for (const batch of out.rewards) assert.ok(batch.length === 2 && batch.every((r) => r >= 0 && r <= 1), JSON.stringify(batch));
  assert.deepEqual(
    out.log.filter((l) => 'reward' in l).map((l) => l.reward),
    out.rewards.map((b) => (b[0]! + b[1]!) / 2).map((r) => Math.fround(r)),
    "the trainer's logged reward is the service's",
  );
});

test("verl's loader loads rewards/verl_reward.py, and compute_score gives the service's reward for each verl row", async () => {
  const answers = Object.fromEntries(instruct.map((r) => [r.id, r.answer]));
  const responses = path.join(dir, 'responses.json');
  await writeFile(responses, JSON.stringify(answers));
  const out = await python<{ ids: string[]; scores: number[] }>('verl_reward_check.py', [path.join(root, 'verl'), path.join(REPO, 'rewards/verl_reward.py'), responses]);
  const { body } = await service.post<{ items: Array<{ reward: number }> }>('/v1/rewards', { items: out.ids.map((id) => ({ id, response: answers[id] })) });
  assert.deepEqual(
    out.scores,
    body.items.map((i) => i.reward),
  );
  assert.equal(out.ids.length, instruct.length);
});

test("verl's own RLHFDataset loads the verl export: every row kept through its processor filter, with its image, prompt and ground truth", async () => {
  type Row = { id: string; data_source: string; parts: string[]; text: string; image_sizes: number[][]; ground_truth: GroundTruth; image_tokens: number };
  const out = await python<{ class: string; read: number; kept: number; rows: Row[] }>('verl_dataset_check.py', [path.join(root, 'verl'), path.join(dir, 'verl-cache')]);
  assert.equal(out.class, 'verl.utils.dataset.rl_dataset.RLHFDataset');
  assert.deepEqual([out.read, out.kept], [instruct.length, instruct.length], 'no row dropped by the filter (a row its processor cannot process is dropped as overlong)');
  assert.deepEqual(
    out.rows.map((r) => [r.id, r.data_source, r.parts, r.text, r.ground_truth]),
    instruct.map((r) => [r.id, `mmif/${r.source}`, ['image', 'text'], r.prompt, groundTruthOf(r, 'fail')]),
  );
  for (const r of out.rows) assert.ok(r.image_sizes.length === 1 && r.image_sizes[0]![0]! > 0 && r.image_tokens > 0, `${r.id}: one decoded image, expanded into image tokens`);
});

test("OpenRLHF's own remote reward client (--reward.remote_url) posts the rlvr rows' prompts and labels to /get_reward and reads back the service's rewards", async () => {
  // Half the responses the build's answers, half their first paragraph only: rewards that differ.
  const responses = Object.fromEntries(instruct.map((r, i) => [r.id, i % 2 === 0 ? r.answer : r.answer.split('\n\n')[0]!]));
  const file = path.join(dir, 'openrlhf-responses.json');
  await writeFile(file, JSON.stringify(responses));
  const out = await python<{ ids: string[]; labels_are_ground_truth: boolean; rewards: number[][]; scores: number[][] }>('openrlhf_reward_check.py', [
    path.join(root, 'rlvr'),
    file,
  ]);
  assert.deepEqual(
    out.ids,
    instruct.map((r) => r.id),
  );
  assert.ok(out.labels_are_ground_truth, "each label is the row's ground truth JSON (--data.label_key ground_truth)");
  const { body } = await service.post<{ items: Array<{ reward: number }> }>('/v1/rewards', { items: out.ids.map((id) => ({ id, response: responses[id] })) });
  const expected = body.items.map((i) => [i.reward]);
  assert.deepEqual(out.rewards, expected, 'the reward of the response alone: the query is the decoded prompt and response, the service drops the prompt');
  assert.deepEqual(out.scores, expected);
  assert.ok(new Set(expected.flat()).size > 1, `rewards that differ: ${JSON.stringify(expected)}`);
});

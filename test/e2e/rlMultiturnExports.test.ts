/**
 * A multiturn build's chats in the RL exports whose rows are conversations (issue 31): `rlvr` a prompt
 * row per turn with an instruction in force (the chat up to that turn's question, the turn's ground
 * truth), `verl` the same rows in verl's columns, `llamafactory-v1` a chat per SFT sample and a
 * turn-level pair per DPO sample, loaded by LLaMA-Factory's own v1 data engine. `mmif reward serve` on the build
 * takes each turn's id, and its verdicts on the build's own answers equal the turns' recorded verdicts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import { chatTurnId, chatTurnTruths, groundTruthSchema, type GroundTruth } from '../../domain/groundTruth.js';
import { credited } from '../../domain/verdict.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { ChatTurnRecord } from '../../output/contracts/records.js';
import { chatConversationFromLine, chatPairConversationFromLine, type ChatConversation, type ChatPairConversation } from '../../output/formats/chatFormats.js';
import { simulatedMmif as mmif } from '../harness/quickstartData.js';
import { startRewardService, type RewardService } from '../harness/rewardService.js';
import { startStack, type Stack } from '../harness/stack.js';
import { DATASETS_VENVS, runReader } from '../harness/trainerReaders.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_ID = 'mt-rl';
const python = DATASETS_VENVS.at(-1)!.python;

let stack: Stack;
let dir: string;
let root: string;
let chats: ChatConversation[] = [];
let pairs: ChatPairConversation[] = [];
/** Each chat's turns as recorded (verdicts, answers), by chat id. */
const turnsOf = new Map<string, ChatTurnRecord[]>();
let service: RewardService | undefined;

async function lines(folder: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of (await readdir(path.join(root, folder))).sort()) out.push(...(await readFile(path.join(root, folder, f), 'utf8')).split('\n').filter(Boolean));
  return out;
}

before(async () => {
  stack = await startStack({ simulator: { seed: 6 }, taskQueue: 'mmif-rl-multiturn' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-rl-multiturn-'));
  const config: BuildConfigInput = {
    buildId: BUILD_ID,
    seed: 4,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
    maxSamples: 6,
    shardSize: 3,
    mode: 'multiturn',
    chat: { turns: 4, maxInstructions: 2 },
    verification: { maxRegenerations: 8 },
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: BUILD_ID, args: [config] })) as BuildReport;
  assert.equal(report.shards.failed, 0);
  root = path.join(dir, 'out', BUILD_ID);
  const chatLines = await lines('chat/sharegpt');
  chats = chatLines.map(chatConversationFromLine);
  pairs = (await lines('chat-dpo/sharegpt')).map(chatPairConversationFromLine);
  for (const line of chatLines) {
    const row = JSON.parse(line) as { id: string; metadata: string };
    turnsOf.set(row.id, (JSON.parse(row.metadata) as { turns: ChatTurnRecord[] }).turns);
  }
  assert.ok(chats.length > 0 && pairs.length > 0, 'the build wrote chats and turn-level pairs');
});

after(async () => {
  await service?.stop();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type TurnRows = { ids: string[]; problems: string[]; ground_truths: GroundTruth[]; prompts: string[]; roles: string[][]; data_sources: string[] };

/**
 * Exports the build as `format` (verl or rlvr), reads it with test/readers/rl_check.py, and checks
 * what both share: a row per chat turn with an instruction in force, in order, with the turn's id and
 * ground truth and the chat's roles up to its question. Returns the rows and the turns they stand for.
 */
async function exportTurnRows(format: 'verl' | 'rlvr') {
  await mmif('export', '--output', path.join(dir, 'out'), '--build-id', BUILD_ID, '--format', format);
  const schemaFile = path.join(dir, `ground-truth-${format}.schema.json`);
  await writeFile(schemaFile, await mmif('schema', '--ground-truth'));
  const out = await runReader<TurnRows>(python, 'rl_check.py', [format, path.join(root, format), schemaFile], { HF_CACHE_DIR: path.join(dir, `hf-${format}`) });
  assert.deepEqual(out.problems, [], 'one image part per row for its one image (verl), every constraint listed (rlvr)');
  const expected = chats.flatMap((c) => chatTurnTruths(c, 'fail').map(({ turn, truth }) => ({ chat: c, index: c.turns.findIndex((t) => t.turn === turn), truth })));
  assert.ok(expected.length > chats.length, `more rows (${expected.length}) than chats (${chats.length}): one per turn`);
  assert.deepEqual(
    out.ids,
    expected.map((e) => e.truth.id),
  );
  assert.deepEqual(
    out.ground_truths,
    expected.map((e) => e.truth),
  );
  for (const truth of out.ground_truths) groundTruthSchema.parse(truth);
  assert.deepEqual(
    out.roles,
    expected.map((e) => ['system', ...Array.from({ length: e.index }, () => ['user', 'assistant']).flat(), 'user']),
  );
  return { out, expected };
}

test("--format rlvr: one prompt row per chat turn with an instruction in force, the chat up to its question, the turn's ground truth", async () => {
  const { out, expected } = await exportTurnRows('rlvr');
  assert.deepEqual(
    out.prompts,
    expected.map((e) => e.chat.exchanges[e.index]!.user),
    "the last message is the turn's user text",
  );
});

test("--format verl: the rlvr rows in verl's columns, the image placeholder in the chat's first user message", async () => {
  const { out, expected } = await exportTurnRows('verl');
  assert.deepEqual(
    out.prompts,
    expected.map((e) => [e.chat.system, ...e.chat.exchanges.slice(0, e.index).flatMap((x) => [x.user, x.answer ?? '']), e.chat.exchanges[e.index]!.user].join('')),
    'the chat up to the turn, as its answer was generated',
  );
  assert.ok(out.data_sources.every((s) => s.startsWith('mmif/')));
});

test("mmif reward serve on the multiturn build: each turn's id scores the build's answer as the turn's recorded verdicts say", async () => {
  service = await startRewardService(['--data', root, '--no-judge', '--reward', 'vector']);
  const cases = chats.flatMap((c) =>
    chatTurnTruths(c, 'fail').map(({ turn }) => {
      const recorded = turnsOf.get(c.id)!.find((t) => t.turn === turn)!;
      return { id: chatTurnId(c.id, turn), response: c.exchanges[c.turns.findIndex((t) => t.turn === turn)]!.answer!, verdicts: recorded.verdicts };
    }),
  );
  const { status, body } = await service.post<{ items: Array<{ reward: Array<number | null> }>; error?: string }>('/v1/rewards', {
    items: cases.map(({ id, response }) => ({ id, response })),
  });
  assert.equal(status, 200, body.error);
  for (const [i, c] of cases.entries()) {
    assert.deepEqual(
      body.items[i]!.reward,
      c.verdicts.map((v) => (credited(v, 'fail') ? 1 : 0)),
      c.id,
    );
  }
});

test("--format llamafactory-v1: chats and turn-level pairs load through LLaMA-Factory's v1 data engine, each with its turns' ground truth", async () => {
  await mmif('export', '--output', path.join(dir, 'out'), '--build-id', BUILD_ID, '--format', 'llamafactory-v1');
  const { stdout } = await promisify(execFile)(python, [path.join(REPO, 'test/readers/llamafactory_v1_load.py'), root, 'llamafactory-v1/sft.yaml', 'llamafactory-v1/dpo.yaml'], {
    cwd: root,
    env: { ...process.env, HF_DATASETS_CACHE: path.join(dir, 'hf-v1') },
    maxBuffer: 64 * 1024 * 1024,
  });
  type Loaded = { samples: number; problems: string[]; extra_info: Array<{ id: string; ground_truths?: unknown; ground_truth?: GroundTruth }>; texts: string[][] };
  const out = JSON.parse(stdout) as Record<string, Loaded>;
  const sft = out['llamafactory-v1/sft.yaml']!;
  const dpo = out['llamafactory-v1/dpo.yaml']!;
  assert.deepEqual([sft.problems, dpo.problems], [[], []]);
  assert.deepEqual(
    sft.extra_info,
    chats.map((c) => ({ id: c.id, ground_truths: chatTurnTruths(c, 'fail') })),
  );
  assert.deepEqual(
    sft.texts,
    chats.map((c) => [c.system, ...c.exchanges.flatMap((e) => [e.user, e.answer!])]),
  );
  assert.deepEqual(
    dpo.extra_info,
    pairs.map((p) => ({
      id: p.id,
      ground_truth: chatTurnTruths(
        chats.find((c) => c.id === p.chat_id)!,
        'fail',
      ).find((t) => t.turn === p.turn)!.truth,
    })),
  );
});

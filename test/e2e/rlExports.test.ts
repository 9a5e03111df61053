/**
 * The RL exports of a simulated build load in the readers they are named for: `verl` through the
 * code path of verl's RLHFDataset (test/readers/rl_check.py: verl itself needs torch, ray and a
 * rollout engine), `rlvr` as open-instruct's datasets rows, `llamafactory-v1` through LLaMA-Factory's
 * own v1 data engine (test/readers/llamafactory_v1_load.py). Every row carries the ground truth of
 * its record, derived from the record's planned constraints, valid against `mmif schema --ground-truth`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import { groundTruthOf, groundTruthSchema, type GroundTruth } from '../../domain/groundTruth.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { readRecords, simulatedMmif as mmif } from '../harness/quickstartData.js';
import { DATASETS_VENVS, runReader } from '../harness/trainerReaders.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSX = path.join(REPO, 'node_modules/.bin/tsx');
const CLI = path.join(REPO, 'cli/mmif.ts');
const BUILD_ID = 'quickstart-sim';
const python = DATASETS_VENVS.at(-1)!.python;

let dir: string;
let root: string;
let schemaFile: string;
let instruct: InstructRecord[] = [];
let dpo: DpoRecord[] = [];

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-rl-exports-'));
  await mmif('quickstart', '--out', dir);
  root = path.join(dir, BUILD_ID);
  instruct = await readRecords(root, 'instruct/sharegpt', instructRecordFromLine);
  dpo = await readRecords(root, 'dpo/sharegpt', dpoRecordFromLine);
  assert.ok(instruct.length > 0 && dpo.length > 0, 'the quickstart wrote SFT records and DPO pairs');
  schemaFile = path.join(dir, 'ground-truth.schema.json');
  await writeFile(schemaFile, await mmif('schema', '--ground-truth'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The ground truth each record should carry: the build's planned constraints, under its vacuous policy ('fail' by default). */
const expectedTruth = (r: InstructRecord | DpoRecord): GroundTruth => groundTruthOf(r, 'fail');

interface RlCheck {
  rows: number;
  columns: string[];
  ids: string[];
  prompts: string[];
  problems: string[];
  ground_truths: GroundTruth[];
  data_sources: string[];
  image_sizes: number[][][];
}

for (const [format, columns] of [
  ['verl', ['ability', 'data_source', 'extra_info', 'images', 'prompt', 'reward_model']],
  ['rlvr', ['constraint', 'constraint_type', 'dataset', 'ground_truth', 'id', 'images', 'messages']],
] as const) {
  test(`mmif export --format ${format}: every accepted SFT prompt with its image and ground truth, as its reader loads it`, async () => {
    const printed = await mmif('export', '--output', dir, '--build-id', BUILD_ID, '--format', format);
    assert.match(printed, new RegExp(`^${format}: ${instruct.length} rows`));
    const out = await runReader<RlCheck>(python, 'rl_check.py', [format, path.join(root, format), schemaFile], { HF_CACHE_DIR: path.join(dir, `hf-${format}`) });
    assert.deepEqual(out.columns, columns);
    assert.deepEqual(out.problems, []);
    assert.deepEqual(
      out.ids,
      instruct.map((r) => r.id),
    );
    assert.deepEqual(
      out.prompts,
      instruct.map((r) => r.prompt),
      'the training prompt, verbatim',
    );
    assert.deepEqual(out.ground_truths, instruct.map(expectedTruth));
    for (const truth of out.ground_truths) groundTruthSchema.parse(truth);
    assert.ok(
      out.ground_truths.some((t) => t.constraints.some((c) => c.method === 'rule')) && out.ground_truths.some((t) => t.constraints.some((c) => c.method !== 'rule')),
      'rule and judged constraints both appear',
    );
    assert.ok(
      out.ground_truths.some((t) => t.constraints.some((c) => c.method === 'compare_judge' && c.without.length > 0)),
      "compare-judged constraints carry the build's answer without them",
    );
    for (const sizes of out.image_sizes) assert.ok(sizes.length === 1 && sizes[0]![0]! > 0, 'one decoded image per row');
    if (format === 'verl')
      assert.deepEqual(
        out.data_sources,
        instruct.map((r) => `mmif/${r.source}`),
      );
  });
}

test("mmif export --format llamafactory-v1: SFT and DPO samples load through LLaMA-Factory's v1 data engine from their registration YAMLs", async () => {
  await mmif('export', '--output', dir, '--build-id', BUILD_ID, '--format', 'llamafactory-v1');
  const { stdout } = await promisify(execFile)(python, [path.join(REPO, 'test/readers/llamafactory_v1_load.py'), root, 'llamafactory-v1/sft.yaml', 'llamafactory-v1/dpo.yaml'], {
    cwd: root,
    env: { ...process.env, HF_DATASETS_CACHE: path.join(dir, 'hf-v1') },
    maxBuffer: 64 * 1024 * 1024,
  });
  type Loaded = { datasets: string[]; samples: number; problems: string[]; extra_info: Array<{ id: string; ground_truth: GroundTruth }>; texts: string[][] };
  const out = JSON.parse(stdout) as Record<string, Loaded>;
  const sft = out['llamafactory-v1/sft.yaml']!;
  const pairs = out['llamafactory-v1/dpo.yaml']!;
  assert.deepEqual([sft.datasets, pairs.datasets], [['mmif_instruct'], ['mmif_dpo']]);
  assert.deepEqual([sft.problems, pairs.problems], [[], []]);
  assert.deepEqual(
    sft.extra_info,
    instruct.map((r) => ({ id: r.id, ground_truth: expectedTruth(r) })),
  );
  assert.deepEqual(
    sft.texts,
    instruct.map((r) => [r.prompt, r.answer]),
  );
  assert.deepEqual(
    pairs.texts,
    dpo.map((r) => [r.prompt, r.chosen, r.prompt, r.rejected]),
  );
  assert.deepEqual(
    pairs.extra_info.map((e) => e.id),
    dpo.map((r) => r.id),
  );
});

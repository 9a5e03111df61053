/**
 * What `npm start` writes loads, unmodified, in the tools it is named for: LLaMA-Factory's reading
 * path under every `datasets` release it accepts (2.16.0 to 4.0.0) and the newest, TRL's vision
 * rows from `mmif export --format trl` through TRL's own collator steps, and an MM-IFEval held-out split
 * from `mmif export --format mmifeval` scored by the reference rule functions as the authors' scorer
 * calls them. `mmif inspect` names each sample's image.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout, MMIFEVAL_BENCH } from '../../storage/buildLayout.js';
import type { MmifevalLine } from '../../domain/mmifevalLine.js';
import type { InstructRecord, DpoRecord } from '../../output/contracts/records.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { readRecords, simulatedMmif as mmif } from '../harness/quickstartData.js';
import { DATASETS_VENVS, loadLikeLlamaFactory, runReader } from '../harness/trainerReaders.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSX = path.join(REPO, 'node_modules/.bin/tsx');
const CLI = path.join(REPO, 'cli/mmif.ts');
/** MM-IFEngine's released verifiers live beside the repository (read and run there, never copied). */
const REFERENCE_DIR = process.env.MMIF_REFERENCE_DIR ?? path.resolve(REPO, '../shared/reference');
const BUILD_ID = 'quickstart-sim';

let dir: string;
let root: string;
let instruct: InstructRecord[] = [];
let dpo: DpoRecord[] = [];

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-trainers-'));
  await mmif('quickstart', '--out', dir);
  root = path.join(dir, BUILD_ID);
  instruct = await readRecords(root, 'instruct/sharegpt', instructRecordFromLine);
  dpo = await readRecords(root, 'dpo/sharegpt', dpoRecordFromLine);
  assert.ok(instruct.length > 0 && dpo.length > 0, 'the quickstart wrote SFT records and DPO pairs');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('both datasets load through dataset_info.json as LLaMA-Factory reads it, under datasets 2.16.0, 3.6.0, 4.0.0 and the newest', async () => {
  const report = JSON.parse(await readFile(path.join(root, 'build-report.json'), 'utf8')) as BuildReport;
  for (const venv of DATASETS_VENVS) {
    const out = await loadLikeLlamaFactory(venv.python, root, path.join(dir, `hf-${venv.label}`));
    for (const [name, rows] of [
      ['mmif_instruct', report.counts.instruct],
      ['mmif_dpo', report.counts.dpo],
    ] as const) {
      const entry = out.entries[name]!;
      assert.equal(entry.error, undefined, `${venv.label} ${name}: ${entry.error}`);
      assert.equal(entry.rows, rows, `${venv.label} ${name}: every record of the build`);
      assert.deepEqual(entry.problems, [], `${venv.label} ${name}`);
    }
    assert.equal(out.entries.mmif_dpo!.attr.ranking, true);
  }
});

test("mmif inspect prints each sample's image path", async () => {
  for (const flag of [[], ['--dpo']]) {
    const stdout = await mmif('inspect', '--output', dir, '--build-id', BUILD_ID, '-n', '2', ...flag);
    assert.doesNotMatch(stdout, /undefined/);
    const records = flag.length ? dpo : instruct;
    for (const r of records.slice(0, 2)) assert.ok(stdout.includes(`${r.id}  (${r.source} ${r.source_id}, image ${r.image_path}`), stdout);
  }
});

test('mmif inspect reads the build, every committed shard in order; --shard N reads that shard only', async () => {
  const shard0 = (await readFile(path.join(dir, buildLayout(BUILD_ID).instructJsonl(0)), 'utf8')).split('\n').filter(Boolean).map(instructRecordFromLine);
  const idsIn = (stdout: string) => instruct.filter((r) => stdout.includes(`${r.id}  (`)).map((r) => r.id);
  const whole = await mmif('inspect', '--output', dir, '--build-id', BUILD_ID, '-n', String(instruct.length));
  assert.deepEqual(
    idsIn(whole),
    instruct.map((r) => r.id),
    'every record of every shard, in order',
  );
  assert.ok(shard0.length < instruct.length, 'the quickstart writes more than one shard');
  const one = await mmif('inspect', '--output', dir, '--build-id', BUILD_ID, '--shard', '0', '-n', String(instruct.length));
  assert.deepEqual(
    idsIn(one),
    shard0.map((r) => r.id),
  );
  const few = await mmif('inspect', '--output', dir, '--build-id', BUILD_ID, '-n', '1');
  assert.match(few, new RegExp(`^\\.\\.\\. ${instruct.length - 1} more records in the build \\(${instruct.length} in all\\)`, 'm'));
});

interface TrlSplit {
  rows: number;
  columns: string[];
  ids: string[];
  problems: string[];
  texts: string[][];
  image_sizes: number[][][];
}

test("mmif export --format trl writes rows that TRL's own vision collator steps accept (TRL 1.16, newest datasets)", async () => {
  await mmif('export', '--output', dir, '--build-id', BUILD_ID, '--format', 'trl');
  await assert.rejects(mmif('export', '--output', dir, '--build-id', 'no-such-build', '--format', 'trl'), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 3, 'exit code 3: no such build');
    assert.match(err.stderr, /no committed shard under .*no-such-build\/manifests\//);
    return true;
  });
  // TRL 1.16 needs datasets >= 4.7: it is installed (without torch) beside the newest datasets only.
  const venv = DATASETS_VENVS.at(-1)!;
  const out = await runReader<{ splits: Record<'sft' | 'dpo', TrlSplit> }>(venv.python, 'trl_check.py', [path.join(root, 'trl')], { HF_CACHE_DIR: path.join(dir, 'trl-cache') });
  const { sft, dpo: pairs } = out.splits;
  assert.deepEqual(sft.columns, ['id', 'images', 'messages']);
  assert.deepEqual(pairs.columns, ['chosen', 'id', 'images', 'prompt', 'rejected']);
  assert.deepEqual(sft.problems, []);
  assert.deepEqual(pairs.problems, []);
  assert.deepEqual(
    sft.ids,
    instruct.map((r) => r.id),
  );
  assert.deepEqual(
    sft.texts,
    instruct.map((r) => [r.prompt, r.answer]),
    'the training prompt and answer, verbatim',
  );
  assert.deepEqual(
    pairs.texts,
    dpo.map((r) => [r.prompt, r.chosen, r.rejected]),
  );
  for (const sizes of [...sft.image_sizes, ...pairs.image_sizes]) assert.ok(sizes.length === 1 && sizes[0]![0]! > 0, 'one decoded image per row');
});

test("mmif export --format mmifeval draws no split at export time; --all writes the reference evaluation's input, and the reference rule functions score it as our verifiers did", async (t) => {
  // A split drawn now would leave its samples in the training files: refused, naming the build-time way.
  for (const args of [[], ['--holdout', '0.3']]) {
    await assert.rejects(mmif('export', '--output', dir, '--build-id', BUILD_ID, '--format', 'mmifeval', ...args), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 2);
      assert.match(
        err.stderr,
        /reserved no eval split: one drawn at export time would leave its samples in the training files \(sharegpt, Parquet, TRL\) and the card's default config\. Build a new version with "holdout": \{"fraction": 0\.(05|3)\}/,
      );
      return true;
    });
  }
  assert.ok(!existsSync(path.join(root, 'MM-IFEval', 'train')), 'no second training set is written');
  await mmif('export', '--output', dir, '--build-id', BUILD_ID, '--format', 'mmifeval', '--all');
  const ids = JSON.parse(await readFile(path.join(root, 'MM-IFEval', `${MMIFEVAL_BENCH}.ids.json`), 'utf8')) as { trainingData?: boolean; reservedByBuild: boolean };
  assert.deepEqual([ids.trainingData, ids.reservedByBuild], [true, false], 'the ids file says these samples are the training data');
  const lines = (await readFile(path.join(root, 'MM-IFEval', `${MMIFEVAL_BENCH}.jsonl`), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MmifevalLine);
  const main = lines.filter((l) => l.infer_type === 'main');
  assert.deepEqual(
    main.map((l) => l.id),
    instruct.map((r) => r.id),
    'with --all every SFT sample is written',
  );
  assert.ok(
    main.some((l) => l.constraints.some((c) => c.judge.method === 'rule_based')),
    'the split has rule-checked constraints to score',
  );
  if (!existsSync(path.join(REFERENCE_DIR, 'function_and_compare.py'))) {
    t.skip(`the reference verifiers are not at ${REFERENCE_DIR} (set MMIF_REFERENCE_DIR)`);
    return;
  }
  const predictions = path.join(dir, 'predictions.json');
  await writeFile(predictions, JSON.stringify(Object.fromEntries(instruct.map((r) => [r.id, r.answer]))));
  const python = DATASETS_VENVS.at(-1)!.python; // the tools venv: nltk + python-dotenv for the reference module
  const out = await runReader<{ main: number; problems: string[]; rule_scores: Record<string, Record<string, number>> }>(python, 'mmifeval_score.py', [
    root,
    MMIFEVAL_BENCH,
    predictions,
    REFERENCE_DIR,
  ]);
  assert.deepEqual(out.problems, []);
  assert.equal(out.main, instruct.length);
  let scored = 0;
  for (const r of instruct) {
    for (const [key, score] of Object.entries(out.rule_scores[r.id]!)) {
      const index = r.constraints.findIndex((c) => c.type === key);
      assert.equal(score === 1, r.verdicts[index]!.passed, `${r.id} ${key}: the reference scorer and our verdict agree`);
      scored += 1;
    }
  }
  assert.ok(scored > 0);
});

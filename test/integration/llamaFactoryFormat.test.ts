/**
 * The sharegpt writer's rows load through LLaMA-Factory's own parser and converter under every
 * `datasets` release it accepts, even when the records differ in exactly the ways that broke Arrow's schema inference
 * (issue 9: `Column(/constraints/[]/verifiers/[]/params/[]) changed from number to array`): verifier
 * params that are numbers in one shard and lists in another, nulls beside strings, a pass rate of 1
 * beside 0.8, and an empty shard first.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { DpoRecord, InstructRecord } from '../../output/contracts/records.js';
import { dpoSharegptLine, instructRecordFromLine, instructSharegptLine, jsonl, llamaFactoryDatasetInfo } from '../../output/formats/sharegpt.js';
import { DATASETS_VENVS, loadLikeLlamaFactory } from '../harness/trainerReaders.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-llamafactory-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = (n: number) => String(n).padStart(2, '0').repeat(32);

function instruct(n: number, shape: 'numbers' | 'lists'): InstructRecord {
  const keywordCall = { func: 'check_whether_each_keyword_in_list_metioned_in_range', params: [['harbor', 'boat'], 1, 10000] };
  const countCall = { func: 'check_whether_response_paragraph_number_in_range', params: [3, 3] };
  return {
    id: `s${n}`,
    source: 'cc3m',
    source_id: `${n}`,
    license: 'CC3M terms',
    image_path: `images/${sha(n).slice(0, 2)}/${sha(n)}.jpg`,
    image_sha256: sha(n),
    image_origin: { file: `00000/${n}.jpg` },
    instruction: 'Describe the harbor.',
    instruction_origin: 'generated',
    original_instruction: shape === 'numbers' ? null : 'What is shown?',
    original_answer: shape === 'numbers' ? null : 'A harbor.',
    image_richness: shape === 'numbers' ? null : { scorer: 'statistic', score: 0.108, entropyBits: 2.85 },
    vision_dependent: null,
    constraints: [
      { type: 'paragraph_number', value: 'Write exactly 3 paragraphs.', method: 'rule', verifiers: [shape === 'numbers' ? countCall : keywordCall], selection: 'parser' },
      { type: 'tone_requirement', value: 'Use a calm tone.', method: 'compare_judge', verifiers: [], selection: 'none' },
    ],
    prompt: 'Describe the harbor. Write exactly 3 paragraphs. Use a calm tone.',
    prompt_template: 'inline',
    generation_prompt: '## Task Description\nDescribe the harbor.',
    answer: 'One.\n\nTwo.\n\nThree.',
    verdicts: [
      { index: 0, type: 'paragraph_number', method: 'rule', passed: true, calls: [shape === 'numbers' ? countCall : keywordCall], detail: 'rule' },
      { index: 1, type: 'tone_requirement', method: 'compare_judge', passed: shape === 'lists', judgeModel: 'judge', detail: 'judge' },
    ],
    pass_rate: shape === 'numbers' ? 1 : 0.8,
    answer_attempts: 1,
    models: { instruction: 'm', constraints: 'm', compatibility: 'm', verifier: 'm', answer: 'm', judge: 'm' },
    simulated: true,
  };
}

function pair(n: number, shape: 'numbers' | 'lists'): DpoRecord {
  const { answer, models: _models, answer_attempts: _attempts, ...shared } = instruct(n, shape);
  return {
    ...shared,
    id: `s${n}-dpo`,
    sample_id: `s${n}`,
    chosen: answer,
    rejected: 'One paragraph only.',
    rejected_prompt: '## Task Description\nDescribe the harbor.',
    dropped_constraints: [{ type: 'paragraph_number', value: 'Write exactly 3 paragraphs.' }],
    strategy: 'drop33',
    rejected_verdicts: [{ index: 0, type: 'paragraph_number', method: 'rule', passed: false, calls: [], detail: 'rule' }],
    chosen_model: 'm',
    rejected_model: 'weak',
    pair_validation: 'strict',
    rejected_attempts: 1,
    pair_rule_rejections: shape === 'numbers' ? {} : { 'chosen-loses:check_whether_response_paragraph_number_in_range': 1 },
  };
}

async function writeDataset(root: string, shards: { instruct: InstructRecord[]; dpo: DpoRecord[] }[]): Promise<void> {
  for (const sub of ['instruct/sharegpt', 'dpo/sharegpt']) await mkdir(path.join(root, sub), { recursive: true });
  for (const [i, shard] of shards.entries()) {
    const name = `shard-${String(i).padStart(5, '0')}.jsonl`;
    await writeFile(path.join(root, 'instruct/sharegpt', name), jsonl(shard.instruct.map(instructSharegptLine)));
    await writeFile(path.join(root, 'dpo/sharegpt', name), jsonl(shard.dpo.map(dpoSharegptLine)));
    for (const r of shard.instruct) {
      await mkdir(path.dirname(path.join(root, r.image_path)), { recursive: true });
      await writeFile(path.join(root, r.image_path), 'jpeg bytes are not read by the loader');
    }
  }
  await writeFile(path.join(root, 'dataset_info.json'), JSON.stringify(llamaFactoryDatasetInfo()));
}

test('rows whose metadata varies in shape load through dataset_info.json under every datasets release LLaMA-Factory accepts', async () => {
  const root = path.join(dir, 'varied');
  await writeDataset(root, [
    { instruct: [], dpo: [] },
    { instruct: [instruct(1, 'numbers'), instruct(2, 'numbers')], dpo: [pair(1, 'numbers')] },
    { instruct: [instruct(3, 'lists')], dpo: [pair(3, 'lists')] },
  ]);
  for (const venv of DATASETS_VENVS) {
    const out = await loadLikeLlamaFactory(venv.python, root, path.join(dir, `cache-${venv.label}`));
    const sft = out.entries.mmif_instruct!;
    const dpo = out.entries.mmif_dpo!;
    assert.equal(sft.error, undefined, `${venv.label}: ${sft.error}`);
    assert.equal(dpo.error, undefined, `${venv.label}: ${dpo.error}`);
    assert.deepEqual(sft.ids.sort(), ['s1', 's2', 's3'], venv.label);
    assert.deepEqual(dpo.ids.sort(), ['s1-dpo', 's3-dpo'], venv.label);
    assert.deepEqual(sft.problems, [], venv.label);
    assert.deepEqual(dpo.problems, [], venv.label);
    assert.equal(dpo.attr.ranking, true);
    assert.deepEqual(dpo.responses, [2, 2], `${venv.label}: LLaMA-Factory's converter made each row a chosen/rejected pair`);
    assert.ok(sft.metadata_keys.includes('constraints') && sft.metadata_keys.includes('verdicts'), `${venv.label}: the record's constraints travel in metadata`);
    assert.ok(dpo.metadata_keys.includes('dropped_constraints'));
  }
});

test('the check fails on rows LLaMA-Factory would refuse', async () => {
  // A stray <image> in an answer (two placeholders for one image), an image that is not there, and
  // turns in the wrong order (LLaMA-Factory's converter logs and skips such a row).
  const root = path.join(dir, 'broken');
  const strayToken = { ...instruct(4, 'numbers'), answer: 'See <image> above.' };
  const noImage = instruct(5, 'numbers');
  await writeDataset(root, [{ instruct: [strayToken, noImage], dpo: [] }]);
  await rm(path.join(root, noImage.image_path));
  const swapped = JSON.parse(instructSharegptLine(instruct(6, 'numbers'))) as { conversations: unknown[] };
  swapped.conversations.reverse();
  await writeFile(path.join(root, 'instruct/sharegpt/shard-00001.jsonl'), jsonl([JSON.stringify(swapped)]));
  const venv = DATASETS_VENVS[0]!;
  const out = await loadLikeLlamaFactory(venv.python, root, path.join(dir, 'cache-broken'));
  // Row numbers follow the directory listing LLaMA-Factory reads (unsorted): compare without them.
  assert.deepEqual(out.entries.mmif_instruct!.problems.map((p) => p.replace(/^row \d+ /, '')).sort(), [
    '(s4): 2 <image> placeholders for 1 images',
    `(s5): image ${noImage.image_path} is not a file under dataset_dir`,
    "(s6): LLaMA-Factory's converter found the row abnormal and skipped it",
  ]);
});

test('a sharegpt line gives back the record it was written from', () => {
  const record = instruct(5, 'lists');
  assert.deepEqual(instructRecordFromLine(instructSharegptLine(record)), record);
});

/**
 * Record assembly: the training prompt is written in the configured template while the generation
 * prompt is kept beside it; calls are written as MM-IFEval's scorer names them; a text holding the
 * literal `<image>` cannot become a training row and is rejected with its reason; Parquet keeps the
 * nested fields under the record's own names.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import type { SourceSample } from '../../domain/sample.js';
import { dpoParquet, instructParquet } from '../../output/formats/parquet.js';
import { assembleSample } from '../../output/commit/records.js';
import type { SampleStates } from '../../output/contracts/records.js';
import { readParquetWithPython } from '../harness/pythonReader.js';
import { needs } from '../harness/tier.js';
import { DATASETS_VENVS } from '../harness/trainerReaders.js';
import { answerPromptText } from '../../prompts/answerPrompt.js';
import type { StageName } from '../../domain/stages.js';
import type { PlannedConstraint, StageResults, StageState } from '../../pipeline/stageState.js';

const sample: SourceSample = { sampleId: 'cc3m-1', source: 'cc3m', sourceId: '1', licenseNote: 'CC3M terms', image: { sourceIndex: 0, key: '1.jpg' } };
const constraints: PlannedConstraint[] = [
  // Chosen under the Table 7 alias: written out under the reference spelling.
  {
    type: 'mention',
    value: "Mention 'harbor' at least twice.",
    method: 'rule',
    verifiers: [{ func: 'check_whether_keywords_mentioned_in_range', params: [['harbor'], 2, 10000] }],
    selection: 'parser',
  },
  { type: 'tone_requirement', value: 'Use a calm tone.', method: 'compare_judge', verifiers: [], selection: 'none', selectionNote: 'model choice refused: no such function' },
];
const instruction = 'Describe the harbor.';

function ok<S extends StageName>(stage: S, result: StageResults[S]): StageState<S> {
  return { status: 'ok', stage, result, calls: [] } as StageState<S>;
}

function states(answer = 'The harbor is calm. The harbor sleeps.', rejectedAnswer = 'A quiet scene.'): SampleStates {
  const verdicts = [
    { index: 0, type: 'mention', method: 'rule' as const, passed: true, calls: constraints[0]!.verifiers, detail: 'rule' },
    { index: 1, type: 'tone_requirement', method: 'compare_judge' as const, passed: true, judgeModel: 'judge', detail: 'judge' },
  ];
  return {
    image: ok('image', { sha256: 'ab'.repeat(32), width: 640, height: 480, originalWidth: 640, originalHeight: 480 }),
    instruction: ok('instruction', { instruction, origin: 'generated', candidates: [instruction], examples: [] }),
    constraints: ok('constraints', { instructionKind: 'open', offeredTypes: [], proposed: constraints, constraints, removed: [], trimmed: [] }),
    answer: ok('answer', { prompt: answerPromptText(instruction, constraints), answer, model: 'vlm', verdicts, passRate: 1, attempts: 1 }),
    rejected: ok('rejected', {
      prompt: answerPromptText(instruction, constraints.slice(1)),
      answer: rejectedAnswer,
      model: 'weak',
      verdicts: [{ ...verdicts[0]!, passed: false }],
      passRate: 0,
      attempts: 1,
      strategy: 'drop33',
      kept: constraints.slice(1),
      dropped: constraints.slice(0, 1),
      atStake: [0],
      validation: 'strict',
      ruleRejections: {},
    }),
  };
}

test('inline: the user turn is make_prompt_v2 and the generation prompt stays numbered', () => {
  const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
  const inline = "Describe the harbor. Mention 'harbor' at least twice. Use a calm tone.";
  assert.equal(instruct!.prompt, inline);
  assert.equal(instruct!.prompt_template, 'inline');
  assert.equal(instruct!.generation_prompt, answerPromptText(instruction, constraints));
  assert.equal(dpo!.prompt, inline, 'the pair is trained on the same user turn');
  assert.equal(dpo!.rejected_prompt, answerPromptText(instruction, constraints.slice(1)));
  assert.deepEqual(
    instruct!.constraints.map((c) => c.type),
    ['mention', 'tone_requirement'],
    'the record keeps the constraint list',
  );
});

test('numbered writes the generation form; mixed records the form each sample drew', () => {
  const numbered = assembleSample(sample, states(), { template: 'numbered', seed: 0 }).instruct!;
  assert.equal(numbered.prompt, answerPromptText(instruction, constraints));
  assert.equal(numbered.prompt_template, 'numbered');
  const drawn = [0, 1, 2, 3, 4, 5, 6, 7].map((seed) => assembleSample(sample, states(), { template: 'mixed', seed }).instruct!);
  assert.deepEqual(new Set(drawn.map((r) => r.prompt_template)), new Set(['inline', 'numbered']));
  for (const r of drawn)
    assert.equal(r.prompt, r.prompt_template === 'inline' ? "Describe the harbor. Mention 'harbor' at least twice. Use a calm tone." : answerPromptText(instruction, constraints));
});

test("calls are written under the scorer's spelling, in constraints and verdicts alike", () => {
  const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
  const reference = 'check_whether_each_keyword_in_list_metioned_in_range';
  assert.equal(instruct!.constraints[0]!.verifiers[0]!.func, reference);
  assert.equal(instruct!.verdicts[0]!.calls![0]!.func, reference);
  assert.equal(dpo!.rejected_verdicts[0]!.calls![0]!.func, reference);
});

test('a literal <image> in an answer rejects the sample, in a rejected answer the pair, naming the field', () => {
  const sampleReject = assembleSample(sample, states('See <image> here.'), { template: 'inline', seed: 0 });
  assert.equal(sampleReject.instruct, undefined);
  assert.equal(sampleReject.reject!.kind, 'sample');
  assert.match(sampleReject.reject!.reason, /^image-token-in-text: the answer contains the literal <image>/);
  const pairReject = assembleSample(sample, states(undefined, 'Look: <image>'), { template: 'inline', seed: 0 });
  assert.ok(pairReject.instruct && !pairReject.dpo);
  assert.equal(pairReject.reject!.kind, 'pair');
  assert.match(pairReject.reject!.reason, /^image-token-in-text: the rejected answer contains/);
});

test(
  "Parquet stores nested constraints and verdicts under the record's field names, and its image decodes in datasets 2.16 to the newest",
  needs("LLaMA-Factory's datasets venvs (tools/datasets-*)"),
  async () => {
    const { instruct, dpo } = assembleSample(sample, states(), { template: 'inline', seed: 0 });
    const jpeg = await sharp({ create: { width: 4, height: 3, channels: 3, background: 'gray' } })
      .jpeg()
      .toBuffer();
    const dir = await mkdtemp(path.join(tmpdir(), 'mmif-records-'));
    try {
      const files = [path.join(dir, 'instruct.parquet'), path.join(dir, 'dpo.parquet')];
      await writeFile(files[0]!, await instructParquet([instruct!], () => jpeg));
      await writeFile(files[1]!, await dpoParquet([dpo!], () => jpeg));
      const [sft, pair] = await readParquetWithPython(files, path.join(dir, 'hf-cache'));
      // Parquet has no "absent": an optional field the record leaves out reads as null.
      const withNulls = <T extends object>(rows: readonly T[], keys: string[]) => rows.map((r) => ({ ...Object.fromEntries(keys.map((k) => [k, null])), ...r }));
      for (const [file, record] of [
        [sft!, instruct!],
        [pair!, dpo!],
      ] as const) {
        assert.deepEqual(file.rows[0]!.constraints, withNulls(record.constraints, ['selectionNote']));
        assert.deepEqual(
          file.rows[0]!.verdicts,
          withNulls(record.verdicts, ['judgeModel', 'calls', 'judgeAudit', 'vacuous']).map((v) => ({ ...v, calls: v.calls ?? [] })),
        );
      }
      assert.equal(sft!.rows[0]!.constraints[1]!.selectionNote, 'model choice refused: no such function');
      // Every datasets release the trainers use decodes the image column without a cast.
      for (const venv of DATASETS_VENVS) {
        for (const file of await readParquetWithPython(files, path.join(dir, `hf-${venv.label}`), venv.python)) {
          assert.equal(file.hf_features.image, 'Image', `${venv.label}: ${file.path}`);
          assert.deepEqual(file.rows[0]!.decoded_image, { mode: 'RGB', size: [4, 3] }, venv.label);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

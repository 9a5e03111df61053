/**
 * What a user finds beside the data, from a real build (Temporal dev server, worker, simulator over
 * HTTP): the dataset card opened by Hugging Face `datasets` and `huggingface_hub` (tools venv), and
 * the quality report checked against the records the build wrote.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/buildReport.js';
import { CARD_FEATURES } from '../../output/datasetCard.js';
import { buildLayout } from '../../output/layout.js';
import type { QualityReport } from '../../output/qualityReport.js';
import type { DpoRecord, InstructRecord } from '../../output/records.js';
import { dpoRecordFromLine, instructRecordFromLine } from '../../output/sharegpt.js';
import { wordCount } from '../../output/qualityStats.js';
import { LocalStore } from '../../storage/localStore.js';
import { runReader } from '../harness/trainerReaders.js';
import { TOOLS_DIR } from '../../local/tools.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;
let root: string;
let report: BuildReport;
let quality: QualityReport;
const instruct: InstructRecord[] = [];
const pairs: DpoRecord[] = [];

before(async () => {
  stack = await startStack({ simulator: { seed: 5, faults: { complianceRate: 0.7 } }, taskQueue: 'mmif-docs' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-docs-'));
  const buildId = 'docs';
  const store = new LocalStore(path.join(dir, 'out'));
  const input: BuildConfigInput = {
    buildId,
    seed: 11,
    output: store.root,
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
    maxSamples: 10,
    shardSize: 5,
    sliceSize: 5,
    dpo: { strategies: ['drop33', 'drop100', 'no_image'] },
    // Every rule-checked constraint is also judged, so the agreement table has figures to check.
    verification: { judgeAgreementSample: 1 },
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
  };
  report = await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [input] });
  root = path.join(store.root, buildId);
  const layout = buildLayout(buildId);
  quality = JSON.parse(await readFile(path.join(store.root, layout.quality), 'utf8')) as QualityReport;
  const lines = async (key: string) => (await readFile(path.join(store.root, key), 'utf8')).split('\n').filter(Boolean);
  for (let shard = 0; shard < report.shards.planned; shard++) {
    instruct.push(...(await lines(layout.instructJsonl(shard))).map(instructRecordFromLine));
    pairs.push(...(await lines(layout.dpoJsonl(shard))).map(dpoRecordFromLine));
  }
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('load_dataset(<dataset root>) finds the instruct and dpo configs from the card, and huggingface_hub reads its metadata', async () => {
  assert.ok(report.counts.instruct > 0 && report.counts.dpo > 0, `the build kept records: ${JSON.stringify(report.counts)}`);
  const seen = await runReader<{
    config_names: string[];
    instruct: { rows: number; columns: string[]; image_feature: string; image_size: number[] };
    dpo: { rows: number; columns: string[]; image_feature: string };
    default: { rows: number; columns: string[] };
    card_data: Record<string, unknown>;
  }>(`${TOOLS_DIR}venv/bin/python`, 'card_check.py', [root], { HF_CACHE_DIR: path.join(dir, 'hf-cache') });
  assert.deepEqual([...seen.config_names].sort(), ['dpo', 'instruct'], 'both configs discovered without arguments');
  assert.equal(seen.instruct.rows, report.counts.instruct);
  assert.equal(seen.dpo.rows, report.counts.dpo);
  assert.equal(seen.instruct.image_feature, 'Image');
  assert.equal(seen.dpo.image_feature, 'Image');
  assert.ok(seen.instruct.image_size[0]! > 0);
  assert.equal(seen.default.rows, report.counts.instruct, 'the default config is instruct');
  for (const [config, features] of Object.entries(CARD_FEATURES)) {
    const columns = seen[config as 'instruct' | 'dpo'].columns;
    for (const [column] of features) assert.ok(columns.includes(column), `the card describes ${config}.${column}, which the data has`);
  }
  const card = seen.card_data;
  assert.equal(card.license, 'other');
  assert.deepEqual(card.task_categories, ['image-text-to-text', 'visual-question-answering']);
  assert.deepEqual(card.size_categories, ['n<1K']);
  assert.ok((card.tags as string[]).includes('simulated'));
});

test('the card states at the top that the data is simulated, and carries the build facts', async () => {
  const text = await readFile(path.join(root, 'README.md'), 'utf8');
  const bodyStart = text.indexOf('\n---\n', 4) + 5;
  const firstLines = text.slice(bodyStart).split('\n').filter(Boolean).slice(0, 3).join('\n');
  assert.match(firstLines, /SIMULATED DATA — NOT FOR TRAINING/);
  assert.match(text, new RegExp(`Config fingerprint: \`${report.configFingerprint}\``));
  assert.match(text, /- Seed: 11\n/);
  assert.match(text, /\| answer \| `mmif-sim-vlm` \|/);
  assert.match(text, /\| rejected \| `mmif-sim-vlm-mini` \|/);
  assert.match(text, /\| cc3m \| \d+ \| \d+ \| \d+ \| \d+ \| CC3M: images owned by their original publishers/);
  assert.match(text, /### Judge vs rule/);
});

test('quality.json: composition and lengths match the written records', () => {
  assert.equal(quality.simulated, true);
  assert.equal(quality.coverage.shardsWithStats, report.shards.committed);
  assert.deepEqual(quality.composition.bySource.cc3m, {
    instruct: report.counts.instruct,
    dpo: report.counts.dpo,
    rejectedSamples: report.counts.rejectedSamples,
    rejectedPairs: report.counts.rejectedPairs,
  });
  const types: Record<string, number> = {};
  for (const r of instruct) for (const c of r.constraints) types[c.type] = (types[c.type] ?? 0) + 1;
  assert.deepEqual(quality.composition.constraintTypes, types);
  const total = (tally: Record<string, number>) => Object.values(tally).reduce((a, b) => a + b, 0);
  assert.equal(total(quality.composition.categories), total(types));
  assert.equal(total(quality.composition.wildIfEvalClasses), total(types));
  const words = instruct.map((r) => wordCount(r.answer));
  assert.equal(quality.lengths.answerWords.summary!.count, instruct.length);
  assert.equal(quality.lengths.answerWords.summary!.max, Math.max(...words));
  assert.equal(total(quality.lengths.answerWords.histogram), instruct.length);
  assert.equal(quality.lengths.rejectedWords.summary!.max, Math.max(...pairs.map((p) => wordCount(p.rejected))));
  assert.deepEqual(quality.rejections.byStage, report.rejectsByStage);
  assert.equal(total(quality.rejections.byReason), report.counts.rejectedSamples + report.counts.rejectedPairs);
});

test('quality.json: final-answer pass rates cover the accepted verdicts; the judge-vs-rule sample covers every rule verdict', () => {
  // Final answers of accepted samples are a subset of all final answers (rejected ones add theirs).
  for (const r of instruct) for (const v of r.verdicts) assert.ok(quality.passRates[v.type], `pass rate for ${v.type}`);
  const acceptedRule = instruct.flatMap((r) => r.verdicts.filter((v) => v.method === 'rule'));
  assert.ok(acceptedRule.length > 0);
  for (const v of acceptedRule) assert.ok(v.judgeAudit, `with judgeAgreementSample 1 every rule verdict is audited (${v.type})`);
  const auditedAccepted = acceptedRule.length;
  assert.ok(quality.judgeAgreement.total.audited >= auditedAccepted, 'chosen, regenerated and rejected answers are all counted');
  const t = quality.judgeAgreement.total;
  assert.equal(t.bothPassed + t.bothFailed + t.judgePassedRuleFailed + t.judgeFailedRulePassed + t.unscored, t.audited);
  for (const [type, a] of Object.entries(quality.judgeAgreement.byType)) {
    assert.ok(['keep-judge', 'second-judge', 'require-rule', 'too-few-samples'].includes(a.advice), type);
    if (a.judgePassesRuleFailsRate !== null) assert.equal(a.judgePassesRuleFailsRate, a.judgePassedRuleFailed / (a.judgePassedRuleFailed + a.bothFailed));
  }
  // Every answer attempt is verified on all its constraints: first and final answers count the same verdicts.
  for (const [type, p] of Object.entries(quality.passRates)) assert.equal(p.firstAnswer.total, p.finalAnswer.total, type);
  const kept = Object.values(quality.dpo.strategyMix).reduce((n, s) => n + s.kept, 0);
  assert.equal(kept, report.counts.dpo);
  for (const s of Object.keys(quality.dpo.atStakeFailureRates)) assert.ok(['drop33', 'drop100', 'no_image'].includes(s));
});

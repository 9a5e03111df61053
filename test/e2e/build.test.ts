/**
 * The foundation's end-to-end test: a real Temporal dev server, a real S3-compatible server
 * (versitygw) on 127.0.0.1 and the simulator over HTTP. A CC3M webdataset on S3 is built into
 * MM-IFInstruct and MM-IFDPO shards on S3; every output object is read back and checked, and the
 * Parquet files are read by pyarrow and Hugging Face `datasets`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { WorkflowFailedError } from '@temporalio/client';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import { normalizeImage } from '../../image/normalize.js';
import { sha256Hex } from '../../domain/hashing.js';
import type { DpoRecord, InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { writtenFunctionName } from '../../verification/functions.js';
import { exportMmifeval, exportTrl } from '../../output/formats/export.js';
import { dpoRecordFromLine, instructRecordFromLine, type DpoSharegptRow, type InstructSharegptRow } from '../../output/formats/sharegpt.js';
import type { SourceSample } from '../../domain/sample.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { reasonCode } from '../../config/rejectionReasons.js';
import type { ShardManifest } from '../../output/contracts/manifest.js';
import { runVerifierCall } from '../../verification/functions.js';
import { getJson, type ObjectStore } from '../../storage/objectStore.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { readParquetWithPython } from '../harness/pythonReader.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';

let s3: S3Server;
let s3Options: S3Options;
let stack: Stack;
let out: ObjectStore;
let tmp: string;
const BUILD_ID = 'e2e-build';

before(async () => {
  [s3, stack] = await Promise.all([startS3Server(), startStack({ simulator: { seed: 11, faults: { complianceRate: 0.7 } } })]);
  s3Options = useS3Env(s3);
  // 3 tar shards x 4 records, one of which has a broken .json sidecar: 11 usable samples.
  await writeCc3m(openStore(`s3://${s3.bucket}/cc3m`, s3Options), 'webdataset', { perShard: 4, shards: 3, brokenJson: '000010001' });
  out = openStore(`s3://${s3.bucket}/out`, s3Options);
  tmp = await mkdtemp(path.join(tmpdir(), 'mmif-e2e-'));
});

after(async () => {
  await stack?.stop();
  await s3?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function config(overrides: Partial<BuildConfigInput> = {}): BuildConfigInput {
  return {
    buildId: BUILD_ID,
    seed: 5,
    output: `s3://${s3.bucket}/out`,
    s3: s3Options,
    sources: [{ type: 'cc3m', uri: `s3://${s3.bucket}/cc3m` }],
    maxSamples: 100,
    shardSize: 4,
    sliceSize: 3,
    image: { minShortSide: 100 },
    // Strict: an answer missing any constraint is generated again, so regeneration runs whatever the
    // simulator's seeded answers are (at the default 0.8 a run of lucky seeds needs none).
    verification: { passThreshold: 1 },
    models: { default: { model: 'mmif-sim-vlm' }, rejected: { model: 'mmif-sim-vlm-mini' } },
    ...overrides,
  };
}

async function runBuild(workflowId: string, input: unknown): Promise<BuildReport> {
  return stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId, args: [input] });
}

const lines = <T>(body: Buffer | undefined): T[] =>
  (body ?? Buffer.alloc(0))
    .toString()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);

test('a CC3M webdataset on S3 becomes verified SFT and DPO shards on S3', async () => {
  const report = await runBuild(BUILD_ID, config());
  const layout = buildLayout(BUILD_ID);

  assert.equal(report.shards.planned, 3);
  assert.equal(report.shards.committed, 3);
  assert.equal(report.shards.failed, 0);
  assert.equal(report.simulated, true);
  assert.equal(report.counts.planned, 11);
  assert.equal(report.models.rejected, 'mmif-sim-vlm-mini');
  assert.match((await out.get(layout.sourceProblems))!.toString(), /000010001/);
  // 12 records: 11 samples and the broken sidecar, a problem; every one in exactly one term.
  await assertAccounting(out, report, { 0: 12 });
  assert.deepEqual(report.accounting[0]!.problems, { 'bad-sidecar': 1 });

  const planned: SourceSample[] = [];
  const instruct: InstructRecord[] = [];
  const dpo: DpoRecord[] = [];
  const rejects: RejectRecord[] = [];
  const parquetFiles: string[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    planned.push(...(await getJson<SourceSample[]>(out, layout.shardPlan(shard)))!);
    const manifest = (await getJson<ShardManifest>(out, layout.manifest(shard)))!;
    assert.equal(manifest.configFingerprint, report.configFingerprint);
    assert.equal(manifest.files.length, 5);
    for (const file of manifest.files) {
      const body = await out.get(`${layout.root}/${file.path}`);
      assert.ok(body, `${file.path} listed in the manifest must exist`);
      assert.equal(sha256Hex(body), file.sha256, `checksum of ${file.path}`);
      assert.equal(body.length, file.bytes);
      if (file.path.endsWith('.parquet')) {
        const local = path.join(tmp, file.path.replaceAll('/', '_'));
        await writeFile(local, body);
        parquetFiles.push(local);
      } else {
        assert.equal(lines(body).length, file.rows, `rows of ${file.path}`);
      }
    }
    // The sharegpt rows: training columns, and the rest of the record as JSON text (output/formats/sharegpt.ts).
    for (const line of lines<InstructSharegptRow>(await out.get(layout.instructJsonl(shard)))) {
      assert.deepEqual(Object.keys(line).sort(), ['conversations', 'id', 'images', 'metadata']);
      assert.deepEqual(
        line.conversations.map((t) => t.from),
        ['human', 'gpt'],
      );
      assert.match(line.images[0], /^images\/[0-9a-f]{2}\/[0-9a-f]{64}\.jpg$/);
      const r = instructRecordFromLine(JSON.stringify(line));
      // The default training template is MM-IFEval's inline form; the numbered form stays the generation prompt.
      assert.equal(r.prompt_template, 'inline');
      assert.equal(line.conversations[0].value, `<image>\n${[r.instruction, ...r.constraints.map((c) => c.value)].join(' ')}`);
      assert.ok(r.generation_prompt.startsWith('## Task Description\n'));
      // Calls are written as MM-IFEval's scorer names them (it looks them up with globals()[func]).
      for (const call of [...r.constraints.flatMap((c) => c.verifiers), ...r.verdicts.flatMap((v) => v.calls ?? [])]) {
        assert.equal(call.func, writtenFunctionName(call.func));
        assert.doesNotMatch(call.func, /_mentioned_/);
      }
      instruct.push(r);
    }
    for (const line of lines<DpoSharegptRow>(await out.get(layout.dpoJsonl(shard)))) {
      assert.equal(line.conversations.length, 1, 'the DPO prompt is the only conversation turn');
      assert.deepEqual([line.chosen.from, line.rejected.from], ['gpt', 'gpt']);
      dpo.push(dpoRecordFromLine(JSON.stringify(line)));
    }
    rejects.push(...lines<RejectRecord>(await out.get(layout.rejects(shard))));
  }

  // Every planned sample is accounted for exactly once: a record or a rejection with its reason.
  const plannedIds = planned.map((s) => s.sampleId).sort();
  assert.equal(new Set(plannedIds).size, 11);
  const sampleRejects = rejects.filter((r) => r.kind === 'sample');
  assert.deepEqual([...instruct.map((r) => r.id), ...sampleRejects.map((r) => r.id)].sort(), plannedIds);
  for (const r of rejects) assert.ok(r.reason.length > 0 && r.stage, JSON.stringify(r));
  assert.ok(instruct.length >= 6, `expected most samples accepted, got ${instruct.length}`);
  assert.equal(report.counts.instruct, instruct.length);

  for (const r of instruct) {
    assert.equal(r.source, 'cc3m');
    assert.ok(r.constraints.length >= 3 && r.constraints.length <= 12);
    // Verified: one verdict per constraint, and the post-filter's bar met.
    assert.deepEqual(
      r.verdicts.map((v) => v.index),
      r.constraints.map((_, i) => i),
    );
    assert.ok(r.pass_rate >= 0.8, `${r.id} pass rate ${r.pass_rate}`);
    for (const [i, c] of r.constraints.entries()) {
      assert.equal(r.verdicts[i]!.method, c.method);
      if (c.method === 'rule') assert.ok(c.verifiers.length > 0 && ['parser', 'llm'].includes(c.selection));
      else assert.ok(r.verdicts[i]!.judgeModel);
    }
    assert.equal(r.models.answer, 'mmif-sim-vlm');
    assert.equal(r.simulated, true);
    const image = await out.get(`${layout.root}/${r.image_path}`);
    assert.ok(image);
    assert.equal(sha256Hex(image), r.image_sha256);
    assert.equal((await sharp(image).metadata()).format, 'jpeg');
  }
  for (const pair of dpo) {
    const sft = instruct.find((r) => r.id === pair.sample_id)!;
    assert.ok(sft, `DPO pair ${pair.id} has its SFT record`);
    assert.equal(pair.chosen, sft.answer);
    assert.equal(pair.dropped_constraints.length, Math.ceil(sft.constraints.length / 3));
    for (const dropped of pair.dropped_constraints) {
      assert.ok(!pair.rejected_prompt.includes(dropped.value), 'the rejected prompt lacks the dropped constraint');
      assert.ok(pair.prompt.includes(dropped.value));
    }
    assert.equal(pair.rejected_model, 'mmif-sim-vlm-mini');
    assert.equal(pair.strategy, 'drop33');
    assert.ok(
      pair.rejected_verdicts.some((v) => !v.passed),
      `pair ${pair.id} teaches something`,
    );
    assert.equal(pair.pair_validation, 'strict');
    // The chosen answer loses on no constraint with a rule verdict: re-checked here on the texts
    // themselves with the reference functions, independently of the verdicts the build stored.
    for (const c of sft.constraints.filter((c) => c.method === 'rule')) {
      const passes = (text: string) =>
        c.verifiers.every((call) => {
          const outcome = runVerifierCall(text, call);
          return 'passed' in outcome && outcome.passed;
        });
      assert.ok(passes(pair.chosen) || !passes(pair.rejected), `pair ${pair.id}: the chosen answer fails "${c.value}" and the rejected one passes it`);
    }
  }
  // The simulator's 70% compliance made the strict rule refuse rejected answers, and report it per strategy.
  const drop33 = report.pairs.byStrategy.drop33!;
  const pairRejects = rejects.filter((r) => r.kind === 'pair');
  assert.equal(drop33.discarded, pairRejects.length);
  const byReason: Record<string, number> = {};
  for (const r of pairRejects) byReason[reasonCode(r.reason)] = (byReason[reasonCode(r.reason)] ?? 0) + 1;
  assert.deepEqual(drop33.discardedByReason, byReason);
  const refused = Object.values(drop33.refusedAnswersByRule).reduce((a, b) => a + b, 0);
  assert.ok(refused > 0, `some rejected answers were refused by a pair rule: ${JSON.stringify(drop33)}`);
  // The simulator misses constraints often enough that filtering, regeneration and DPO validation all ran.
  assert.ok(report.pairs.byStrategy.drop33!.kept === dpo.length);
  const belowThreshold = rejects.filter((r) => r.reason.includes('below-threshold'));
  assert.ok(report.verification.regeneratedAnswers + belowThreshold.length > 0, 'some answers needed another attempt');
  assert.ok((report.verification.byMethod.rule?.total ?? 0) > 0 && (report.verification.byMethod.direct_judge?.total ?? 0) > 0);

  // An independent reader: pyarrow and Hugging Face datasets, with the image decoded.
  const files = await readParquetWithPython(parquetFiles, path.join(tmp, 'hf-cache'));
  const byId = new Map([...instruct, ...dpo].map((r) => [r.id, r]));
  let rows = 0;
  for (const file of files) {
    assert.equal(file.hf_features.image, 'Image', `${file.path}: the image column decodes as an image`);
    for (const row of file.rows) {
      rows += 1;
      const record = byId.get(row.id);
      assert.ok(record, `parquet row ${row.id} matches a JSONL record`);
      assert.equal(row.image_bytes_sha256, record.image_sha256);
      assert.equal(row.image_path, record.image_path);
      assert.deepEqual(
        row.constraint_types,
        record.constraints.map((c) => c.type),
      );
      assert.equal(row.decoded_image.mode, 'RGB');
    }
  }
  assert.equal(rows, instruct.length + dpo.length);

  // The exports read the committed shards from S3 and write beside them (trainerFormats.test.ts
  // loads what they write; here: that they work on an S3 store).
  const trl = await exportTrl(out, layout);
  assert.equal(trl.rows, instruct.length + dpo.length);
  for (const key of trl.files) assert.ok((await out.get(key))?.subarray(0, 4).equals(Buffer.from('PAR1')), `${key} is Parquet on S3`);
  const mmifeval = await exportMmifeval(out, layout, { all: true });
  assert.equal(mmifeval.rows, instruct.length);
  const held = (await getJson<{ ids: string[] }>(out, layout.mmifevalHoldoutIds))!;
  assert.deepEqual(held.ids.sort(), instruct.map((r) => r.id).sort());
});

test('a CC3M webdataset with img2dataset side files on S3 is planned from them, and the shards seek each image in its tar', async () => {
  // 2 tars x 4 records with pyarrow-written side files; 000010002 failed to download (only in its parquet).
  const uri = `s3://${s3.bucket}/cc3m-i2d`;
  const records = await writeCc3m(openStore(uri, s3Options), 'webdataset', { perShard: 4, shards: 2, sideFile: 'img2dataset', failedDownload: '000010002' });
  const input = config({ buildId: 'e2e-i2d', sources: [{ type: 'cc3m', uri }] });
  const report = await runBuild('e2e-i2d', input);
  const layout = buildLayout('e2e-i2d');
  assert.equal(report.counts.planned, 7);
  assert.equal(report.shards.failed, 0);
  assert.deepEqual(await getJson(out, layout.sourceFiltered), { '0:cc3m': { 'img2dataset-failed_to_download': 1 } });
  await assertAccounting(out, report, { 0: 8 });

  // Every accepted record's image is its own record's image, as the image stage normalizes it.
  const imageConfig = parseBuildConfig(input).image;
  const instruct: InstructRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    for (const line of lines<InstructSharegptRow>(await out.get(layout.instructJsonl(shard)))) instruct.push(instructRecordFromLine(JSON.stringify(line)));
  }
  assert.ok(instruct.length > 0, 'some samples accepted');
  for (const r of instruct) {
    const normalized = await normalizeImage(records.find((f) => f.key === r.source_id)!.image, imageConfig);
    assert.ok(normalized.ok);
    assert.equal(r.image_sha256, normalized.sha256, `image of ${r.source_id}`);
  }
});

test('re-running a finished build makes no model call and rewrites nothing', async () => {
  const layout = buildLayout(BUILD_ID);
  const manifestsBefore = await Promise.all([0, 1, 2].map((s) => out.get(layout.manifest(s))));
  const requestsBefore = stack.simulator.stats().requests;
  const report = await runBuild(BUILD_ID, config({ maxParallelShards: 1 }));
  assert.equal(report.shards.committed, 3);
  assert.equal(stack.simulator.stats().requests, requestsBefore);
  const manifestsAfter = await Promise.all([0, 1, 2].map((s) => out.get(layout.manifest(s))));
  assert.deepEqual(manifestsAfter, manifestsBefore);
});

test('a bad config fails the build at once with a message naming the field', async () => {
  await assert.rejects(runBuild(BUILD_ID, { ...config(), maxSamples: -3, shardSize: 'many' }), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    const message = (err.cause as Error).message;
    assert.match(message, /maxSamples/);
    assert.match(message, /shardSize/);
    return true;
  });
  await assert.rejects(runBuild(BUILD_ID, config({ seed: 6 })), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    const activityFailure = err.cause as Error & { cause?: Error };
    assert.match(activityFailure.cause!.message, /already exists .* with a different config/);
    return true;
  });
});

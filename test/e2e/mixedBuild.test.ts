/**
 * One build over all six sources in their on-disk layouts, with bad input mixed in: every source's
 * records carry its id, licence note and (where it had one) the original question, and each bad
 * record is rejected with its reason while the build goes on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { instructRecordFromLine } from '../../output/formats/sharegpt.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { LocalStore } from '../../storage/localStore.js';
import { LAION_QUESTIONS, VFLAN_QUESTIONS, writeAllava } from '../fixtures/allava.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { TRAIN_AUGMENTED, TRAIN_HUMAN, writeChartqa } from '../fixtures/chartqa.js';
import { GEO_STEMS, writeGeo170k } from '../fixtures/geo170k.js';
import { MULTIUI_RECORDS, writeMultiui } from '../fixtures/multiui.js';
import { SCREENS, writeRico } from '../fixtures/rico.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';
import { sceneJpeg } from '../fixtures/images.js';
import { mixedSources } from '../fixtures/mixedSources.js';

let stack: Stack;
let dir: string;
/** CC3M records img2dataset listed (the failed download among them, only in its parquet). */
let cc3mListed: number;

before(async () => {
  stack = await startStack({ simulator: { seed: 5 }, taskQueue: 'mmif-mixed' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-mixed-'));
  const at = (name: string) => new LocalStore(path.join(dir, name));
  await Promise.all([
    // img2dataset's real side file (pyarrow parquet): the plan comes from it, the failed download is only there.
    writeCc3m(at('cc3m'), 'webdataset', { perShard: 3, shards: 1, sideFile: 'img2dataset', failedDownload: '000000002' }).then((r) => (cc3mListed = r.length)),
    writeAllava(at('allava'), { missingImage: 0, escapingPath: 1, corruptImage: 2, malformedRecord: 3 }),
    writeChartqa(at('chartqa')),
    writeGeo170k(at('geo170k'), { malformedRecord: 1 }),
    writeRico(at('rico')),
    writeMultiui(at('multiui')),
  ]);
  // A chart table in Latin-1, a screenshot RICO could hold in a format sharp cannot decode, and a
  // symlink leading out of the RICO root: each must land in exactly one term of the accounting.
  await at('chartqa').put('ChartQA Dataset/train/tables/10002.csv', Buffer.from('Year,\xe9t\xe9\n2019,15\n', 'latin1'));
  await at('rico').put('combined/20.bmp', Buffer.concat([Buffer.from('BM'), Buffer.alloc(64)]));
  await at('').put('outside.jpg', await sceneJpeg(40, 240, 400));
  await symlink(path.join(dir, 'outside.jpg'), path.join(dir, 'rico', 'combined', '21.jpg'));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const lines = <T>(text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

test('a mixed build draws from every source and records where each sample came from', async () => {
  const config: BuildConfigInput = {
    buildId: 'mixed',
    seed: 1,
    output: path.join(dir, 'out'),
    // RICO's two extra files: the BMP and the link out of the root written above.
    sources: mixedSources(dir, 2),
    maxSamples: 40,
    shardSize: 4,
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'mixed', args: [config] })) as BuildReport;
  assert.equal(report.shards.failed, 0);

  const layout = buildLayout('mixed');
  const root = path.join(dir, 'out');
  const records: InstructRecord[] = [];
  const rejects: RejectRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    records.push(...(await readFile(path.join(root, layout.instructJsonl(shard)), 'utf8')).split('\n').filter(Boolean).map(instructRecordFromLine));
    rejects.push(...lines<RejectRecord>(await readFile(path.join(root, layout.rejects(shard)), 'utf8')));
  }
  const bySource = (s: string) => records.filter((r) => r.source === s);
  for (const source of ['cc3m', 'allava', 'chartqa', 'geo170k', 'rico', 'multiui']) {
    assert.ok(bySource(source).length > 0, `${source} contributed accepted samples; rejects: ${JSON.stringify(rejects.filter((r) => r.source === source).map((r) => r.reason))}`);
    for (const r of bySource(source)) assert.ok(r.source_id && r.license.length > 0, `${source} record ${r.id} names its source id and licence`);
  }
  for (const source of ['allava', 'chartqa', 'geo170k', 'multiui']) {
    for (const r of bySource(source)) {
      assert.equal(r.instruction_origin, 'refined');
      assert.ok(r.original_instruction && !r.original_instruction.includes('<image>'), `${r.id}: the cleaned original question is kept`);
    }
  }
  for (const r of [...bySource('cc3m'), ...bySource('rico')]) assert.equal(r.instruction_origin, 'generated');
  assert.ok(
    bySource('chartqa').every((r) => r.original_answer !== null),
    'ChartQA labels are kept',
  );
  assert.match(bySource('chartqa')[0]!.license, /GPL-3\.0/);
  // Chart 10001 has a human and an augmented question: both are kept (dedupe by image and question).
  const chart10001 = bySource('chartqa').filter((r) => r.source_id.endsWith('/10001.png'));
  assert.equal(chart10001.length, 2, `both questions on one chart kept; chartqa rejects: ${JSON.stringify(rejects.filter((r) => r.source === 'chartqa'))}`);

  // Bad input: rejected per record with a reason, the build went on.
  const reasons = rejects.filter((r) => r.source === 'allava').map((r) => r.reason);
  assert.ok(
    reasons.some((r) => r.startsWith('missing-image:')),
    JSON.stringify(reasons),
  );
  assert.ok(
    reasons.some((r) => r.startsWith('corrupt:')),
    JSON.stringify(reasons),
  );
  const problems = await readFile(path.join(root, layout.sourceProblems), 'utf8');
  assert.match(problems, /image path '\.\.\/outside\.jpg' leaves the dataset root/);
  assert.match(problems, /not JSON|malformed|Unexpected/i);
  const filtered = JSON.parse(await readFile(path.join(root, layout.sourceFiltered), 'utf8')) as Record<string, Record<string, number>>;
  assert.ok(
    Object.keys(filtered).some((k) => k.endsWith(':multiui')),
    'MultiUI grounding/OCR items are counted as filtered',
  );
  assert.deepEqual(filtered['0:cc3m'], { 'img2dataset-failed_to_download': 1 }, 'failed downloads img2dataset listed only in its parquet are counted by status');

  // Every record of every source is accounted for, and `read` is what each fixture holds: all three
  // ALLaVA files (the malformed LAION record among them), ChartQA's train human and augmented sets,
  // Geo170k's qa_tuning.json (the default file), every RICO screen (with the BMP and the link out), every MultiUI item.
  const store = new LocalStore(root);
  await assertAccounting(store, report, {
    0: cc3mListed,
    1: LAION_QUESTIONS.length + 1 + VFLAN_QUESTIONS.length,
    2: TRAIN_HUMAN.length + TRAIN_AUGMENTED.length,
    3: GEO_STEMS.length,
    4: SCREENS.length + 2,
    5: MULTIUI_RECORDS.length,
  });
  // Each kind of loss lands in its own term, under its own reason.
  const account = (type: string) => report.accounting.find((a) => a.type === type)!;
  assert.deepEqual(account('cc3m').filtered, { 'img2dataset-failed_to_download': 1 });
  // The malformed LAION record is the file's last: nothing after it could be resynchronised to.
  assert.deepEqual(account('allava').problems, { 'outside-root': 1, 'json-rest-unread': 1 }, JSON.stringify(account('allava')));
  assert.equal(account('allava').rejected['missing-image'], 1);
  assert.equal(account('allava').rejected.corrupt, 1);
  assert.ok(account('multiui').filtered['task-grounding']! > 0, JSON.stringify(account('multiui')));
  assert.equal(account('chartqa').problems.encoding, 1, JSON.stringify(account('chartqa')));
  assert.deepEqual(account('geo170k').problems, { 'json-record-skipped': 1 }, JSON.stringify(account('geo170k')));
  assert.equal(account('rico').rejected['unsupported-format'], 1, JSON.stringify(account('rico')));
  assert.equal(account('rico').rejected['outside-root'], 1, JSON.stringify(account('rico')));
});

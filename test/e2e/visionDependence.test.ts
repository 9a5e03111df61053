/**
 * quality.visionDependence end to end (Temporal dev server, worker, simulator over HTTP): every
 * accepted sample is answered again without its image and judged with it; records carry
 * `vision_dependent`, quality.json and the card give the rates per source and task type, and with
 * `filter` the vision-independent samples are rejected instead of written.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import type { InstructRecord, RejectRecord } from '../../output/contracts/records.js';
import { instructRecordFromLine } from '../../output/formats/sharegpt.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { startStack, type Stack } from '../harness/stack.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({ simulator: { seed: 9 }, taskQueue: 'mmif-vision' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-vision-'));
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function build(buildId: string, filter: boolean) {
  const config: BuildConfigInput = {
    buildId,
    seed: 3,
    output: path.join(dir, 'out'),
    sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
    maxSamples: 10,
    shardSize: 5,
    quality: { visionDependence: { filter } },
    models: { default: { model: 'mmif-sim-vlm' } },
  };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [config] })) as BuildReport;
  const layout = buildLayout(buildId);
  const root = path.join(dir, 'out');
  const records: InstructRecord[] = [];
  const rejects: RejectRecord[] = [];
  for (let shard = 0; shard < report.shards.planned; shard++) {
    records.push(...(await readFile(path.join(root, layout.instructJsonl(shard)), 'utf8')).split('\n').filter(Boolean).map(instructRecordFromLine));
    rejects.push(
      ...(await readFile(path.join(root, layout.rejects(shard)), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as RejectRecord),
    );
  }
  const quality = JSON.parse(await readFile(path.join(root, layout.quality), 'utf8')) as QualityReport;
  const card = await readFile(path.join(root, buildId, 'README.md'), 'utf8');
  return { report, records, rejects, quality, card };
}

test('every accepted sample is checked for needing its image: records, quality.json and the card say which do not', async () => {
  const { records, quality, card } = await build('vision', false);
  assert.ok(records.length > 0);
  for (const r of records) assert.equal(typeof r.vision_dependent, 'boolean', `${r.id} was checked`);
  const independent = records.filter((r) => r.vision_dependent === false).length;
  const v = quality.visionDependence!;
  assert.equal(v.bySource.cc3m!.checked, records.length, 'every accepted sample counted under its source');
  assert.equal(v.bySource.cc3m!.independent, independent);
  assert.equal(
    Object.values(v.byTaskType).reduce((n, t) => n + t.checked, 0),
    records.length,
    'and under its task type',
  );
  assert.equal(v.total.independentRate, independent / records.length);
  assert.match(card, /### Vision dependence/);
  assert.match(card, new RegExp(`vision_dependent: false\`: ${independent} of ${records.length}`));
  assert.match(card, new RegExp(`\\| cc3m \\| ${records.length} \\| ${independent} \\|`));
});

test('with filter, vision-independent samples are rejected as such and none is written', async () => {
  const checked = await build('vision-filtered', true);
  const dropped = checked.rejects.filter((r) => r.reason.startsWith('answer: vision-independent:'));
  assert.ok(
    checked.records.every((r) => r.vision_dependent === true),
    'only samples that need their image are written',
  );
  assert.equal(checked.quality.visionDependence!.total.independent, dropped.length, 'the rejected ones are counted as independent');
  assert.equal(checked.quality.rejections.byReason['vision-independent'] ?? 0, dropped.length);
});

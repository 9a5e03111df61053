/**
 * Two sources of one type, built with `mmif build --config F --local` (issue 35): each is named
 * distinctly wherever a record, the card, the quality report or the build report names a source:
 * by default `<type>-<n>`, and by its configured `name` when it has one. They used to both write
 * `source: "cc3m"`, so nothing told them apart downstream.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { instructRecordFromLine } from '../../output/formats/sharegpt.js';
import type { QualityReport } from '../../output/reports/qualityReport.js';
import { runMmif } from '../harness/mmifCli.js';

let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-source-names-'));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sources = [
  { type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', quota: 3 },
  { type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', quota: 3 },
  { type: 'cc3m', uri: SAMPLES_DIR, layout: 'files', quota: 3, name: 'night-shots' },
];
const NAMES = ['cc3m-1', 'cc3m-2', 'night-shots'];

test('records, card, quality and build reports name each of three cc3m sources distinctly', async () => {
  const buildId = 'source-names';
  const file = path.join(dir, `${buildId}.json`);
  await writeFile(file, JSON.stringify({ buildId, output: path.join(dir, 'out'), sources, maxSamples: 9, shardSize: 3, models: { default: { model: 'mmif-sim-vlm' } } }));
  const result = await runMmif(['build', '--config', file, '--local'], {
    env: { OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined },
    cwd: dir,
  });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  for (const [i, name] of NAMES.entries()) assert.match(result.stdout, new RegExp(`accounting ${name} #${i}: read 10 = planned 3 `));
  const root = path.join(dir, 'out', buildId);

  const records: Array<{ source: string }> = [];
  for (const [folder, parse] of [
    ['instruct/sharegpt', instructRecordFromLine],
    ['rejects', (line: string) => JSON.parse(line) as { source: string }],
  ] as const) {
    for (const name of await readdir(path.join(root, folder))) {
      if (!name.endsWith('.jsonl')) continue;
      const text = await readFile(path.join(root, folder, name), 'utf8');
      records.push(...text.split('\n').filter(Boolean).map(parse));
    }
  }
  assert.deepEqual([...new Set(records.map((r) => r.source))].sort(), NAMES, 'every source writes its own name, none writes the bare type');

  const report = JSON.parse(await readFile(path.join(root, 'build-report.json'), 'utf8')) as BuildReport;
  assert.deepEqual(
    report.accounting.map((a) => [a.type, a.name, a.planned]),
    NAMES.map((name) => ['cc3m', name, 3]),
  );
  const quality = JSON.parse(await readFile(path.join(root, 'quality.json'), 'utf8')) as QualityReport;
  assert.deepEqual(Object.keys(quality.composition.bySource).sort(), NAMES);
  for (const name of NAMES) {
    const c = quality.composition.bySource[name]!;
    assert.equal(c.instruct + c.rejectedSamples, 3, `${name}: its three planned samples are counted under its name`);
  }
  const card = await readFile(path.join(root, 'README.md'), 'utf8');
  for (const name of NAMES) {
    const c = quality.composition.bySource[name]!;
    assert.match(card, new RegExp(`^\\| ${name} \\| ${c.instruct} \\| ${c.dpo} \\| ${c.rejectedSamples} \\| ${c.rejectedPairs} \\| `, 'm'), `${name}'s row in the card`);
  }
  for (const [i, name] of NAMES.entries()) assert.match(card, new RegExp(`^\\| ${name} #${i} \\| 10 \\| `, 'm'), `${name}'s accounting row in the card`);
  assert.doesNotMatch(card, /^\| cc3m( #\d)? \|/m, 'no row under the bare type');
});

/**
 * The generic folder sources as a user runs them: `mmif build --config F --local` (its own Temporal
 * dev server, worker and simulator) over an ImageFolder dataset and LLaVA-style data, each on local
 * disk and on S3 (versitygw): the build exits 0, accepts samples from every source and its
 * accounting identities hold.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { LocalStore } from '../../storage/localStore.js';
import { openStore } from '../../storage/openStore.js';
import type { S3Options } from '../../storage/s3Store.js';
import { writeImagefolder, writeLlava } from '../fixtures/folderSources.js';
import { runMmif } from '../harness/mmifCli.js';
import { startS3Server, useS3Env, type S3Server } from '../harness/s3Server.js';

let dir: string;
let s3: S3Server;
let s3Options: S3Options;

before(async () => {
  s3 = await startS3Server();
  s3Options = useS3Env(s3);
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-folders-'));
  await Promise.all([
    writeImagefolder(new LocalStore(path.join(dir, 'imagefolder'))),
    writeLlava(new LocalStore(path.join(dir, 'llava'))),
    writeImagefolder(openStore(`s3://${s3.bucket}/imagefolder`, s3Options)),
    writeLlava(openStore(`s3://${s3.bucket}/llava`, s3Options)),
  ]);
});

after(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SOURCES = [{ type: 'imagefolder' }, { type: 'llava', imageDir: 'images' }];

for (const backend of ['local disk', 'S3 (versitygw)'] as const) {
  test(`mmif build --local builds imagefolder and llava sources on ${backend}`, async () => {
    const onS3 = backend !== 'local disk';
    const buildId = onS3 ? 'folders-s3' : 'folders-local';
    const sources = SOURCES.map((s) => ({ ...s, uri: onS3 ? `s3://${s3.bucket}/${s.type}` : path.join(dir, s.type) }));
    const config = {
      buildId,
      output: path.join(dir, 'out'),
      ...(onS3 ? { s3: s3Options } : {}),
      sources,
      maxSamples: 6,
      shardSize: 3,
      models: { default: { model: 'mmif-sim-vlm' } },
    };
    const file = path.join(dir, `${buildId}.json`);
    await writeFile(file, JSON.stringify(config));
    const result = await runMmif(['build', '--config', file, '--local'], {
      env: { OPENAI_BASE_URL: undefined, TEMPORAL_ADDRESS: undefined, MMIF_TASK_QUEUE: undefined },
      cwd: dir,
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, new RegExp(`build ${buildId}: COMPLETED`));
    const report = JSON.parse(await readFile(path.join(dir, 'out', buildId, 'build-report.json'), 'utf8')) as BuildReport;
    assert.deepEqual(
      report.accounting.map((a) => a.type),
      ['imagefolder', 'llava'],
    );
    for (const a of report.accounting) {
      assert.ok(a.accepted > 0, `${a.type}: ${JSON.stringify(a)}`);
      assert.ok(a.balanced, `${a.type}: accounting identities hold`);
    }
  });
}

/**
 * `mmif validate` against an S3-compatible store (versitygw on 127.0.0.1) with a key it does not
 * know: one line naming the output and the store's cause, not a bare SDK message before it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { runMmif } from '../harness/mmifCli.js';
import { startS3Server, type S3Server } from '../harness/s3Server.js';

let dir: string;
let s3: S3Server;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-validate-s3-'));
  s3 = await startS3Server();
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 2, shards: 1 });
});
after(async () => {
  await s3?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('mmif validate with a wrong S3 secret key: one line naming the output and the cause, exit 2', async () => {
  const file = path.join(dir, 'build.json');
  const output = `s3://${s3.bucket}/out`;
  const config = {
    buildId: 'wrong-key',
    output,
    s3: { endpoint: s3.endpoint, region: s3.region, forcePathStyle: true },
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 2,
    models: { default: { model: 'm' } },
  };
  await writeFile(file, JSON.stringify(config));
  // The right key id with a wrong secret: the store refuses every request's signature.
  const env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: 'not-the-secret', AWS_REGION: s3.region, AWS_PROFILE: undefined };
  const result = await runMmif(['validate', '--config', file], { env });
  assert.equal(result.code, 2, result.stdout + result.stderr);
  // Every line validate prints starts with the config file (the AWS SDK's Node 20 warning aside).
  const lines = result.stderr.split('\n').filter((line) => line.startsWith(file));
  assert.deepEqual(lines, [
    `${file}: output ${output} is not writable: SignatureDoesNotMatch (HTTP 403): The request signature we calculated does not match the signature you provided. Check your key and signing method.`,
  ]);
  // The right key: all is well (the cause above was the key, not the store).
  const right = await runMmif(['validate', '--config', file], { env: { ...env, AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey } });
  assert.equal(right.code, 0, right.stdout + right.stderr);
});

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
import { closedPort } from '../harness/closedPort.js';

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

test('an s3.endpoint nothing listens on: validate and build --local end with one line naming the output and the object store, exit 2, without waiting out retries', async () => {
  const port = await closedPort();
  const endpoint = `http://127.0.0.1:${port}`;
  const output = 's3://no-store/out';
  const file = path.join(dir, 'dead-store.json');
  const config = {
    buildId: 'dead-store',
    output,
    s3: { endpoint, region: 'us-east-1', forcePathStyle: true },
    sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
    maxSamples: 2,
    models: { default: { model: 'm' } },
    llm: { preflight: false },
  };
  await writeFile(file, JSON.stringify(config));
  const env = { AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'us-east-1', AWS_PROFILE: undefined, TEMPORAL_ADDRESS: '127.0.0.1:1' };
  const cause = `output ${output}: object store ${endpoint}: nothing listens at 127.0.0.1:${port}: connection refused — check s3.endpoint and that the store runs`;
  const validated = await runMmif(['validate', '--config', file], { env });
  assert.equal(validated.code, 2, validated.stdout + validated.stderr);
  assert.deepEqual(
    validated.stderr.split('\n').filter((line) => line.startsWith(file)),
    [`${file}: ${cause}`],
  );
  const built = await runMmif(['build', '--config', file, '--local'], { env, cwd: dir });
  assert.equal(built.code, 2, built.stdout + built.stderr);
  assert.equal(built.stderr.trim().split('\n').at(-1), `mmif: checks failed: ${cause}`);
  // The checks answered: no "did not run them within 120 s", no build started.
  assert.doesNotMatch(built.stdout + built.stderr, /older release|started build|shard/);
});

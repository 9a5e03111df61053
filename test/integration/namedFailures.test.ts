/**
 * An object store that does not answer is named in the failure, with its endpoint, the output and
 * the key being written (issue 34: `connect ECONNREFUSED 127.0.0.1:28900` named neither and read like
 * the model endpoint). The error keeps its causes, which the output probe classifies by.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../storage/openStore.js';
import { causeCodes } from '../../domain/connectFailure.js';
import { closedPort } from '../harness/closedPort.js';

test('a write to an S3 endpoint nothing listens on names the object store, its endpoint, the output and the key', async () => {
  const endpoint = `http://127.0.0.1:${await closedPort()}`;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = 'id';
  process.env.AWS_SECRET_ACCESS_KEY = 'secret';
  try {
    const store = openStore('s3://bucket/out', { endpoint, region: 'us-east-1', forcePathStyle: true });
    const err = await store.put('b/build-report.json', '{}').then(
      () => assert.fail('nothing listens'),
      (e: unknown) => e as Error,
    );
    assert.match(err.message, new RegExp(`^object store ${endpoint} \\(s3://bucket/out\\): writing 'b/build-report\\.json': .*ECONNREFUSED`));
    assert.ok(causeCodes(err).includes('ECONNREFUSED'), 'the causes are kept');
  } finally {
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  }
});

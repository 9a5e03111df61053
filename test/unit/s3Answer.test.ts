/**
 * storage/s3Answer.ts recognizes the S3 service's answers as the SDK's own classes would, without
 * loading the SDK where it runs: the errors here are the SDK's real ones (a modelled NoSuchKey, a
 * generic service exception as an unmodelled 403 or 503 arrives), beside failures that are no answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';
import { s3Answer } from '../../storage/s3Answer.js';

test("an SDK error for a reply is an answer, with the S3 code as its name and the reply's status", () => {
  const missing = new NoSuchKey({ message: 'The specified key does not exist.', $metadata: { httpStatusCode: 404 } });
  assert.deepEqual(s3Answer(missing), { name: 'NoSuchKey', status: 404 });
  const denied = new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 } });
  assert.deepEqual(s3Answer(denied), { name: 'AccessDenied', status: 403 });
  const down = new S3ServiceException({ name: 'ServiceUnavailable', $fault: 'server', $metadata: {} });
  assert.deepEqual(s3Answer(down), { name: 'ServiceUnavailable', status: undefined });
});

test('a failure before any reply, or any other error, is no answer', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', $metadata: { attempts: 5 } });
  assert.equal(s3Answer(refused), undefined);
  assert.equal(s3Answer(new TypeError('x is not a function')), undefined);
  assert.equal(s3Answer({ $fault: 'client', $metadata: {} }), undefined, 'not an Error');
  assert.equal(s3Answer(undefined), undefined);
});

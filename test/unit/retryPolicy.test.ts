import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { classifyFailure } from '../../llm/retryPolicy.js';
import { UnusableReply } from '../../llm/replyCheck.js';

const answer = (status: number, code?: string) => OpenAI.APIError.generate(status, { error: { message: 'm', ...(code ? { code } : {}) } }, 'm', new Headers());

test('each failed request is of one kind: refused (400, 413, 422) is the endpoint refusing the request, not a sample rejected', () => {
  assert.deepEqual(
    [400, 413, 422, 429, 408, 409, 500, 503, 401, 403, 404].map((status) => classifyFailure(answer(status))),
    ['refused', 'refused', 'refused', 'rate-limited', 'transient', 'transient', 'transient', 'transient', 'permanent', 'permanent', 'permanent'],
  );
  assert.equal(classifyFailure(answer(429, 'insufficient_quota')), 'permanent');
  assert.equal(classifyFailure(new OpenAI.APIConnectionError({ message: 'reset' })), 'transient');
  assert.equal(classifyFailure(new UnusableReply('reply-too-large', 'too large')), 'unusable');
  assert.equal(classifyFailure(new TypeError('a bug')), 'fatal');
});

/**
 * The one line of a model call that failed on every attempt llm.retry allows (lastAttemptError in
 * llm/sendCompletion.ts, gaveUpLine in llm/endpointError.ts): every kind names the role, endpoint,
 * model, what happened and the attempts, in one shape, and never the key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { TransientError } from '../../domain/errors.js';
import type { ResolvedEndpoint } from '../../llm/resolvedEndpoint.js';
import { EndpointGaveUp, lastAttemptError } from '../../llm/sendCompletion.js';

const KEY = 'sk-unit-gave-up-key-0123456789';
const endpoint = { baseURL: 'http://llm.example:8000/v1', model: 'qwen-vl', apiKey: KEY } as ResolvedEndpoint;
const sending = { who: 'answer', endpoint, timeoutMs: 60_000 };
const head = 'answer: model endpoint http://llm.example:8000/v1 (model qwen-vl): ';

/** An SDK error as the client raises it for this status and OpenAI-shaped error body. */
const answered = (status: number, error: { message: string; code?: string }) => APIError.generate(status, { error }, undefined, new Headers());

const kinds: Array<[string, unknown, number, string]> = [
  ['a 500', answered(500, { message: 'Simulated internal server error.', code: 'internal_error' }), 6, 'HTTP 500: internal_error: Simulated internal server error., 6 attempts'],
  ['a 503 echoing the key', answered(503, { message: `upstream refused ${KEY}` }), 2, 'HTTP 503: upstream refused ***, 2 attempts'],
  ['a 429 that never cleared', answered(429, { message: 'Rate limit reached.', code: 'rate_limit_exceeded' }), 6, 'HTTP 429: rate_limit_exceeded: Rate limit reached., 6 attempts'],
  ['a 408', answered(408, { message: 'Request timeout' }), 1, 'HTTP 408: Request timeout, 1 attempt'],
  ['a timeout', new APIConnectionTimeoutError(), 3, 'no complete reply within 60000 ms (llm.timeoutMs), 3 attempts'],
  [
    'no connection',
    new APIConnectionError({ cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:8000'), { code: 'ECONNREFUSED' }) }),
    6,
    'cannot connect: connect ECONNREFUSED 10.0.0.5:8000, 6 attempts',
  ],
];

for (const [kind, err, attempts, what] of kinds) {
  test(`${kind}: one line naming the role, endpoint, model, what happened and the attempts; transient`, () => {
    const gaveUp = lastAttemptError(err, sending, attempts);
    assert.ok(gaveUp instanceof EndpointGaveUp && gaveUp instanceof TransientError);
    assert.equal(gaveUp.message, head + what);
    assert.doesNotMatch(gaveUp.message, /sk-unit/);
  });
}

test('an error that is no endpoint answer (a bug) is left as it is', () => {
  const bug = new TypeError('x is undefined');
  assert.equal(lastAttemptError(bug, sending, 2), bug);
});

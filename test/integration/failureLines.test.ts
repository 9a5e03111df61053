/**
 * The one line of the failures that gaveUpLines.test.ts does not cover: a refused key, an unknown
 * model and a spent quota (permanentError in llm/endpointError.ts), a Batch API call that failed
 * (batchCallError in llm/batch.ts, against the simulator's /v1/files and /v1/batches, and a port
 * nobody listens on), and the error budget's lines (pipeline/run/errorBudget.ts). Each names the role,
 * the endpoint, the model and the tries or attempts, says what to check, and never shows the key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { APIError } from 'openai';
import { InputError, TransientError } from '../../domain/errors.js';
import type { ModelCallFault } from '../../domain/rejection.js';
import { BatchCallFailed, batchCallError, pollBatch, submitBatchFile, type BatchFile } from '../../llm/batch.js';
import { clientFor, resolveEndpoint } from '../../llm/endpoint.js';
import type { ResolvedEndpoint } from '../../llm/resolvedEndpoint.js';
import { EndpointError, permanentError } from '../../llm/endpointError.js';
import { EndpointGaveUp } from '../../llm/sendCompletion.js';
import { checkShardBudget, ConsecutiveFaults, ErrorBudgetExceeded } from '../../pipeline/run/errorBudget.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';

const KEY = 'sk-unit-refused-key-0123456789';
const endpoint = { baseURL: 'https://api.example.com/v1', model: 'gpt-4o', apiKey: KEY } as ResolvedEndpoint;
const head = 'answer: model endpoint https://api.example.com/v1 (model gpt-4o): ';

/** An SDK error as the client raises it for this status and body (the body's `error` object, as OpenAI nests it). */
const answered = (status: number, body: object) => APIError.generate(status, body, undefined, new Headers());

// The bodies as each server sends them (sources cited in llm/endpointError.ts, hintFor).
const refusals: Array<[string, APIError, string]> = [
  [
    "OpenAI's 401 echoing the key",
    answered(401, { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }),
    'HTTP 401: invalid_api_key: Incorrect API key provided: ***. — the API key was refused: check the key in OPENAI_API_KEY (the variable named by apiKeyEnv)',
  ],
  [
    "llama.cpp's 401",
    answered(401, { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } }),
    'HTTP 401: Invalid API Key — the API key was refused: check the key in OPENAI_API_KEY (the variable named by apiKeyEnv)',
  ],
  [
    "OpenAI's 403",
    answered(403, { error: { message: 'Project does not have access to model gpt-4o', type: 'invalid_request_error', code: 'model_not_found' } }),
    'HTTP 403: model_not_found: Project does not have access to model gpt-4o — the API key may not use this endpoint or model: check the key in OPENAI_API_KEY and its access to model gpt-4o',
  ],
  [
    "OpenAI's 404 for an unknown model",
    answered(404, {
      error: { message: 'The model `gpt-4o` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' },
    }),
    "HTTP 404: model_not_found: The model `gpt-4o` does not exist or you do not have access to it. — unknown model or wrong base URL: check the model name gpt-4o (models.<role>.model) and baseUrl (or the worker's OPENAI_BASE_URL)",
  ],
  [
    "Ollama's 404",
    answered(404, { error: { message: 'model "gpt-4o" not found, try pulling it first', type: 'api_error', param: null, code: null } }),
    'HTTP 404: model "gpt-4o" not found, try pulling it first — unknown model or wrong base URL: check the model name gpt-4o (models.<role>.model) and baseUrl (or the worker\'s OPENAI_BASE_URL)',
  ],
  [
    "OpenAI's 429 insufficient_quota",
    answered(429, {
      error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' },
    }),
    'HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan and billing details. — the account is out of quota or credit: check the plan and billing of the account whose key is in OPENAI_API_KEY',
  ],
];

for (const [kind, err, what] of refusals) {
  test(`${kind}: one line naming the role, endpoint, model and what to check, never the key; an input error`, () => {
    const refused = permanentError(err, endpoint, 'OPENAI_API_KEY', 'answer');
    assert.ok(refused instanceof EndpointError && refused instanceof InputError);
    assert.equal(refused.message, head + what);
    assert.doesNotMatch(refused.message, /sk-unit/);
  });
}

let sim: SimulatorHandle;
before(async () => {
  sim = await startSimulator({ seed: 3 });
});
after(async () => {
  await sim?.close();
});

const file: BatchFile = { model: 'mmif-sim-vlm', customIds: ['mmif:answer:0:s1'], bytes: 10, jsonl: '{"custom_id":"mmif:answer:0:s1"}\n' };

test('a Batch API call refused for its key: the permanent line names the role, the call, the endpoint and model', async () => {
  sim.setFaults({ requiredApiKey: 'sk-the-right-key-0123456789' });
  try {
    const simEndpoint = { baseURL: sim.url, model: 'mmif-sim-vlm', apiKey: KEY } as ResolvedEndpoint;
    const client = clientFor(simEndpoint, 60_000);
    const err = await submitBatchFile(client, file).then(
      () => assert.fail('the key is refused'),
      (e: unknown) => batchCallError(e, { role: 'answer', endpoint: simEndpoint, apiKeyEnv: 'OPENAI_API_KEY', timeoutMs: 60_000 }),
    );
    assert.ok(err instanceof EndpointError);
    assert.equal(
      err.message,
      `answer: Batch API POST /files: model endpoint ${sim.url} (model mmif-sim-vlm): HTTP 401: invalid_api_key: Incorrect API key provided: ***. ` +
        'You can find your API key at https://platform.openai.com/account/api-keys. — the API key was refused: check the key in OPENAI_API_KEY (the variable named by apiKeyEnv)',
    );
  } finally {
    sim.setFaults({ requiredApiKey: '' });
  }
});

test("a 401 when the key's variable is unset says it is unset and names the variable, not that a key was refused", async () => {
  sim.setFaults({ requiredApiKey: 'sk-the-right-key-0123456789' });
  try {
    // The worker's view: a local URL with its key variable unset sends a placeholder (llm/endpoint.ts).
    const unset = resolveEndpoint({ model: 'mmif-sim-vlm', baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_KEY_NEVER_SET', concurrency: 1, batch: false }, {});
    const err = await clientFor(unset, 60_000)
      .chat.completions.create({ model: 'mmif-sim-vlm', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => assert.fail('the simulator requires a key'),
        (e: unknown) => permanentError(e as APIError, unset, 'MMIF_TEST_KEY_NEVER_SET', 'answer'),
      );
    assert.match(
      err.message,
      /HTTP 401: .* — no API key was sent: MMIF_TEST_KEY_NEVER_SET \(the variable named by apiKeyEnv\) is not set where the model is called: set it there$/,
    );
    assert.doesNotMatch(err.message, /was refused/);
  } finally {
    sim.setFaults({ requiredApiKey: '' });
  }
});

test('a Batch API call with no connection: one transient line with the call and the attempts made (the SDK retries reads twice)', async () => {
  // A port that was free a moment ago: connections to it are refused.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const baseURL = `http://127.0.0.1:${port}/v1`;
  const closed = { baseURL, model: 'gpt-4o-mini', apiKey: KEY } as ResolvedEndpoint;
  // The client the activities use (endpoint.ts): the SDK's own retries off, its reads retried twice by batch.ts.
  const client = clientFor(closed, 60_000);
  const s = { role: 'instruction' as const, endpoint: closed, apiKeyEnv: 'OPENAI_API_KEY', timeoutMs: 60_000 };
  const submitted = await submitBatchFile(client, file).then(
    () => assert.fail('nothing listens'),
    (e: unknown) => batchCallError(e, s),
  );
  assert.ok(submitted instanceof EndpointGaveUp && submitted instanceof TransientError);
  assert.equal(
    submitted.message,
    `instruction: Batch API POST /files: model endpoint ${baseURL} (model gpt-4o-mini): cannot connect: connect ECONNREFUSED 127.0.0.1:${port}, 1 attempt`,
  );
  const polled = await pollBatch(client, 'batch_abc').then(
    () => assert.fail('nothing listens'),
    (e: unknown) => batchCallError(e, s),
  );
  assert.ok(polled instanceof EndpointGaveUp);
  assert.equal(
    polled.message,
    `instruction: Batch API GET /batches/batch_abc: model endpoint ${baseURL} (model gpt-4o-mini): cannot connect: connect ECONNREFUSED 127.0.0.1:${port}, 3 attempts`,
  );
});

test("a 5xx from a Batch API call: the server's text after the status, masked; an error no call raised is left as it is", () => {
  const s = { role: 'answer' as const, endpoint, apiKeyEnv: 'OPENAI_API_KEY', timeoutMs: 60_000 };
  const failed = batchCallError(new BatchCallFailed('POST /batches', 1, answered(500, { error: { message: `upstream refused ${KEY}`, code: 'server_error' } })), s);
  assert.ok(failed instanceof EndpointGaveUp);
  assert.equal(
    failed.message,
    'answer: Batch API POST /batches: model endpoint https://api.example.com/v1 (model gpt-4o): HTTP 500: server_error: upstream refused ***, 1 attempt',
  );
  const bug = new TypeError('x is undefined');
  assert.equal(batchCallError(bug, s), bug);
});

const refused: ModelCallFault = { endpoint: 'http://llm:8000/v1', model: 'qwen-vl', status: 400, excerpt: 'invalid_request: Simulated invalid request', tries: 1 };
const unusable: ModelCallFault = {
  endpoint: 'http://llm:8000/v1',
  model: 'qwen-vl',
  status: 200,
  excerpt: 'truncated-reply: the reply was cut by the token limit (finish_reason length)',
  tries: 3,
};
const budget = { maxFraction: 0.2, maxConsecutive: 3 };

test('the error budget in a row: one line with the stage, the endpoint, model, what it answered and the tries each call was given', () => {
  for (const [fault, tries] of [
    [refused, '1 try'],
    [unusable, '3 tries'],
  ] as const) {
    const inARow = new ConsecutiveFaults(budget, 'stage answer');
    inARow.record(fault);
    inARow.record(fault);
    assert.throws(
      () => inARow.record(fault),
      (err: unknown) => {
        assert.ok(err instanceof ErrorBudgetExceeded);
        assert.equal(
          err.message,
          `stage answer: 3 samples in a row rejected by model-call errors (llm.errorBudget.maxConsecutive 3): model endpoint http://llm:8000/v1 (model qwen-vl): HTTP ${fault.status}: ${fault.excerpt}, ${tries}`,
        );
        return true;
      },
    );
  }
});

test("the shard's error budget: the first fault with its tries; a fault stored before tries were kept reads as before", () => {
  assert.throws(
    () => checkShardBudget(2, 4, [unusable, refused], budget),
    (err: unknown) =>
      err instanceof ErrorBudgetExceeded &&
      err.message ===
        'shard 2: 2 of 4 samples rejected by model-call errors, over the error budget (llm.errorBudget.maxFraction 0.2); first: model endpoint http://llm:8000/v1 (model qwen-vl): HTTP 200: truncated-reply: the reply was cut by the token limit (finish_reason length), 3 tries',
  );
  const stored: ModelCallFault = { endpoint: refused.endpoint, model: refused.model, status: refused.status, excerpt: refused.excerpt };
  assert.throws(
    () => checkShardBudget(0, 1, [stored], budget),
    /; first: model endpoint http:\/\/llm:8000\/v1 \(model qwen-vl\): HTTP 400: invalid_request: Simulated invalid request$/,
  );
});

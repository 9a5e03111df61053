/**
 * Request dialects and replies that are not what they claim, against the simulator speaking each
 * server's dialect (simulator/dialects.ts): the body a model is sent, what is learned from a
 * refusal and remembered, reasoning kept apart from the answer, and HTML, oversized and trickling
 * replies rejected with their reasons.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { SampleRejection } from '../../domain/rejection.js';
import { adapt, baseDialect, isReasoningModel, refusedParameter, requestBody } from '../../llm/dialect.js';
import { resolveEndpoint } from '../../llm/endpoint.js';
import { EndpointError } from '../../llm/endpointError.js';
import { withTallies } from '../../llm/tallyScope.js';
import { noTallies } from '../../domain/tallies.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { preflight } from '../../llm/preflight.js';
import { separateReasoning } from '../../llm/reasoning.js';
import { EndpointTimeout, EndpointUnreachable } from '../../llm/sendCompletion.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { constraintReplySchema } from '../../prompts/constraintPrompt.js';
import { jsonSchemaOf } from '../../llm/chatMessages.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { simulatorOptionsFromEnv, startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { SIM_DIALECTS } from '../../simulator/dialects.js';
import { LocalStore } from '../../storage/localStore.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';

let sim: SimulatorHandle;
let dir: string;
const llm = defaultLlmSettings();
const image = { jpeg: Buffer.from('not really a jpeg, the simulator only counts it'), sha256: 'abc123' };

before(async () => {
  sim = await startSimulator({
    seed: 5,
    faults: {
      modelDialects: {
        'gpt-5-mini': 'openai-reasoning',
        'acme-thinker': 'openai-reasoning',
        'qwen-think': 'inline-think',
        'qwen-parsed': 'reasoning-content',
        'old-llama': 'no-json-schema',
        'strict-gemini': 'no-image-ids',
        portal: 'html-proxy',
      },
    },
  });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-dialects-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const endpoint = (model: string) => ({ model, baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false });
const cache = (sub: string) => new LocalStore(path.join(dir, sub));
const caller = (store: LocalStore, overrides: Partial<typeof llm> = {}) => new ModelCaller(store, '_cache/llm', { ...llm, ...overrides });
const answerReq = (model: string, task = 'Describe the harbour.') => ({ stage: 'answer' as const, endpoint: endpoint(model), prompt: renderAnswerPrompt(task, []), image });
const instructionReq = (model: string) => ({ stage: 'instruction' as const, endpoint: endpoint(model), prompt: renderInstructionPrompt(['Describe it.']), image });

test("OpenAI's reasoning models are known by name, dated snapshots and gateway prefixes included; gpt-5-chat is not one", () => {
  for (const name of ['o1', 'o1-preview', 'o3', 'o3-mini-2025-01-31', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5-mini-2025-08-07', 'gpt-5.1', 'openai/gpt-5-nano']) {
    assert.ok(isReasoningModel(name), name);
  }
  for (const name of ['gpt-4o', 'gpt-4.1-mini', 'gpt-5-chat-latest', 'gpt-50', 'omni-vlm', 'o5x', 'Qwen/Qwen3-VL-8B-Thinking']) assert.ok(!isReasoningModel(name), name);
  const ask = { model: 'gpt-5-mini', messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0.7, maxTokens: 100, seed: 3 };
  assert.deepEqual(requestBody(ask, baseDialect('gpt-5-mini')), { model: 'gpt-5-mini', messages: ask.messages, max_completion_tokens: 100, seed: 3 });
  assert.deepEqual(requestBody({ ...ask, model: 'gpt-4o' }, baseDialect('gpt-4o')), { model: 'gpt-4o', messages: ask.messages, temperature: 0.7, max_tokens: 100, seed: 3 });
});

test('a reply schema goes out as json_schema without strict: OpenAI treats it as guidance and checks no keyword against strict mode (the constraint schema’s minLength); stepped down, no schema at all', () => {
  const schema = jsonSchemaOf(constraintReplySchema(['tone_requirement', 'mention'], { min: 3, max: 12 }));
  const ask = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0.7, maxTokens: 100, schema: { name: 'constraints', schema } };
  const body = requestBody(ask, baseDialect('gpt-4o'));
  assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'constraints', schema } });
  for (const keyword of ['"enum":["tone_requirement","mention"]', '"minLength":1', '"minItems":3', '"maxItems":12']) assert.ok(JSON.stringify(schema).includes(keyword), keyword);
  const json = adapt(baseDialect('gpt-4o'), 'response_format', "Invalid schema for response_format 'constraints'")!;
  assert.deepEqual(requestBody(ask, json).response_format, { type: 'json_object' });
});

test('the refused parameter is read from each server’s error: param, a path, Gemini’s unknown name, llama.cpp’s and Anthropic’s words', () => {
  const body = { model: 'm', messages: [], temperature: 0.7, max_tokens: 9, seed: 1, response_format: { type: 'json_object' as const } };
  const openai = { param: 'max_tokens', message: "400 Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." };
  assert.equal(refusedParameter(openai, body), 'max_tokens');
  assert.equal(refusedParameter({ param: 'response_format.json_schema', message: '400 bad schema' }, body), 'response_format');
  assert.equal(refusedParameter({ param: null, message: '400 Invalid JSON payload received. Unknown name "seed": Cannot find field.' }, body), 'seed');
  assert.equal(refusedParameter({ param: null, message: '400 response_format type must be one of "text" or "json_object", but got: json_schema' }, body), 'response_format');
  assert.equal(refusedParameter({ param: null, message: '400 temperature: range: 0..1' }, body), 'temperature');
  // A request too long for the context names the token limit, but renaming it changes nothing.
  const overflow = "400 'max_tokens' or 'max_completion_tokens' is too large: 1024. This model's maximum context length is 4096 tokens and your request has 3500 input tokens";
  assert.equal(refusedParameter({ param: null, message: overflow }, body), undefined);
  // Nothing a dialect can change: messages, the model, an image the model cannot take.
  assert.equal(refusedParameter({ param: 'messages', message: "400 'messages' is required" }, body), undefined);
  assert.equal(refusedParameter({ param: null, message: '400 image input is not supported - hint: you may need to provide the mmproj' }, body), undefined);
  // Adapting: the token limit's name switches once; response_format steps down to the prompt; a dropped parameter stays dropped.
  const once = adapt(baseDialect('m'), 'max_tokens', 'x')!;
  assert.equal(once.tokenLimit, 'max_completion_tokens');
  assert.equal(adapt(once, 'max_completion_tokens', 'x'), undefined);
  const formats = [adapt(baseDialect('m'), 'response_format', 'x')!];
  formats.push(adapt(formats[0]!, 'response_format', 'x')!);
  assert.deepEqual(
    formats.map((d) => d.structured),
    ['json_object', 'prompt'],
  );
  assert.equal(adapt(formats[1]!, 'response_format', 'x'), undefined);
});

test('gpt-5-mini is sent max_completion_tokens and no temperature from the first request; its reasoning tokens are counted', async () => {
  sim.resetStats();
  const calls: CallRecord[] = [];
  const text = await caller(cache('gpt5')).text(answerReq('gpt-5-mini'), calls);
  assert.ok(text.length > 20);
  assert.deepEqual(sim.stats().byStatus, { '200': 1 }, 'no refused request');
  assert.ok((calls[0]!.reasoningTokens ?? 0) > 0, 'reasoning tokens counted');
  assert.ok(calls[0]!.completionTokens > calls[0]!.reasoningTokens!, 'reasoning is part of the completion tokens');
});

test('an unknown model behind the reasoning rules learns them from two refusals, remembered for the next caller on the same cache', async () => {
  sim.resetStats();
  const store = cache('acme');
  const json = await caller(store).json(instructionReq('acme-thinker'), 'instructions', instructionReplySchema, []);
  assert.ok(json.instructions.length >= 1);
  assert.deepEqual(sim.stats().byStatus, { '400': 2, '200': 1 }, 'refused for max_tokens, then temperature, then answered');
  // Another worker (a new cache object on the same cache) reads the lessons: no refusal again.
  sim.resetStats();
  await caller(new LocalStore(path.join(dir, 'acme'))).text(answerReq('acme-thinker', 'Count the boats.'), []);
  assert.deepEqual(sim.stats().byStatus, { '200': 1 });
});

test('a server refusing the image id (llm/imageIds.ts) is sent none from then on: one refusal, remembered for the next worker', async () => {
  sim.resetStats();
  const store = cache('gemini');
  const first = await caller(store).text(answerReq('strict-gemini'), []);
  assert.deepEqual(sim.stats().byStatus, { '400': 1, '200': 1 }, 'refused for the id once, then answered without it');
  sim.resetStats();
  await caller(new LocalStore(path.join(dir, 'gemini'))).text(answerReq('strict-gemini', 'Count the boats.'), []);
  assert.deepEqual(sim.stats().byStatus, { '200': 1 }, 'another worker reads the lesson');
  assert.ok(first.length > 0);
});

test('a server refusing json_schema gets json_object, and the JSON stage works', async () => {
  sim.resetStats();
  const json = await caller(cache('llama')).json(instructionReq('old-llama'), 'instructions', instructionReplySchema, []);
  assert.ok(json.instructions.length >= 1);
  assert.deepEqual(sim.stats().byStatus, { '400': 1, '200': 1 });
});

test('reasoning is separated from the answer: inline <think>, reasoning_content, a template-opened think, an unterminated one', async () => {
  for (const model of ['qwen-think', 'qwen-parsed']) {
    const text = await caller(cache(`think-${model}`)).text(answerReq(model), []);
    assert.ok(!/think>|Let me look/.test(text), `${model}: ${text.slice(0, 80)}`);
    const json = await caller(cache(`think-json-${model}`)).json(instructionReq(model), 'instructions', instructionReplySchema, []);
    assert.ok(json.instructions.length >= 1);
  }
  assert.deepEqual(separateReasoning('<think>\nhmm\n</think>\n\n{"a":1}'), { answer: '{"a":1}', reasoning: 'hmm' });
  assert.deepEqual(separateReasoning('hmm, opened by the template</think>Answer.'), { answer: 'Answer.', reasoning: 'hmm, opened by the template' });
  assert.deepEqual(separateReasoning('<think>cut while thin'), { answer: '', reasoning: 'cut while thin' });
  assert.deepEqual(separateReasoning('Plain answer.', { reasoning: 'apart' }), { answer: 'Plain answer.', reasoning: 'apart' });
  assert.deepEqual(separateReasoning('Plain answer.'), { answer: 'Plain answer.' });
});

test('a reply that is only thinking is a truncated reply: tried again under llm.maxTokensCeiling', async () => {
  const calls: CallRecord[] = [];
  const text = await caller(cache('only-thinking'), { maxTokens: 8, maxTokensCeiling: 2048 }).text(answerReq('qwen-think', 'Name the colours.'), calls);
  assert.ok(text.length > 0 && !text.includes('<think>'));
  assert.deepEqual(
    calls.map((c) => [c.replyTry ?? 0, c.problem]),
    [
      [0, 'truncated-reply'],
      [1, undefined],
    ],
  );
});

test('an HTML page with status 200 is not-a-completion naming the endpoint, at pre-flight and in a stage', async () => {
  await assert.rejects(caller(cache('portal')).text(answerReq('portal'), []), (err: unknown) => {
    assert.ok(err instanceof SampleRejection);
    assert.equal(
      err.reason,
      `answer: not-a-completion: model endpoint ${sim.url} (model portal): HTTP 200 text/html, not JSON: <!DOCTYPE html> <html><head><title>Network login</title></head> <body><h1>Sign in to continue</h1><form method="post" ac…`,
    );
    return true;
  });
  const config = parseBuildConfig({ buildId: 'b', output: dir, sources: [{ type: 'cc3m', uri: '/x' }], maxSamples: 1, models: { default: endpoint('portal') } });
  await assert.rejects(preflight(config, cache('portal-preflight'), '_cache/llm'), (err: unknown) => {
    assert.ok(err instanceof EndpointError);
    assert.match(
      err.message,
      new RegExp(
        `^model endpoint ${sim.url.replace(/[.]/g, '\\.')} \\(model portal\\): not-a-completion: HTTP 200 text/html, not JSON: <!DOCTYPE html>.* — is baseUrl an OpenAI-compatible API \\(…/v1\\), not a web page or a login proxy\\?$`,
      ),
    );
    return true;
  });
});

test('a reply past llm.maxReplyBytes is reply-too-large, dropped unread; a trickling reply times out naming endpoint, model and time', async () => {
  sim.setFaults({ replyPadBytes: 2 * 1024 * 1024 });
  try {
    await assert.rejects(caller(cache('large'), { maxReplyBytes: 64 * 1024 }).text(answerReq('mmif-sim-vlm'), []), (err: unknown) => {
      assert.ok(err instanceof SampleRejection);
      assert.equal(
        err.reason,
        `answer: reply-too-large: model endpoint ${sim.url} (model mmif-sim-vlm): the reply went past 65536 bytes (llm.maxReplyBytes), and was dropped unread from there`,
      );
      return true;
    });
  } finally {
    sim.setFaults({ replyPadBytes: 0 });
  }
  sim.setFaults({ trickleMs: 100 });
  try {
    const slow = new ModelCaller(cache('trickle'), '_cache/llm', { ...llm, timeoutMs: 400 }, { retry: { maxAttempts: 2, baseDelayMs: 0 } });
    await assert.rejects(slow.text(answerReq('mmif-sim-vlm', 'Describe it slowly.'), []), (err: unknown) => {
      assert.ok(err instanceof EndpointTimeout);
      assert.equal(err.message, `answer: model endpoint ${sim.url} (model mmif-sim-vlm): no complete reply within 400 ms (llm.timeoutMs), 2 attempts`);
      return true;
    });
  } finally {
    sim.setFaults({ trickleMs: 0 });
  }
});

test('an endpoint that refuses connections fails naming the stage, endpoint, model and the connection error, its attempts counted as transient', async () => {
  const down = new ModelCaller(cache('down'), '_cache/llm', llm, { retry: { maxAttempts: 2, baseDelayMs: 0 } });
  const tallies = noTallies();
  const req = { ...answerReq('mmif-sim-vlm'), endpoint: { ...endpoint('mmif-sim-vlm'), baseUrl: 'http://127.0.0.1:9/v1' } };
  await assert.rejects(
    withTallies(tallies, () => down.text(req, [])),
    (err: unknown) => {
      assert.ok(err instanceof EndpointUnreachable);
      assert.equal(err.message, 'answer: model endpoint http://127.0.0.1:9/v1 (model mmif-sim-vlm): cannot connect: connect ECONNREFUSED 127.0.0.1:9, 2 attempts');
      return true;
    },
  );
  assert.deepEqual(tallies, { failedAttempts: { transient: 2 }, replicas: {} }, 'an endpoint of one server has no replica counts');
});

test('pre-flight learns a dialect with the stages’ own request and reports what it learned', async () => {
  const config = parseBuildConfig({ buildId: 'b', output: dir, sources: [{ type: 'cc3m', uri: '/x' }], maxSamples: 1, models: { default: endpoint('acme-thinker') } });
  sim.resetStats();
  const store = cache('acme-preflight');
  const [outcome] = await preflight(config, store, '_cache/llm');
  assert.deepEqual(
    outcome!.lessons?.map((l) => l.replace(/ \(the endpoint answered: .*\)$/, '')),
    ['max_tokens: sends max_completion_tokens instead', 'temperature: sends no temperature'],
  );
  // The stages then send the learned body at once.
  sim.resetStats();
  await caller(store).json(instructionReq('acme-thinker'), 'instructions', instructionReplySchema, []);
  assert.deepEqual(sim.stats().byStatus, { '200': 1 });
});

test('refusals in vLLM’s flat error body and Gemini’s list are read as well as OpenAI’s (llm/errorBody.ts)', async () => {
  // A server refusing `seed` as Gemini's compatible endpoint does and `max_tokens` as an older vLLM does.
  const refused: string[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      const reply = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if ('seed' in body) {
        refused.push('seed');
        return reply(400, [{ error: { code: 400, message: 'Invalid JSON payload received. Unknown name "seed": Cannot find field.', status: 'INVALID_ARGUMENT' } }]);
      }
      if ('max_tokens' in body) {
        refused.push('max_tokens');
        return reply(400, { object: 'error', message: 'max_tokens is not supported, use max_completion_tokens', type: 'BadRequestError', param: 'max_tokens', code: 400 });
      }
      reply(200, {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'A quiet harbour.' }, finish_reason: 'stop' }],
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const req = { stage: 'answer' as const, endpoint: { ...endpoint('compat-vlm'), baseUrl: url }, prompt: renderAnswerPrompt('Describe it.', []), image, seed: 4 };
    assert.equal(await caller(cache('compat')).text(req, []), 'A quiet harbour.');
    assert.deepEqual(refused, ['seed', 'max_tokens']);
  } finally {
    server.close();
    server.closeAllConnections();
  }
});

test('Azure OpenAI: the deployment URL with api-version and the api-key header, through the SDK’s Azure client; the reasoning rules apply by model', async () => {
  const key = 'azure-key-0123456789';
  process.env.MMIF_TEST_AZURE_KEY = key;
  sim.setFaults({ requiredApiKey: key });
  try {
    sim.resetStats();
    const resource = sim.url.replace(/\/v1$/, '');
    const azure = {
      model: 'gpt-5-mini',
      baseUrl: resource,
      apiKeyEnv: 'MMIF_TEST_AZURE_KEY',
      concurrency: 4,
      batch: false,
      azure: { deployment: 'prod-gpt5', apiVersion: '2024-10-21' },
    };
    const calls: CallRecord[] = [];
    const text = await caller(cache('azure')).text({ ...answerReq('gpt-5-mini'), endpoint: azure }, calls);
    assert.ok(text.length > 20);
    assert.deepEqual(sim.stats().byStatus, { '200': 1 }, 'answered on the Azure route, key accepted, no refusal');
    assert.ok((calls[0]!.reasoningTokens ?? 0) > 0);
    const config = parseBuildConfig({ buildId: 'b', output: dir, sources: [{ type: 'cc3m', uri: '/x' }], maxSamples: 1, models: { default: azure } });
    const [outcome] = await preflight(config, cache('azure-preflight'), '_cache/llm');
    assert.equal(outcome!.endpoint, `${resource}/openai/deployments/prod-gpt5`);
    assert.equal(outcome!.unreachable, undefined);
    // The key is required: Azure has no keyless endpoint.
    assert.throws(
      () => resolveEndpoint({ ...azure, apiKeyEnv: 'MMIF_TEST_NO_AZURE_KEY' }),
      (err: unknown) => err instanceof EndpointError && /the API key variable MMIF_TEST_NO_AZURE_KEY is not set$/.test(err.message),
    );
  } finally {
    sim.setFaults({ requiredApiKey: '' });
    delete process.env.MMIF_TEST_AZURE_KEY;
  }
});

test('an Azure endpoint with batch: true is a config error', () => {
  assert.throws(
    () =>
      parseBuildConfig({
        buildId: 'b',
        output: dir,
        sources: [{ type: 'cc3m', uri: '/x' }],
        maxSamples: 1,
        models: { default: { model: 'gpt-4o', baseUrl: 'https://r.openai.azure.com', batch: true, azure: { apiVersion: '2024-10-21' } } },
      }),
    /models\.default\.batch: the Batch API is not used for Azure OpenAI endpoints/,
  );
});

test('SIM_DIALECT and SIM_MODEL_DIALECTS set the simulator’s dialects; an unknown dialect is an error naming the variable', () => {
  const options = simulatorOptionsFromEnv({
    SIM_DIALECT: 'inline-think',
    SIM_MODEL_DIALECTS: 'gpt-5-mini=openai-reasoning, org/model=html-proxy',
    SIM_REPLY_PAD_BYTES: '100',
    SIM_TRICKLE_MS: '5',
  });
  assert.deepEqual(options.faults, { replyPadBytes: 100, trickleMs: 5, dialect: 'inline-think', modelDialects: { 'gpt-5-mini': 'openai-reasoning', 'org/model': 'html-proxy' } });
  assert.throws(() => simulatorOptionsFromEnv({ SIM_DIALECT: 'vllm' }), new RegExp(`SIM_DIALECT: unknown dialect "vllm" \\(one of ${SIM_DIALECTS.join(', ')}\\)`));
  assert.throws(() => simulatorOptionsFromEnv({ SIM_MODEL_DIALECTS: 'gpt-5-mini' }), /SIM_MODEL_DIALECTS: "gpt-5-mini" is not model=dialect/);
});

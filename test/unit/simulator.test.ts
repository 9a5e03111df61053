import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { DEFAULT_FAULTS } from '../../simulator/faults.js';
import { ChatRequestSchema, generateReply } from '../../simulator/replies.js';
import { simulatorOptionsFromEnv, startSimulator, type SimulatorHandle } from '../../simulator/server.js';

const SEED = 7;
let sim: SimulatorHandle;
let client: OpenAI;

before(async () => {
  sim = await startSimulator({ seed: SEED });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
});

after(async () => {
  await sim.close();
});

// Tests share one server, so each starts from default faults and zeroed stats.
beforeEach(() => {
  sim.setFaults({ ...DEFAULT_FAULTS });
  sim.resetStats();
});

// ---------------------------------------------------------------------------------------
// Prompts and helpers

const IMAGE_URL = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////2wBDAf//////////////////////////////////////////////////////////////////////////////////////wAARCAABAAEDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAP/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFAEBAAAAAAAAAAAAAAAAAAAAAP/EABQRAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEAAhEDEQA/AKAA/9k=';

const OFFERED_LINES = [
  '- paragraph_number_limit (C.1 Paragraph limit): Constraint that specifies the number of paragraphs in the response. Example: "Your response must consist of exactly 4 paragraphs."',
  '- sentence_number_limit (C.2 Sentence limit): Number of sentences per paragraph. Example: "Each paragraph should contain 3 sentences."',
  '- word_count_range_limit (C.3 Word count): Total words. Example: "Your response must be between 100 and 200 words."',
  '- mention (K.1 Mention): A word that must appear. Example: "Mention the word \'sky\' at least twice."',
  '- not_mention (K.2 Not mention): Words to avoid. Example: "Do not mention the word \'blue\'."',
  '- prefix_and_suffix (A.1 Prefix): How the answer starts. Example: "Start your answer with \'Well\'"',
  '- tone_requirement (T.1 Tone): The tone. Example: "Use a formal tone."',
  '- target_audience_requirement (T.2 Audience): The reader. Example: "Write for children."',
  '- perspective_requirement (T.3 Perspective): The point of view. Example: "Write in the first person."',
  '- title_requirements (F.1 Title): A title. Example: "Add a title in <<double angular brackets>>."',
  '- emoji_usage (F.2 Emoji): Emoji use. Example: "Use exactly one emoji in your response."',
  '- table_format (F.3 Table): A table. Example: "Include a markdown table with two columns."',
];
const OFFERED_KEYS = OFFERED_LINES.map((line) => /^- ([a-z_]+) \(/.exec(line)?.[1]);

function constraintsPrompt(lines: readonly string[], topic: string): string {
  return `You are an expert in add appropriate constraints to the instruction.\nInstruction: Describe ${topic}.\nConstraint types:\n${lines.join('\n')}`;
}

function compatibilityPrompt(count: number, topic: string): string {
  const lines = Array.from({ length: count }, (_, i) => `${i + 1}. [type_${i + 1}] Constraint number ${i + 1} about ${topic}.`);
  return `You are checking a list of constraints for conflicts.\n${lines.join('\n')}`;
}

function answerPrompt(instruction: string, constraints: readonly string[]): string {
  const numbered = constraints.map((constraint, i) => `${i + 1}. ${constraint}`).join('\n');
  return `## Task Description\n${instruction}\n\n## Constraints\nYou must strictly follow the constraints below:\n${numbered}`;
}

function userRequest(text: string, extra: Partial<ChatCompletionCreateParamsNonStreaming> = {}): ChatCompletionCreateParamsNonStreaming {
  return { model: 'sim-vlm', messages: [{ role: 'user', content: text }], ...extra };
}

function jsonSchemaFormat(name: string): ChatCompletionCreateParamsNonStreaming['response_format'] {
  return { type: 'json_schema', json_schema: { name, schema: { type: 'object' } } };
}

function firstChoice(completion: ChatCompletion): ChatCompletion.Choice {
  const choice = completion.choices[0];
  assert.ok(choice, 'completion has a choice');
  return choice;
}

function contentOf(completion: ChatCompletion): string {
  const content = firstChoice(completion).message.content;
  assert.equal(typeof content, 'string');
  return content ?? '';
}

async function complete(body: ChatCompletionCreateParamsNonStreaming): Promise<ChatCompletion> {
  return client.chat.completions.create(body);
}

function postRaw(body: string, path = '/chat/completions'): Promise<Response> {
  return fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

function adminUrl(path: string): string {
  return sim.url.replace(/\/v1$/, `/admin/${path}`);
}

const ErrorBody = z.object({
  error: z.object({ message: z.string().min(1), type: z.string().min(1), code: z.string().nullable() }),
});
const InstructionsReply = z.object({ instructions: z.array(z.string().min(5)).min(3).max(6) }).strict();
const ConstraintsReply = z
  .object({ constraints: z.array(z.object({ type: z.string(), value: z.string().min(1) }).strict()) })
  .strict();
const CompatibilityReply = z
  .object({
    keep: z.array(z.number().int()),
    dropped: z.array(z.object({ index: z.number().int(), reason: z.string().min(1) }).strict()),
  })
  .strict();

// ---------------------------------------------------------------------------------------
// Stages

test('instructions: schema name or prompt marker gives 3-6 instructions in a chat.completion', async () => {
  const bySchema = await complete(
    userRequest('List instructions for this photo.', { response_format: jsonSchemaFormat('instructions') }),
  );
  const byMarker = await complete(
    userRequest('You are an expert in generating concise instructions for images. Return JSON.'),
  );
  for (const completion of [bySchema, byMarker]) {
    InstructionsReply.parse(JSON.parse(contentOf(completion)));
    assert.match(completion.id, /^chatcmpl-sim-[0-9a-f]{16}$/);
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.created, 0);
    assert.equal(completion.model, 'sim-vlm');
    assert.equal(completion.system_fingerprint, 'mmif-simulator');
    assert.equal(firstChoice(completion).finish_reason, 'stop');
    assert.equal(firstChoice(completion).message.role, 'assistant');
  }
});

test('constraints: 4-9 distinct offered keys, concrete sentences for common keys', async () => {
  for (const topic of ['a harbour', 'a market', 'a forest', 'a kitchen', 'a stadium', 'a library']) {
    const completion = await complete(
      userRequest(constraintsPrompt(OFFERED_LINES, topic), { response_format: jsonSchemaFormat('constraints') }),
    );
    const { constraints } = ConstraintsReply.parse(JSON.parse(contentOf(completion)));
    const types = constraints.map((constraint) => constraint.type);
    assert.ok(types.length >= 4 && types.length <= 9, `4-9 constraints, got ${types.length}`);
    assert.equal(new Set(types).size, types.length, 'no duplicate types');
    for (const { type, value } of constraints) {
      assert.ok(OFFERED_KEYS.includes(type), `${type} was offered`);
      if (type === 'paragraph_number_limit') assert.match(value, /^Your response must consist of exactly [2-4] paragraphs\.$/);
      if (type === 'emoji_usage') assert.equal(value, 'Use exactly one emoji in your response.');
    }
  }
});

test('constraints: with few offered keys all are used, unknown keys take their example (marker only)', async () => {
  const lines = [OFFERED_LINES[0], OFFERED_LINES[10], OFFERED_LINES[11]].filter((line) => line !== undefined);
  const completion = await complete(userRequest(constraintsPrompt(lines, 'a bridge')));
  const { constraints } = ConstraintsReply.parse(JSON.parse(contentOf(completion)));
  assert.deepEqual(
    constraints.map((constraint) => constraint.type),
    ['paragraph_number_limit', 'emoji_usage', 'table_format'],
  );
  assert.equal(constraints[2]?.value, 'Include a markdown table with two columns.');
});

test('compatibility: every index kept or dropped exactly once; some lists lose one', async () => {
  let lists = 0;
  let withDrop = 0;
  for (const topic of ['light', 'colour', 'people', 'weather', 'water', 'roads', 'trees', 'sky', 'birds', 'cars', 'walls', 'boats']) {
    const completion = await complete(
      userRequest(compatibilityPrompt(5, topic), { response_format: jsonSchemaFormat('compatibility') }),
    );
    const { keep, dropped } = CompatibilityReply.parse(JSON.parse(contentOf(completion)));
    const all = [...keep, ...dropped.map((item) => item.index)].sort((a, b) => a - b);
    assert.deepEqual(all, [1, 2, 3, 4, 5]);
    assert.ok(dropped.length <= 1);
    lists++;
    if (dropped.length === 1) withDrop++;
  }
  assert.ok(withDrop > 0 && withDrop < lists, `some but not all lists drop one (${withDrop}/${lists})`);
});

test('answer: honours "exactly N paragraphs" and the required prefix', async () => {
  const three = contentOf(
    await complete(
      userRequest(
        answerPrompt('Describe the lighthouse and the stormy weather.', [
          'Your response must consist of exactly 3 paragraphs.',
          "Start your answer with 'In this image'",
        ]),
      ),
    ),
  );
  const paragraphs = three.split('\n\n');
  assert.equal(paragraphs.length, 3);
  assert.ok(paragraphs.every((paragraph) => paragraph.trim().length > 20 && !paragraph.includes('\n')));
  assert.ok(three.startsWith('In this image'), three.slice(0, 40));

  const five = contentOf(
    await complete(userRequest(answerPrompt('Tell a story about the market.', ['Write exactly five paragraphs.']))),
  );
  assert.equal(five.split('\n\n').length, 5);

  const free = contentOf(await complete(userRequest(answerPrompt('Describe the harbour at dawn.', ['Use a calm tone.']))));
  const freeCount = free.split('\n\n').length;
  assert.ok(freeCount >= 2 && freeCount <= 3, `2-3 paragraphs, got ${freeCount}`);
});

test('max_tokens cuts the reply with finish_reason length', async () => {
  const completion = await complete(userRequest(answerPrompt('Describe the scene.', []), { max_tokens: 10 }));
  assert.equal(firstChoice(completion).finish_reason, 'length');
  assert.equal(contentOf(completion).length, 40);
  assert.equal(completion.usage?.completion_tokens, 10);
});

// ---------------------------------------------------------------------------------------
// Determinism and usage

test('determinism: same request gives identical bytes; seed or message changes the reply', async () => {
  const body = JSON.stringify(userRequest(answerPrompt('Describe the old bridge.', ['Use a formal tone.'])));
  const first = await (await postRaw(body)).text();
  const second = await (await postRaw(body)).text();
  assert.equal(second, first);

  const sameSeed = await startSimulator({ seed: SEED });
  const otherSeed = await startSimulator({ seed: SEED + 1 });
  try {
    const post = (url: string) => fetch(`${url}/chat/completions`, { method: 'POST', body }).then((res) => res.json());
    const fromSameSeed = (await post(sameSeed.url)) as ChatCompletion;
    const fromOtherSeed = (await post(otherSeed.url)) as ChatCompletion;
    assert.equal(JSON.stringify(fromSameSeed), first, 'another server with the same seed replies identically');
    const reference = JSON.parse(first) as ChatCompletion;
    assert.notEqual(contentOf(fromOtherSeed), contentOf(reference));
    assert.notEqual(fromOtherSeed.id, reference.id);
    // The server adds nothing on top of the pure reply function.
    const pure = generateReply(ChatRequestSchema.parse(JSON.parse(body)), SEED);
    assert.equal(pure.content, contentOf(reference));
    assert.equal(pure.id, reference.id);
  } finally {
    await Promise.all([sameSeed.close(), otherSeed.close()]);
  }

  const otherMessage = await complete(userRequest(answerPrompt('Describe the new bridge.', ['Use a formal tone.'])));
  assert.notEqual(contentOf(otherMessage), contentOf(JSON.parse(first) as ChatCompletion));
});

test('image_url parts are accepted and charged in prompt tokens', async () => {
  const text = answerPrompt('Describe this photo.', []);
  const textOnly = await complete(userRequest(text));
  const withImage = await complete({
    model: 'sim-vlm',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: IMAGE_URL, detail: 'low' } },
          { type: 'text', text },
        ],
      },
    ],
  });
  assert.equal(withImage.usage?.prompt_tokens, (textOnly.usage?.prompt_tokens ?? 0) + 85);
  const usage = withImage.usage;
  assert.ok(usage);
  assert.equal(usage.completion_tokens, Math.ceil(contentOf(withImage).length / 4));
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
});

// ---------------------------------------------------------------------------------------
// Faults and latency

test('fault 429: Retry-After header and OpenAI-style error body', async () => {
  sim.setFaults({ rate429: 1, retryAfterSeconds: 3 });
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(ErrorBody.parse(await res.json()).error.code, 'rate_limit_exceeded');
  await assert.rejects(complete(userRequest('hello again')), OpenAI.RateLimitError);
});

test('fault 500: OpenAI-style server error', async () => {
  sim.setFaults({ rate500: 1 });
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 500);
  assert.equal(ErrorBody.parse(await res.json()).error.type, 'server_error');
  await assert.rejects(complete(userRequest('hello again')), OpenAI.InternalServerError);
});

test('fault hang: clients time out first; otherwise a 504 after hangMs', async () => {
  sim.setFaults({ rateHang: 1, hangMs: 300 });
  await assert.rejects(
    client.chat.completions.create(userRequest('hello'), { timeout: 100 }),
    OpenAI.APIConnectionTimeoutError,
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(sim.stats().inFlight, 0, 'an abandoned hang is released');

  const started = performance.now();
  const res = await postRaw(JSON.stringify(userRequest('hello')));
  assert.equal(res.status, 504);
  ErrorBody.parse(await res.json());
  assert.ok(performance.now() - started >= 300);
});

test('fault malformed: invalid JSON for JSON stages, empty content for answers', async () => {
  sim.setFaults({ rateMalformed: 1 });
  const json = await complete(userRequest('Anything.', { response_format: jsonSchemaFormat('instructions') }));
  assert.equal(firstChoice(json).finish_reason, 'stop');
  assert.throws(() => JSON.parse(contentOf(json)), SyntaxError);
  assert.ok(contentOf(json).length > 0);
  const answer = await complete(userRequest(answerPrompt('Describe the scene.', [])));
  assert.equal(contentOf(answer), '');
});

test('fault truncated: about half the normal content with finish_reason length', async () => {
  const request = userRequest('Anything.', { response_format: jsonSchemaFormat('instructions') });
  const normal = contentOf(await complete(request));
  sim.setFaults({ rateTruncated: 1 });
  const truncated = await complete(request);
  assert.equal(firstChoice(truncated).finish_reason, 'length');
  assert.equal(contentOf(truncated), normal.slice(0, Math.ceil(normal.length / 2)));
});

test('maxConcurrent: requests beyond the cap get 429 with Retry-After', async () => {
  sim.setFaults({ maxConcurrent: 2, latencyMs: 300 });
  const responses = await Promise.all(
    Array.from({ length: 5 }, (_, i) => postRaw(JSON.stringify(userRequest(`request ${i}`)))),
  );
  const statuses = responses.map((res) => res.status).sort();
  assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
  for (const res of responses.filter((res) => res.status === 429)) assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(sim.stats().maxInFlight, 2);
});

test('a retry of a faulted request can succeed, and the fault sequence is reproducible', async () => {
  sim.setFaults({ rate500: 0.5 });
  const body = JSON.stringify(userRequest('retry me'));
  const attempt = async () => (await postRaw(body)).status;
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push(await attempt());
  assert.ok(statuses.includes(500) && statuses.includes(200), statuses.join(','));
  assert.ok(statuses.some((status, i) => status === 200 && statuses[i - 1] === 500), 'a 500 is followed by a 200');

  sim.resetStats(); // also restarts the attempt counters
  const replay: number[] = [];
  for (let i = 0; i < 12; i++) replay.push(await attempt());
  assert.deepEqual(replay, statuses);
});

test('latency is applied to every request', async () => {
  sim.setFaults({ latencyMs: 200, latencyJitterMs: 50 });
  const started = performance.now();
  await complete(userRequest('slow'));
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 200, `took ${elapsed} ms`);
});

// ---------------------------------------------------------------------------------------
// Stats, admin and bad requests

test('stats count requests, statuses, stages, tokens and concurrency', async () => {
  sim.setFaults({ latencyMs: 150 });
  const completions = await Promise.all([
    complete(userRequest('x', { response_format: jsonSchemaFormat('instructions') })),
    complete(userRequest(constraintsPrompt(OFFERED_LINES, 'a garden'))),
    complete(userRequest(answerPrompt('Describe the garden.', []))),
  ]);
  assert.equal((await postRaw('not json')).status, 400);

  const stats = sim.stats();
  assert.deepEqual(stats, (await (await fetch(adminUrl('stats'))).json()) as unknown);
  assert.equal(stats.requests, 4);
  assert.equal(stats.completed, 3);
  assert.deepEqual(stats.byStatus, { '200': 3, '400': 1 });
  assert.deepEqual(stats.byStage, { instructions: 1, constraints: 1, compatibility: 0, answer: 1 });
  assert.equal(stats.inFlight, 0);
  assert.equal(stats.maxInFlight, 3);
  const sum = (pick: (usage: NonNullable<ChatCompletion['usage']>) => number) =>
    completions.reduce((total, completion) => total + (completion.usage ? pick(completion.usage) : 0), 0);
  assert.equal(stats.promptTokens, sum((usage) => usage.prompt_tokens));
  assert.equal(stats.completionTokens, sum((usage) => usage.completion_tokens));
});

test('/admin/faults merges and validates; /admin/reset zeroes stats but keeps faults', async () => {
  const merged = await fetch(adminUrl('faults'), { method: 'POST', body: JSON.stringify({ rate500: 0.25 }) });
  assert.equal(merged.status, 200);
  assert.deepEqual(await merged.json(), { ...DEFAULT_FAULTS, rate500: 0.25 });
  for (const invalid of [{ rate500: 2 }, { bogus: 1 }]) {
    const res = await fetch(adminUrl('faults'), { method: 'POST', body: JSON.stringify(invalid) });
    assert.equal(res.status, 400);
    ErrorBody.parse(await res.json());
  }

  await complete(userRequest('count me'));
  assert.equal(sim.stats().requests, 1);
  const reset = await fetch(adminUrl('reset'), { method: 'POST' });
  assert.equal(reset.status, 200);
  assert.equal(sim.stats().requests, 0);
  assert.deepEqual(sim.stats().byStatus, {});
  assert.equal(sim.setFaults({}).rate500, 0.25);
});

test('bad requests get 400, unknown routes 404; /v1/models lists models', async () => {
  const cases = [
    'not json',
    JSON.stringify({ ...userRequest('hi'), stream: true }),
    JSON.stringify({ model: 'sim-vlm' }),
    JSON.stringify({ model: 'sim-vlm', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }),
  ];
  for (const body of cases) {
    const res = await postRaw(body);
    assert.equal(res.status, 400, body);
    assert.equal(ErrorBody.parse(await res.json()).error.type, 'invalid_request_error');
  }
  const missing = await fetch(`${sim.url}/embeddings`);
  assert.equal(missing.status, 404);
  ErrorBody.parse(await missing.json());

  const models = await client.models.list();
  assert.ok(models.data.length >= 1);
});

test('simulatorOptionsFromEnv reads SIM_* variables and names the bad one', () => {
  assert.deepEqual(
    simulatorOptionsFromEnv({ SIM_PORT: '8089', SIM_SEED: '42', SIM_RATE_429: '0.1', SIM_MAX_CONCURRENT: '4', SIM_RATE_500: '' }),
    { port: 8089, seed: 42, faults: { rate429: 0.1, maxConcurrent: 4 } },
  );
  assert.deepEqual(simulatorOptionsFromEnv({}), {});
  assert.throws(() => simulatorOptionsFromEnv({ SIM_RATE_429: '1.5' }), /SIM_RATE_429/);
  assert.throws(() => simulatorOptionsFromEnv({ SIM_PORT: 'eighty' }), /SIM_PORT/);
  assert.throws(() => simulatorOptionsFromEnv({ SIM_LATENCY_MS: '-1' }), /SIM_LATENCY_MS/);
});

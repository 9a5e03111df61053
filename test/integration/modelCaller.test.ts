import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SampleRejection } from '../../domain/rejection.js';
import { EndpointError } from '../../llm/endpointError.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { EndpointGaveUp } from '../../llm/sendCompletion.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { eventually } from '../harness/datasetChecks.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sim: SimulatorHandle;
let dir: string;
const llm = defaultLlmSettings();
const image = { jpeg: Buffer.from('not really a jpeg, the simulator only counts it'), sha256: 'abc123' };

before(async () => {
  sim = await startSimulator({ seed: 3 });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-caller-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

function caller(sub: string, overrides: Partial<typeof llm> = {}) {
  return new ModelCaller(new LocalStore(path.join(dir, sub)), '_cache/llm', { ...llm, ...overrides });
}
const endpoint = () => ({ model: 'mmif-sim-vlm', baseUrl: sim.url, apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false });

test('a JSON stage returns the validated reply, labelled simulated, and the cache answers the repeat', async () => {
  sim.setFaults({ rateMalformed: 0 });
  sim.resetStats();
  const models = caller('cache');
  const req = { stage: 'instruction' as const, endpoint: endpoint(), prompt: renderInstructionPrompt(['Describe it.']), image };
  const first: CallRecord[] = [];
  const a = await models.json(req, 'instructions', instructionReplySchema, first);
  assert.ok(a.instructions.length >= 1);
  assert.deepEqual(
    first.map((c) => [c.cached, c.simulated]),
    [[false, true]],
  );
  assert.ok(first[0]!.promptTokens > 0);

  const second: CallRecord[] = [];
  const b = await models.json(req, 'instructions', instructionReplySchema, second);
  assert.deepEqual(b, a);
  assert.deepEqual(
    second.map((c) => c.cached),
    [true],
  );
  assert.equal(sim.stats().requests, 1, 'the repeat must not reach the endpoint');
});

test('a malformed JSON reply gets a repair request per try; after every try the sample is rejected with the cause', async () => {
  sim.resetStats();
  sim.setFaults({ rateMalformed: 1 });
  try {
    const calls: CallRecord[] = [];
    await assert.rejects(
      caller('malformed').json({ stage: 'instruction', endpoint: endpoint(), prompt: renderInstructionPrompt(['Other.']), image }, 'instructions', instructionReplySchema, calls),
      (err: unknown) =>
        err instanceof SampleRejection &&
        /^instruction: invalid-json: after repair: not valid JSON.*\(3 tries\)$/.test(err.reason) &&
        err.details?.modelCall?.status === 200 &&
        err.details.modelCall.endpoint === sim.url,
    );
    // Three tries (new seeds), each a first request and a repair; every one recorded with its problem.
    assert.deepEqual(
      calls.map((c) => [c.replyTry ?? 0, c.problem]),
      [
        [0, 'invalid-json'],
        [0, 'invalid-json'],
        [1, 'invalid-json'],
        [1, 'invalid-json'],
        [2, 'invalid-json'],
        [2, 'invalid-json'],
      ],
    );
    assert.equal(sim.stats().requests, 6);
  } finally {
    sim.setFaults({ rateMalformed: 0 });
  }
});

test('a reply cut by the token limit is tried again with llm.maxTokensCeiling tokens', async () => {
  sim.resetStats();
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the long harbour scene.', []), image };
  // 5 tokens cut every answer (the simulator honours max_tokens); the ceiling lets the second try finish.
  const calls: CallRecord[] = [];
  const text = await caller('ceiling', { maxTokens: 5, maxTokensCeiling: 4096 }).text(req, calls);
  assert.ok(text.length > 20, text);
  assert.deepEqual(
    calls.map((c) => [c.replyTry ?? 0, c.problem]),
    [
      [0, 'truncated-reply'],
      [1, undefined],
    ],
  );
  // Without a ceiling every try is cut, and the sample is rejected for it.
  await assert.rejects(
    caller('no-ceiling', { maxTokens: 5 }).text(req, []),
    (err: unknown) => err instanceof SampleRejection && /^answer: truncated-reply: .*finish_reason length\) \(3 tries\)$/.test(err.reason),
  );
});

test("unusable cached replies: this build's own are past tries (not paid again), another build's count as misses", async () => {
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the quay.', []), image };
  const store = 'shared-cache';
  const owned = (owner: string) => new ModelCaller(new LocalStore(path.join(dir, store)), '_cache/llm', { ...llm, replyTries: 2 }, { owner });
  sim.setFaults({ rateMalformed: 1 }); // answers come back empty
  try {
    await assert.rejects(owned('build-a').text(req, []), (err: unknown) => err instanceof SampleRejection && /empty-reply/.test(err.reason));
  } finally {
    sim.setFaults({ rateMalformed: 0 });
  }
  sim.resetStats();
  // The same build again (a retried activity): its tries are replayed from the cache, nothing is paid.
  await assert.rejects(owned('build-a').text(req, []), (err: unknown) => err instanceof SampleRejection && /empty-reply/.test(err.reason));
  assert.equal(sim.stats().requests, 0);
  // Another build on the same cache: the empty replies are misses, asked again now the endpoint is healthy.
  const calls: CallRecord[] = [];
  const text = await owned('build-b').text(req, calls);
  assert.ok(text.trim().length > 0);
  assert.equal(sim.stats().requests, 1);
  assert.deepEqual(
    calls.map((c) => [c.cached, c.problem]),
    [
      [true, 'empty-reply'],
      [true, 'empty-reply'],
      [false, undefined],
    ],
  );
  // The good reply is cached for good: both builds now read it without a request.
  assert.equal(await owned('build-a').text(req, []), text);
  assert.equal(await owned('build-b').text(req, []), text);
  assert.equal(sim.stats().requests, 1);
});

test('a rerun of a sample the stage rejected for unusable replies asks again; a retried execution of that rerun replays its own tries', async () => {
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the lighthouse.', []), image };
  const models = new ModelCaller(new LocalStore(path.join(dir, 'reruns')), '_cache/llm', { ...llm, replyTries: 2 }, { owner: 'build-a' });
  const rejected = (err: unknown) => err instanceof SampleRejection && /empty-reply/.test(err.reason);
  sim.setFaults({ rateMalformed: 1 });
  try {
    await assert.rejects(models.forExecution('s1/answer').text(req, []), rejected);
    sim.resetStats();
    // Rerun 1 while the endpoint is still broken: the first execution's tries are asked again.
    await assert.rejects(models.forExecution('s1/answer', 1).text(req, []), rejected);
    assert.equal(sim.stats().requests, 2);
    // Its activity retried: rerun 1's own tries are replayed, not paid again.
    sim.resetStats();
    await assert.rejects(models.forExecution('s1/answer', 1).text(req, []), rejected);
    assert.equal(sim.stats().requests, 0);
  } finally {
    sim.setFaults({ rateMalformed: 0 });
  }
  // Rerun 2, the endpoint fixed: one request, and the good reply is the build's for good.
  const calls: CallRecord[] = [];
  const text = await models.forExecution('s1/answer', 2).text(req, calls);
  assert.equal(sim.stats().requests, 1);
  assert.deepEqual(
    calls.map((c) => [c.cached, c.problem]),
    [
      [true, 'empty-reply'],
      [true, 'empty-reply'],
      [false, undefined],
    ],
  );
  assert.equal(await models.forExecution('s1/answer').text(req, []), text);
  assert.equal(sim.stats().requests, 1);
});

test('a cache hit on a reply an earlier, unrecorded execution of the same stage paid for counts as paid', async () => {
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the lighthouse.', []), image };
  const models = new ModelCaller(new LocalStore(path.join(dir, 'recovered')), '_cache/llm', llm, {
    owner: 'build-a',
    prices: { 'mmif-sim-vlm': { inputPerMTok: 2, outputPerMTok: 8, batchDiscount: 0.5 } },
  });
  const first: CallRecord[] = [];
  await models.forExecution('s1/answer').text(req, first); // its worker dies before the stage state is written
  const again: CallRecord[] = [];
  await models.forExecution('s1/answer').text(req, again);
  assert.equal(again[0]!.recovered, true);
  assert.equal(again[0]!.cached, false);
  assert.equal(again[0]!.costUsd, first[0]!.costUsd);
  assert.ok(first[0]!.costUsd > 0);
  // Another sample (or stage) reading the same reply is an ordinary hit: paid once, saved here.
  const other: CallRecord[] = [];
  await models.forExecution('s2/answer').text(req, other);
  assert.deepEqual([other[0]!.cached, other[0]!.recovered, other[0]!.costUsd], [true, undefined, 0]);
});

test('transient 500s are retried by the client and succeed', async () => {
  sim.resetStats();
  // Every attempt fails until two 500s have been answered; the retries after that succeed.
  sim.setFaults({ rate500: 1 });
  try {
    // Short backoffs, and attempts enough to outlast the wait for the second 500.
    const reply = caller('flaky', { retry: { maxAttempts: 20, baseDelayMs: 50, maxDelayMs: 200 } }).text(
      { stage: 'answer', endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the flaky scene.', []), image },
      [],
    );
    await eventually(() => (sim.stats().byStatus['500'] ?? 0) >= 2, 30_000, 'two 500s');
    sim.setFaults({ rate500: 0 });
    assert.ok((await reply).length > 0);
    const stats = sim.stats();
    assert.equal(stats.completed, 1);
    assert.equal(stats.requests, stats.byStatus['500']! + 1, 'every 500 was retried, and the retry after them succeeded');
  } finally {
    sim.setFaults({ rate500: 0 });
  }
});

test('a request a killed execution sent but never saw answered is counted, once, by the execution that makes it again', async () => {
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the ferry.', []), image };
  const models = new ModelCaller(new LocalStore(path.join(dir, 'lost')), '_cache/llm', { ...llm, timeoutMs: 300 }, { owner: 'build-a', retry: { maxAttempts: 1 } });
  // The first execution's request hangs past its timeout: sent, never answered to it (as when its worker dies).
  sim.setFaults({ rateHang: 1, hangMs: 2_000 });
  try {
    await assert.rejects(models.forExecution('s1/answer').text(req, []));
  } finally {
    sim.setFaults({ rateHang: 0 });
  }
  const calls: CallRecord[] = [];
  await models.forExecution('s1/answer').text(req, calls);
  assert.deepEqual(
    calls.map((c) => [c.cached, c.lostInFlight]),
    [
      [false, undefined],
      [false, true],
    ],
  );
  assert.equal(calls[1]!.costUsd, calls[0]!.costUsd);
  // Counted once: a third execution finds the reply cached (recovered, as no stage state recorded it), no lost request.
  const third: CallRecord[] = [];
  await models.forExecution('s1/answer').text(req, third);
  assert.deepEqual(
    third.map((c) => [c.recovered, c.lostInFlight]),
    [[true, undefined]],
  );

  // A request answered with an error status (here a 400) was answered, and not billed: nothing to count again.
  const refusedReq = { ...req, prompt: renderAnswerPrompt('Describe the ferry at night.', []) };
  sim.setFaults({ rate400: 1 });
  try {
    await assert.rejects(models.forExecution('s3/answer').text(refusedReq, []), SampleRejection);
  } finally {
    sim.setFaults({ rate400: 0 });
  }
  const retried: CallRecord[] = [];
  await models.forExecution('s3/answer').text(refusedReq, retried);
  assert.deepEqual(
    retried.map((c) => c.lostInFlight),
    [undefined],
  );
});

test('a request no attempt got to the model (connection refused, or answered 5xx every time) is not counted as lost in flight by the next execution', async () => {
  // The endpoint is down: its port refuses connections, as after an outage or a stopped server.
  const down = await startSimulator({ seed: 3 });
  const { port } = down;
  await down.close();
  const at = (url: string) => ({ stage: 'answer' as const, endpoint: { ...endpoint(), baseUrl: url }, prompt: renderAnswerPrompt('Describe the harbour.', []), image });
  const models = new ModelCaller(new LocalStore(path.join(dir, 'refused')), '_cache/llm', llm, { owner: 'build-a', retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } });
  await assert.rejects(models.forExecution('s1/answer').text(at(`http://127.0.0.1:${port}/v1`), []), EndpointGaveUp);
  // It is back, at the same address: the request is sent once and paid once.
  const back = await startSimulator({ seed: 3, port });
  try {
    const calls: CallRecord[] = [];
    await models.forExecution('s1/answer').text(at(back.url), calls);
    assert.deepEqual(
      calls.map((c) => [c.cached, c.lostInFlight]),
      [[false, undefined]],
    );
    assert.equal(back.stats().completed, 1);

    // Every attempt answered 500: answers, not billed replies.
    back.setFaults({ rate500: 1 });
    const failing = { ...at(back.url), prompt: renderAnswerPrompt('Describe the harbour at dusk.', []) };
    await assert.rejects(models.forExecution('s2/answer').text(failing, []), EndpointGaveUp);
    back.setFaults({ rate500: 0 });
    const again: CallRecord[] = [];
    await models.forExecution('s2/answer').text(failing, again);
    assert.deepEqual(
      again.map((c) => c.lostInFlight),
      [undefined],
    );
  } finally {
    await back.close();
  }
});

test('a refused key, an unknown model and a spent quota fail at once, naming the endpoint; a 400 rejects the sample', async () => {
  const req = (model = 'mmif-sim-vlm') => ({
    stage: 'answer' as const,
    endpoint: { ...endpoint(), model, apiKeyEnv: 'MMIF_TEST_WRONG_KEY' },
    prompt: renderAnswerPrompt('Describe the pier.', []),
    image,
  });
  process.env.MMIF_TEST_WRONG_KEY = 'sk-wrong-key-abcdef123';
  const at = (model: string) => `answer: model endpoint ${sim.url} (model ${model}): `;
  const cases: Array<[Partial<Parameters<SimulatorHandle['setFaults']>[0]>, string, string]> = [
    [
      { requiredApiKey: 'sk-right-key-987654' },
      'mmif-sim-vlm',
      `${at('mmif-sim-vlm')}HTTP 401: invalid_api_key: Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys. ` +
        '— the API key was refused: check the key in MMIF_TEST_WRONG_KEY (the variable named by apiKeyEnv)',
    ],
    [
      { knownModels: ['mmif-sim-vlm'] },
      'gpt-nonexistent',
      `${at('gpt-nonexistent')}HTTP 404: model_not_found: The model \`gpt-nonexistent\` does not exist or you do not have access to it. ` +
        "— unknown model or wrong base URL: check the model name gpt-nonexistent (models.<role>.model) and baseUrl (or the worker's OPENAI_BASE_URL)",
    ],
    [
      { insufficientQuota: true },
      'mmif-sim-vlm',
      `${at('mmif-sim-vlm')}HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan and billing details. ` +
        '— the account is out of quota or credit: check the plan and billing of the account whose key is in MMIF_TEST_WRONG_KEY',
    ],
  ];
  try {
    for (const [faults, model, message] of cases) {
      sim.setFaults(faults);
      sim.resetStats();
      await assert.rejects(caller('permanent').text(req(model), []), (err: unknown) => {
        assert.ok(err instanceof EndpointError, String(err));
        assert.equal(err.message, message);
        return true;
      });
      assert.equal(sim.stats().requests, 1, 'not retried');
      sim.setFaults({ requiredApiKey: '', knownModels: [], insufficientQuota: false });
    }
    sim.setFaults({ rate400: 1 });
    await assert.rejects(caller('refused').text(req(), []), (err: unknown) => {
      assert.ok(err instanceof SampleRejection);
      assert.match(err.reason, /^answer: endpoint-refused: model endpoint .* \(model mmif-sim-vlm\): HTTP 400: invalid_request: Simulated invalid request/);
      assert.equal(err.details?.modelCall?.status, 400);
      assert.equal(err.details?.modelCall?.tries, 1, 'a refusal is not tried again');
      return true;
    });
  } finally {
    sim.setFaults({ requiredApiKey: '', knownModels: [], insufficientQuota: false, rate400: 0 });
    delete process.env.MMIF_TEST_WRONG_KEY;
  }
});

test('a build keeping reasoning asks again for a reply cached without its thinking, once; one that does not keep it takes any', async () => {
  const req = { stage: 'answer' as const, endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the breakwater.', []), image };
  const store = new LocalStore(path.join(dir, 'reasoning'));
  const keeping = (keepReasoning: boolean) => new ModelCaller(store, '_cache/llm', llm, { owner: keepReasoning ? 'keeps' : 'drops', keepReasoning });
  sim.setFaults({ dialect: 'reasoning-content' });
  try {
    sim.resetStats();
    // Cached by a build that drops the thinking (as every build did before training.keepReasoning).
    const dropped = await keeping(false).textAndReasoning(req, []);
    assert.equal(dropped.reasoning, null);
    const calls: CallRecord[] = [];
    const kept = await keeping(true).textAndReasoning(req, calls);
    assert.ok(kept.reasoning && kept.reasoning.length > 0, 'the thinking, not a null that would say the model gave none');
    assert.equal(kept.text, dropped.text);
    assert.deepEqual(
      calls.map((c) => c.cached),
      [false],
      'asked again, and paid',
    );
    assert.equal(sim.stats().requests, 2);
    // Stored with its thinking now: the next reads, keeping it or not, are cache hits.
    assert.deepEqual(await keeping(true).textAndReasoning(req, []), kept);
    assert.equal(await keeping(false).text(req, []), kept.text);
    assert.equal(sim.stats().requests, 2);
  } finally {
    sim.setFaults({ dialect: 'plain' });
  }
});

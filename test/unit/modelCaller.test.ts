import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SampleRejection } from '../../domain/rejection.js';
import { ModelCaller, type CallRecord } from '../../llm/modelCaller.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
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
  assert.deepEqual(first.map((c) => [c.cached, c.simulated]), [[false, true]]);
  assert.ok(first[0]!.promptTokens > 0);

  const second: CallRecord[] = [];
  const b = await models.json(req, 'instructions', instructionReplySchema, second);
  assert.deepEqual(b, a);
  assert.deepEqual(second.map((c) => c.cached), [true]);
  assert.equal(sim.stats().requests, 1, 'the repeat must not reach the endpoint');
});

test('a malformed JSON reply gets one repair request, then the sample is rejected with the cause', async () => {
  sim.resetStats();
  sim.setFaults({ rateMalformed: 1 });
  try {
    const calls: CallRecord[] = [];
    await assert.rejects(
      caller('malformed').json(
        { stage: 'instruction', endpoint: endpoint(), prompt: renderInstructionPrompt(['Other.']), image },
        'instructions',
        instructionReplySchema,
        calls,
      ),
      (err: unknown) => err instanceof SampleRejection && /instruction: invalid-json after repair: not valid JSON/.test(err.reason),
    );
    assert.equal(calls.length, 2);
    assert.equal(sim.stats().requests, 2);
  } finally {
    sim.setFaults({ rateMalformed: 0 });
  }
});

test('a reply cut by the token limit rejects the sample', async () => {
  sim.setFaults({ rateTruncated: 1 });
  try {
    await assert.rejects(
      caller('truncated').text({ stage: 'answer', endpoint: endpoint(), prompt: renderAnswerPrompt('Describe.', []), image }, []),
      (err: unknown) => err instanceof SampleRejection && /truncated reply/.test(err.reason),
    );
  } finally {
    sim.setFaults({ rateTruncated: 0 });
  }
});

test('transient 500s are retried by the client and succeed', async () => {
  sim.resetStats();
  sim.setFaults({ rate500: 0.5 });
  try {
    const text = await caller('flaky').text(
      { stage: 'answer', endpoint: endpoint(), prompt: renderAnswerPrompt('Describe the flaky scene.', []), image },
      [],
    );
    assert.ok(text.length > 0);
  } finally {
    sim.setFaults({ rate500: 0 });
  }
});

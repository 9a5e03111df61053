/**
 * The Batch API helpers: custom ids and file splitting (pure), then submit → poll → collect →
 * storeReply end to end against the simulator's /v1/files and /v1/batches, with partial failures,
 * expiry, cancellation and input validation.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import {
  batchCustomId,
  cancelBatch,
  collectBatch,
  parseBatchCustomId,
  parseBatchResultLine,
  planBatchFiles,
  pollBatch,
  submitBatchFile,
  submitBatches,
  type BatchProgress,
  type BatchRequest,
} from '../../llm/batch.js';
import { ModelCaller } from '../../llm/modelCaller.js';
import type { CallRecord } from '../../llm/callRecord.js';
import type { ModelRequest } from '../../llm/modelRequest.js';
import { renderAnswerPrompt } from '../../prompts/answerPrompt.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../prompts/instructionPrompt.js';
import { DEFAULT_FAULTS } from '../../simulator/faults.js';
import { startSimulator, type SimulatorHandle } from '../../simulator/server.js';
import { defaultLlmSettings } from '../harness/llmSettings.js';
import { LocalStore } from '../../storage/localStore.js';

let sim: SimulatorHandle;
let client: OpenAI;
let dir: string;
const llm = defaultLlmSettings();

before(async () => {
  sim = await startSimulator({ seed: 12 });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-batch-'));
});
after(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  sim.setFaults({ ...DEFAULT_FAULTS, batchCompletionMs: 150 });
  sim.resetStats();
});

const endpoint = { model: 'mmif-sim-vlm', baseUrl: '', apiKeyEnv: 'MMIF_TEST_UNSET_KEY', concurrency: 16, batch: false };
const answerRequest = (i: number): ModelRequest => ({
  stage: 'answer',
  endpoint: { ...endpoint, baseUrl: sim.url },
  prompt: renderAnswerPrompt(`Describe batch scene ${i}.`, []),
});
const chat = (model: string, text: string): ChatCompletionCreateParamsNonStreaming => ({ model, messages: [{ role: 'user', content: text }] });

async function untilDone(batchId: string): Promise<BatchProgress> {
  for (;;) {
    const progress = await pollBatch(client, batchId);
    if (progress.done) return progress;
    await sleep(25);
  }
}

/** Submits `count` simple requests and waits for every batch; returns their custom ids and final progress. */
async function runBatch(count: number) {
  const requests: BatchRequest[] = Array.from({ length: count }, (_, i) => ({ custom_id: `line-${i}`, body: chat('mmif-sim-llm', `Describe item ${i}.`) }));
  const [submitted] = await submitBatches(client, requests);
  assert.ok(submitted);
  return { ids: requests.map((r) => r.custom_id), progress: await untilDone(submitted.batchId), outcomes: await collectBatch(client, submitted.batchId) };
}

// ---------------------------------------------------------------------------------------
// Pure helpers

test('batchCustomId round-trips, whatever the sample id holds', () => {
  for (const sampleId of ['cc3m-0123abcd', 'odd:id:with:colons', 'spaces and / slashes']) {
    const id = batchCustomId({ sampleId, stage: 'judge', kind: 'direct_judge', resubmission: 2 });
    assert.deepEqual(parseBatchCustomId(id), { sampleId, stage: 'judge', kind: 'direct_judge', resubmission: 2 });
  }
  assert.equal(parseBatchCustomId('mmif:unknownstage:answer:1:x'), undefined);
  assert.equal(parseBatchCustomId('mmif:answer:unknown_kind:1:x'), undefined);
  assert.equal(parseBatchCustomId('someone-else'), undefined);
  assert.throws(() => batchCustomId({ sampleId: 'x', stage: 'answer', kind: 'answer', resubmission: -1 }));
});

test('planBatchFiles splits by request count, by bytes and by model, keeping order', () => {
  const requests: BatchRequest[] = Array.from({ length: 7 }, (_, i) => ({ custom_id: `a${i}`, body: chat('model-a', `question ${i}`) }));
  requests.splice(2, 0, { custom_id: 'b0', body: chat('model-b', 'other') });
  const byCount = planBatchFiles(requests, { maxRequests: 3, maxBytes: 1e9 });
  assert.deepEqual(
    byCount.map((f) => [f.model, f.customIds]),
    [
      ['model-a', ['a0', 'a1', 'a2']],
      ['model-a', ['a3', 'a4', 'a5']],
      ['model-a', ['a6']],
      ['model-b', ['b0']],
    ],
  );
  for (const file of byCount) {
    assert.equal(file.bytes, Buffer.byteLength(file.jsonl));
    const lines = file.jsonl
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as BatchRequest & { method: string; url: string });
    assert.deepEqual(
      lines.map((l) => l.custom_id),
      file.customIds,
    );
    assert.ok(lines.every((l) => l.method === 'POST' && l.url === '/v1/chat/completions' && l.body.model === file.model));
  }

  const lineBytes = Buffer.byteLength(byCount[0]!.jsonl) / 3;
  const byBytes = planBatchFiles(
    requests.filter((r) => r.body.model === 'model-a'),
    { maxRequests: 100, maxBytes: Math.ceil(lineBytes * 2.5) },
  );
  assert.deepEqual(
    byBytes.map((f) => f.customIds.length),
    [2, 2, 2, 1],
  );
  assert.ok(byBytes.every((f) => f.bytes <= lineBytes * 2.5));

  assert.throws(() => planBatchFiles([requests[0]!, requests[0]!]), /duplicate batch custom_id a0/);
  assert.throws(() => planBatchFiles(requests, { maxRequests: 10, maxBytes: 50 }), /over the 50-byte file limit/);
});

test('result lines: ok, failed with an HTTP error, failed without running, expired', () => {
  const ok = { id: 'r', custom_id: 'a', response: { status_code: 200, body: { choices: [{ message: { content: 'hi' } }] } }, error: null };
  assert.equal(parseBatchResultLine(JSON.stringify(ok))[1].status, 'ok');
  const http = { custom_id: 'b', response: { status_code: 400, body: { error: { message: 'bad', code: 'invalid_value' } } }, error: null };
  assert.deepEqual(parseBatchResultLine(JSON.stringify(http)), ['b', { status: 'failed', error: { code: 'invalid_value', message: 'bad', httpStatus: 400 } }]);
  const notRun = { custom_id: 'c', response: null, error: { code: 'server_error', message: 'boom' } };
  assert.deepEqual(parseBatchResultLine(JSON.stringify(notRun)), ['c', { status: 'failed', error: { code: 'server_error', message: 'boom' } }]);
  const expired = { custom_id: 'd', response: null, error: { code: 'batch_expired', message: 'late' } };
  assert.deepEqual(parseBatchResultLine(JSON.stringify(expired)), ['d', { status: 'expired' }]);
});

// ---------------------------------------------------------------------------------------
// Against the simulator

test('submit, poll, collect and store: the pipeline then runs on cache hits with the synchronous replies', async () => {
  const caller = new ModelCaller(new LocalStore(path.join(dir, 'e2e')), '_cache/llm', llm);
  const json = { name: 'instructions', schema: instructionReplySchema };
  const instructionReq: ModelRequest = { ...answerRequest(0), stage: 'instruction', prompt: renderInstructionPrompt(['Describe it.']) };
  const texts = [1, 2, 3, 4, 5].map(answerRequest);
  // Long enough that the first poll, made right after two uploads, still sees the batch running on
  // a loaded machine (150 ms was not: the poll came after completion).
  sim.setFaults({ batchCompletionMs: 2_000 });
  const prepared = new Map([
    ...(await Promise.all(
      texts.map(async (req, i) => [batchCustomId({ sampleId: `sample-${i}`, stage: 'answer', kind: 'answer', resubmission: 0 }), await caller.prepare(req)] as const),
    )),
    [batchCustomId({ sampleId: 'sample-0', stage: 'instruction', kind: 'instructions', resubmission: 0 }), await caller.prepare(instructionReq, json)] as const,
  ]);
  const submitted = await submitBatches(
    caller.client(texts[0]!.endpoint),
    [...prepared].map(([custom_id, p]) => ({ custom_id, body: p.body })),
    { limits: { maxRequests: 4, maxBytes: 200 * 1024 * 1024 }, metadata: { build: 'test' } },
  );
  assert.deepEqual(
    submitted.map((s) => s.requests),
    [4, 2],
  );
  const first = await pollBatch(client, submitted[0]!.batchId);
  assert.equal(first.done, false);
  assert.ok(['validating', 'in_progress', 'finalizing'].includes(first.status));

  const records: CallRecord[] = [];
  for (const { batchId } of submitted) {
    const progress = await untilDone(batchId);
    assert.equal(progress.status, 'completed');
    for (const [customId, outcome] of await collectBatch(client, batchId)) {
      assert.equal(outcome.status, 'ok');
      if (outcome.status === 'ok') records.push(await caller.storeReply(prepared.get(customId)!, outcome.reply));
    }
  }
  assert.equal(records.length, 6);
  assert.ok(records.every((r) => r.batch && !r.cached && r.simulated));
  const stats = sim.stats();
  assert.equal(stats.batch.completed, 6);
  assert.equal(stats.completed, 6, 'batch lines count like chat completions');
  assert.equal(stats.promptTokens, stats.batch.promptTokens);

  // The synchronous path now finds every reply in the cache.
  const calls: CallRecord[] = [];
  const answers = await Promise.all(texts.map((req) => caller.text(req, calls)));
  const instructions = await caller.json(instructionReq, json.name, json.schema, calls);
  assert.ok(instructions.instructions.length >= 3);
  assert.ok(calls.every((c) => c.cached && c.batch));
  assert.equal(sim.stats().requests, 6, 'no synchronous request reached the endpoint');

  // Each line was answered exactly as POST /v1/chat/completions answers the same body.
  const direct = await client.chat.completions.create(prepared.get(batchCustomId({ sampleId: 'sample-2', stage: 'answer', kind: 'answer', resubmission: 0 }))!.body);
  assert.equal(answers[2], direct.choices[0]?.message.content);
});

test('partial failures are reported per custom_id, in the error file', async () => {
  sim.setFaults({ batchFailureRate: 0.5 });
  const { ids, progress, outcomes } = await runBatch(12);
  assert.equal(progress.status, 'completed');
  assert.deepEqual([...outcomes.keys()].sort(), [...ids].sort());
  const failed = [...outcomes.values()].filter((o) => o.status === 'failed');
  assert.ok(failed.length > 0 && failed.length < 12, `${failed.length} of 12 failed`);
  for (const outcome of failed) assert.deepEqual(outcome.status === 'failed' && [outcome.error.httpStatus, outcome.error.code], [500, 'internal_error']);
  assert.deepEqual(progress.counts, { total: 12, completed: 12 - failed.length, failed: failed.length });
  assert.equal(sim.stats().batch.failed, failed.length);
});

test('expiry: the batch ends expired, the finished part in the output file, the rest listed as expired', async () => {
  sim.setFaults({ batchExpireRate: 0.5 });
  const { ids, progress, outcomes } = await runBatch(12);
  assert.equal(progress.status, 'expired');
  assert.deepEqual([...outcomes.keys()].sort(), [...ids].sort());
  const expired = [...outcomes.values()].filter((o) => o.status === 'expired').length;
  assert.ok(expired > 0 && expired < 12, `${expired} of 12 expired`);
  assert.equal([...outcomes.values()].filter((o) => o.status === 'ok').length, 12 - expired);
  assert.equal(sim.stats().batch.expired, expired);
  assert.equal(sim.stats().batch.requests, 12 - expired, 'expired lines never ran');
});

test('cancel: the batch ends cancelled and the lines that never ran are absent from the results', async () => {
  sim.setFaults({ batchCompletionMs: 60_000 });
  const [submitted] = await submitBatches(client, [{ custom_id: 'only', body: chat('mmif-sim-llm', 'Never answered.') }]);
  const cancelled = await cancelBatch(client, submitted!.batchId);
  assert.equal(cancelled.status, 'cancelled');
  assert.equal((await collectBatch(client, submitted!.batchId)).size, 0);
  assert.equal(sim.stats().batch.cancelled, 1);
  await assert.rejects(cancelBatch(client, submitted!.batchId), /Cannot cancel a batch with status cancelled/);
});

test('input validation: too many requests, mixed models and duplicate ids fail the batch with OpenAI-like errors', async () => {
  sim.setFaults({ batchMaxRequests: 2 });
  const lines = (requests: BatchRequest[]) => requests.map((r) => `${JSON.stringify({ ...r, method: 'POST', url: '/v1/chat/completions' })}\n`).join('');
  const submitRaw = async (requests: BatchRequest[]) => {
    const { batchId } = await submitBatchFile(client, { model: 'mixed', customIds: [], bytes: 0, jsonl: lines(requests) });
    return untilDone(batchId);
  };
  const one = (id: string, model = 'mmif-sim-llm') => ({ custom_id: id, body: chat(model, id) });

  const tooMany = await submitRaw([one('a'), one('b'), one('c')]);
  assert.equal(tooMany.status, 'failed');
  assert.match(tooMany.errors.join(), /too_many_requests: .*at most 2/);
  assert.match((await submitRaw([one('a'), one('b', 'mmif-sim-vlm')])).errors.join(), /line 2: mismatched_model/);
  assert.match((await submitRaw([one('a'), one('a')])).errors.join(), /line 2: duplicate_custom_id/);

  await assert.rejects(client.batches.create({ input_file_id: 'file-missing', endpoint: '/v1/chat/completions', completion_window: '24h' }), /No such File object/);
  await assert.rejects(
    client.batches.create({ input_file_id: tooMany.batchId, endpoint: '/v1/embeddings', completion_window: '24h' }),
    (err: unknown) => err instanceof OpenAI.BadRequestError,
  );
});

test('files: metadata and content round-trip', async () => {
  const upload = await client.files.create({ file: await OpenAI.toFile(Buffer.from('{"x":1}\n'), 'in.jsonl'), purpose: 'batch' });
  assert.deepEqual((await client.files.retrieve(upload.id)).bytes, 8);
  assert.equal(await (await client.files.content(upload.id)).text(), '{"x":1}\n');
  await assert.rejects(client.files.create({ file: await OpenAI.toFile(Buffer.from('x'), 'a.txt'), purpose: 'assistants' }), /purpose 'batch'/);
});

test('a submission retried after a failure mid-way submits only the files its log does not cover: no request twice', async () => {
  // Counts what reaches the simulator's Batch API and fails the second batch creation once, as a
  // worker lost between two files would.
  let batchPosts = 0;
  let failNext = true;
  const created: string[] = [];
  const flaky = new OpenAI({
    baseURL: sim.url,
    apiKey: 'sim',
    maxRetries: 0,
    fetch: async (url, init) => {
      if (init?.method === 'POST' && String(url).endsWith('/batches')) {
        batchPosts += 1;
        if (batchPosts === 2 && failNext) {
          failNext = false;
          throw new Error('connection reset (forced)');
        }
      }
      const response = await fetch(url, init);
      if (init?.method === 'POST' && String(url).endsWith('/batches')) created.push(((await response.clone().json()) as { id: string }).id);
      return response;
    },
  });
  const requests: BatchRequest[] = Array.from({ length: 6 }, (_, i) => ({ custom_id: `line-${i}`, body: chat('mmif-sim-llm', `Describe item ${i}.`) }));
  const limits = { maxRequests: 2, maxBytes: 1 << 20 };
  let recorded: { batches: Array<{ batchId: string; customIds: string[] }> } = { batches: [] };
  const record = async (log: typeof recorded) => {
    recorded = structuredClone(log);
  };
  await assert.rejects(submitBatches(flaky, requests, { limits, log: recorded, record }), /Connection error/);
  assert.equal(recorded.batches.length, 1, 'the first file was recorded before the second went out');

  const retried = await submitBatches(flaky, requests, { limits, log: recorded, record });
  assert.equal(retried.length, 2, 'the retry submits the two files not yet submitted');
  assert.equal(created.length, 3, `3 batches created in all, not 4: ${created.join(' ')}`);
  assert.deepEqual(
    recorded.batches.map((b) => b.batchId),
    created,
  );
  const covered = recorded.batches.flatMap((b) => b.customIds);
  assert.deepEqual([...covered].sort(), requests.map((r) => r.custom_id).sort(), 'every request exactly once');
  // The simulator runs each submitted line once: 6 lines, not more.
  for (const batchId of created) await untilDone(batchId);
  assert.equal(sim.stats().batch.requests, 6);
});

/**
 * Builds against endpoints that speak other servers' dialects (simulator/dialects.ts), on one stack
 * (Temporal dev server, simulator over HTTP, a worker): OpenAI's reasoning-model rules for a known
 * model name and for an unknown one, a thinking model with inline <think> and one with
 * reasoning_content, a server refusing json_schema, and a captive-portal proxy. Each build is
 * small (one shard of 8 samples); yields are compared with the same build on the plain simulator.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import { thoughtsFor } from '../../simulator/dialects.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { startStack, type Stack } from '../harness/stack.js';
import { failureLine } from '../harness/buildFailure.js';

let stack: Stack;
let dir: string;

before(async () => {
  stack = await startStack({
    simulator: {
      seed: 19,
      faults: {
        modelDialects: {
          'gpt-5-mini': 'openai-reasoning',
          'acme-reasoner-2026': 'openai-reasoning',
          'qwen3-vl-thinking': 'inline-think',
          'qwen3-vl-parsed': 'reasoning-content',
          'llama-vlm-old': 'no-json-schema',
          'portal-vlm': 'html-proxy',
        },
      },
    },
    taskQueue: 'mmif-dialects',
  });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-dialects-e2e-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: 8, shards: 1 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const config = (buildId: string, model: string): BuildConfigInput => ({
  buildId,
  seed: 7,
  // An output per build: no model cache shared between dialects.
  output: path.join(dir, buildId),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: 8,
  shardSize: 8,
  models: { default: { model } },
});

const run = async (buildId: string, model: string) =>
  (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: buildId, args: [config(buildId, model)] })) as BuildReport;

let plain: BuildReport;

/** About as many accepted samples as the plain simulator gives: the dialect costs no yield. */
function assertSameYield(report: BuildReport, what: string): void {
  assert.deepEqual(report.shards, { planned: 1, committed: 1, failed: 0 }, what);
  const margin = Math.max(2, Math.ceil(plain.counts.instruct * 0.25));
  assert.ok(Math.abs(report.counts.instruct - plain.counts.instruct) <= margin, `${what}: ${report.counts.instruct} accepted, plain ${plain.counts.instruct}`);
  assert.equal(report.modelCallRejects, 0, `${what}: no sample lost to a model call`);
}

/** Every file a build wrote, as text. */
async function filesOf(root: string): Promise<Array<{ file: string; text: string }>> {
  const files: Array<{ file: string; text: string }> = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.push({ file, text: await readFile(file, 'latin1') });
  }
  return files;
}

test('the plain simulator: the yield the dialects are held to', async () => {
  plain = await run('plain', 'mmif-sim-vlm');
  assert.deepEqual(plain.shards, { planned: 1, committed: 1, failed: 0 });
  assert.ok(plain.counts.instruct >= 3, `accepted ${plain.counts.instruct}`);
  assert.equal(plain.endpointDialects, undefined, 'nothing to learn from the plain dialect');
});

test('gpt-5-mini behind OpenAI’s reasoning-model rules builds with no extra config and no refused request; reasoning tokens are counted', async () => {
  stack.simulator.resetStats();
  const report = await run('gpt5', 'gpt-5-mini');
  assertSameYield(report, 'gpt-5-mini');
  assert.equal(stack.simulator.stats().byStatus['400'], undefined, 'known by name: no request refused');
  assert.equal(report.endpointDialects, undefined, 'nothing had to be learned');
  const reasoning = Object.values(report.usage).reduce((n, u) => n + u.reasoningTokens, 0);
  assert.ok(reasoning > 0, 'reasoning tokens counted in the build report');
  assert.equal(
    Object.values(plain.usage).reduce((n, u) => n + u.reasoningTokens, 0),
    0,
  );
  await assertAccounting(new LocalStore(path.join(dir, 'gpt5')), report);
});

test('an unknown model name behind the same rules learns them at pre-flight (two refusals) and builds as well, the lessons in the build report', async () => {
  stack.simulator.resetStats();
  const report = await run('unknown-reasoner', 'acme-reasoner-2026');
  assertSameYield(report, 'unknown model');
  assert.equal(stack.simulator.stats().byStatus['400'], 2, 'refused twice, at pre-flight, then never again');
  assert.deepEqual(
    report.endpointDialects?.map((d) => [d.model, d.lessons.map((l) => l.replace(/ \(the endpoint answered: .*\)$/, ''))]),
    [['acme-reasoner-2026', ['max_tokens: sends max_completion_tokens instead', 'temperature: sends no temperature']]],
  );
});

for (const [model, how] of [
  ['qwen3-vl-thinking', 'inline <think>'],
  ['qwen3-vl-parsed', 'reasoning_content'],
] as const) {
  test(`a thinking model (${how}): about the same yield, and no thinking in any file of the dataset`, async () => {
    const buildId = `thinking-${model}`;
    const report = await run(buildId, model);
    assertSameYield(report, how);
    const files = await filesOf(path.join(dir, buildId));
    assert.ok(files.length > 5);
    // Every thought the simulator's model writes starts one of these sentences.
    const thoughts = thoughtsFor('00')
      .split('. ')
      .map((s) => s.replace(/\.$/, ''));
    for (const { file, text } of files) {
      assert.ok(!text.includes('<think>') && !text.includes('</think>'), `${file} holds a <think> tag`);
      for (const thought of thoughts) assert.ok(!text.includes(thought), `${file} holds the thought "${thought}"`);
    }
  });
}

test('training.keepReasoning: the thinking goes into fields of its own (answer_reasoning, chosen_reasoning, rejected_reasoning), never into the answers', async () => {
  const input = { ...config('keep-reasoning', 'qwen3-vl-thinking'), training: { keepReasoning: true } };
  const report = (await stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'keep-reasoning', args: [input] })) as BuildReport;
  assertSameYield(report, 'keepReasoning');
  const root = path.join(dir, 'keep-reasoning', 'keep-reasoning');
  const lines = async (file: string) =>
    (await readFile(path.join(root, file), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { conversations: Array<{ value: string }>; chosen?: { value: string }; rejected?: { value: string }; metadata: string });
  const sft = await lines('instruct/sharegpt/shard-00000.jsonl');
  assert.equal(sft.length, report.counts.instruct);
  for (const row of sft) {
    const meta = JSON.parse(row.metadata) as { answer_reasoning?: string };
    assert.match(meta.answer_reasoning ?? '', /^(Let me look|The task asks|I should check|I will keep)/);
    assert.ok(!row.conversations[1]!.value.includes('<think>') && !row.conversations[1]!.value.includes(meta.answer_reasoning!));
  }
  const pairs = await lines('dpo/sharegpt/shard-00000.jsonl');
  assert.ok(pairs.length > 0);
  for (const row of pairs) {
    const meta = JSON.parse(row.metadata) as { chosen_reasoning?: string; rejected_reasoning?: string };
    assert.ok(meta.chosen_reasoning && meta.rejected_reasoning, row.metadata.slice(0, 200));
    assert.ok(!row.chosen!.value.includes('<think>') && !row.rejected!.value.includes('<think>'));
  }
  // The Parquet shards carry the columns too.
  assert.ok((await readFile(path.join(root, 'instruct/parquet/shard-00000.parquet'))).includes('answer_reasoning'));
  assert.ok((await readFile(path.join(root, 'dpo/parquet/shard-00000.parquet'))).includes('rejected_reasoning'));
});

test('a server refusing json_schema is asked for json_object, learned once, and builds as well', async () => {
  stack.simulator.resetStats();
  const report = await run('no-json-schema', 'llama-vlm-old');
  assertSameYield(report, 'no json_schema');
  assert.equal(stack.simulator.stats().byStatus['400'], 1, 'refused once, at pre-flight');
  assert.deepEqual(
    report.endpointDialects?.[0]?.lessons.map((l) => l.replace(/ \(the endpoint answered: .*\)$/, '')),
    ['response_format: asks for json_object instead of json_schema'],
  );
});

test('a captive-portal proxy answering 200 with HTML fails the pre-flight naming the endpoint and what came back', async () => {
  await assert.rejects(run('portal', 'portal-vlm'), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError);
    let cause = err.cause as { message?: string; cause?: unknown } | undefined;
    while (cause?.cause) cause = cause.cause as typeof cause;
    assert.equal(
      cause?.message,
      `model endpoint ${stack.simulator.url} (model portal-vlm): not-a-completion: HTTP 200 text/html, not JSON: <!DOCTYPE html> <html><head><title>Network login</title></head> <body><h1>Sign in to continue</h1><form method="post" ac… — is baseUrl an OpenAI-compatible API (…/v1), not a web page or a login proxy?`,
    );
    return true;
  });
});

test('oversized replies are rejected as reply-too-large without being read whole; the build fails on its error budget with that line', async () => {
  stack.simulator.setFaults({ replyPadBytes: 512 * 1024 });
  try {
    const input = { ...config('oversized', 'mmif-sim-vlm'), sliceSize: 8, llm: { preflight: false, concurrency: 1, maxReplyBytes: 65536, errorBudget: { maxConsecutive: 3 } } };
    await assert.rejects(stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'oversized', args: [input] }), (err: unknown) => {
      assert.equal(
        failureLine(err),
        `1 of 1 shards failed (report: ${path.join(dir, 'oversized', 'oversized', 'build-report.json')}): shard 0: stage instruction: 3 samples in a row rejected by model-call errors (llm.errorBudget.maxConsecutive 3): model endpoint ${stack.simulator.url} (model mmif-sim-vlm): HTTP 200: reply-too-large: the reply went past 65536 bytes (llm.maxReplyBytes), and was dropped unread from there, 1 try`,
      );
      return true;
    });
  } finally {
    stack.simulator.setFaults({ replyPadBytes: 0 });
  }
});

test('a trickling reply times out, and the build fails naming the stage, the endpoint, the model and the time waited', async () => {
  stack.simulator.setFaults({ trickleMs: 200 });
  try {
    const input = {
      ...config('trickling', 'mmif-sim-vlm'),
      retry: { maximumAttempts: 1 },
      llm: { preflight: false, timeoutMs: 500, retry: { maxAttempts: 2, baseDelayMs: 0 } },
    };
    await assert.rejects(stack.client.workflow.execute('buildDataset', { taskQueue: stack.taskQueue, workflowId: 'trickling', args: [input] }), (err: unknown) => {
      assert.equal(
        failureLine(err),
        `1 of 1 shards failed (report: ${path.join(dir, 'trickling', 'trickling', 'build-report.json')}): shard 0: instruction: model endpoint ${stack.simulator.url} (model mmif-sim-vlm): no complete reply within 500 ms (llm.timeoutMs), 2 attempts`,
      );
      return true;
    });
  } finally {
    stack.simulator.setFaults({ trickleMs: 0 });
  }
});

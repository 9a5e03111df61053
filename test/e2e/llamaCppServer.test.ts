/**
 * A build against a real inference server we did not write: llama.cpp's `llama-server` (built by
 * tools/install.sh) serving a tiny vision-language model with random weights and its vision projector
 * (test/fixtures/llamacpp), on the real dev server, through `mmif build` with docs/endpoints.md's
 * llama.cpp recipe. The answers are nonsense, so this checks the plumbing the simulator cannot: images
 * as data URLs reach a real projector, json_schema becomes llama.cpp's grammar (every structured reply
 * parses), nonsense is rejected with a reason, the accounting holds and the build completes; the
 * server without its projector is refused at pre-flight with its own error text.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseBuildConfig, type BuildConfigInput } from '../../config/buildConfig.js';
import type { BuildReport } from '../../output/contracts/buildReport.js';
import type { RejectRecord } from '../../output/contracts/records.js';
import type { SourceSample } from '../../domain/sample.js';
import { STAGE_NAMES } from '../../config/stages.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { buildLayout } from '../../storage/buildLayout.js';
import { getJson } from '../../storage/objectStore.js';
import { LocalStore } from '../../storage/localStore.js';
import { writeCc3m } from '../fixtures/cc3m.js';
import { assertAccounting } from '../harness/datasetChecks.js';
import { startLlamaServer, type LlamaServer } from '../harness/llamaServer.js';
import { mmif } from '../harness/mmifCli.js';
import { startStack, type Stack } from '../harness/stack.js';
import { stageLabel } from '../../cli/wording.js';
import { reasonAfterStage } from '../../config/rejectionReasons.js';

let stack: Stack;
let dir: string;
const SAMPLES = 4;

before(async () => {
  stack = await startStack({ taskQueue: 'mmif-llamacpp' });
  dir = await mkdtemp(path.join(tmpdir(), 'mmif-llamacpp-'));
  await writeCc3m(new LocalStore(path.join(dir, 'cc3m')), 'files', { perShard: SAMPLES, shards: 1 });
});

after(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The build config of docs/endpoints.md's llama.cpp recipe, with the tiny model's alias. */
const config = (buildId: string, server: LlamaServer): BuildConfigInput => ({
  buildId,
  seed: 7,
  output: path.join(dir, 'out'),
  sources: [{ type: 'cc3m', uri: path.join(dir, 'cc3m') }],
  maxSamples: SAMPLES,
  shardSize: SAMPLES,
  models: { default: { model: 'tiny-vlm', baseUrl: server.baseUrl, concurrency: 2 } },
  // A local model costs nothing per token; a low limit keeps the nonsense short.
  llm: { maxTokens: 256, prices: { 'tiny-vlm': { inputPerMTok: 0, outputPerMTok: 0 } } },
});

async function withServer<T>(mmproj: boolean, work: (server: LlamaServer) => Promise<T>): Promise<T> {
  const server = await startLlamaServer({ mmproj });
  try {
    return await work(server);
  } catch (err) {
    console.log(`llama-server's log:\n${server.log().slice(-4000)}`);
    throw err;
  } finally {
    await server.stop();
  }
}

/** Generous for a 0.6 MB model on a loaded 2-core machine (the build takes 10-30 s); bounds a hung server. */
const BOUND = { timeout: 5 * 60_000 };

test(
  'a build against llama.cpp serving a tiny random VLM with its projector: pre-flight passes, structured stages parse, nonsense is rejected with reasons, the accounting holds',
  BOUND,
  async () => {
    await withServer(true, async (server) => {
      const buildId = 'llamacpp';
      const file = path.join(dir, `${buildId}.json`);
      await writeFile(file, JSON.stringify(config(buildId, server)));
      const started = Date.now();
      const built = await mmif(stack, 'build', '--config', file, '--wait');
      console.log(`build against llama-server: exit ${built.code} after ${((Date.now() - started) / 1000).toFixed(1)} s\n${built.stdout}`);
      assert.equal(built.code, 0, built.stderr + built.stdout);
      assert.ok(built.stdout.split('\n').includes(`pre-flight: ${server.baseUrl} (model tiny-vlm, with an image) ok`), built.stdout);

      const store = new LocalStore(path.join(dir, 'out'));
      const layout = buildLayout(buildId);
      const report = (await getJson<BuildReport>(store, layout.report))!;
      assert.deepEqual(report.shards, { planned: 1, committed: 1, failed: 0 });
      // The plain request was accepted as it is: json_schema was not stepped down to json_object or the prompt alone.
      assert.equal(report.endpointDialects, undefined, JSON.stringify(report.endpointDialects));
      await assertAccounting(store, report, { 0: SAMPLES });

      // Every structured reply the stages used parsed and matched its schema: the grammar llama.cpp
      // made of response_format held the random model to it. A try may still be cut by the token
      // limit (a run-on value, truncated-reply), and is tried again; no reply is malformed.
      const plan = (await getJson<SourceSample[]>(store, layout.shardPlan(0)))!;
      let structured = 0;
      for (const sample of plan) {
        for (const stage of STAGE_NAMES) {
          const state = await getJson<StageState>(store, layout.stageState(sample.sampleId, stage));
          for (const call of state?.calls ?? []) {
            assert.ok(call.problem === undefined || call.problem === 'truncated-reply', `${sample.sampleId} ${stage}: ${call.problem}`);
            if (call.stage === 'instruction' || call.stage === 'constraints') structured++;
          }
        }
      }
      assert.ok(structured >= SAMPLES, `${structured} structured calls`);

      // Nonsense is rejected on its merits, each with a reason, none for a model call.
      const rejects = ((await store.get(layout.rejects(0)))?.toString() ?? '')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as RejectRecord);

      // The constraint reply schema names the offered types as an enum, non-empty values and the
      // stage's minimum count, and the grammar holds the random model to it: a
      // list the stage refused was long enough and dropped nothing for an unoffered type or an empty
      // value, only for repeats (a grammar cannot demand distinct items; its reason counts them).
      // So samples get past the constraint stage. (Under a free-string type every sample was
      // refused there: 0 or 1 usable, the rest not offered.)
      console.log(`rejected by stage: ${JSON.stringify(report.rejectsByStage)}`);
      const { min } = parseBuildConfig(config(buildId, server)).constraints; // the reply schema's minItems
      for (const r of rejects.filter((r) => r.stage === 'constraints')) {
        const refused = /too-few-constraints: \d+ usable of (\d+) proposed(?: \(([^)]*)\))?/.exec(r.reason);
        if (!refused) continue; // refused after removing conflicts: the list itself was usable
        assert.ok(Number(refused[1]) >= min, `minItems held: ${r.reason}`);
        assert.doesNotMatch(refused[2] ?? '', /not offered|empty/, `the enum and minLength held: ${r.reason}`);
      }
      const pastConstraints = SAMPLES - (report.rejectsByStage.constraints ?? 0);
      assert.ok(pastConstraints > 0, `no sample got past the constraint stage: ${JSON.stringify(report.rejectsByStage)}`);
      assert.ok(rejects.length > 0, 'some samples are rejected');
      for (const r of rejects) {
        assert.ok(r.reason.length > 0, `${r.id} has a reason`);
        assert.equal(r.model_call, undefined, `${r.id}: ${r.reason}`);
      }
      console.log(`rejections: ${[...new Set(rejects.map((r) => `${stageLabel(r.stage)} stage: ${reasonAfterStage(r.reason, r.stage)}`))].join(' | ')}`);
    });
  },
);

test("the same server without its vision projector is refused at pre-flight, with the server's own error text", BOUND, async () => {
  await withServer(false, async (server) => {
    const buildId = 'llamacpp-no-mmproj';
    const file = path.join(dir, `${buildId}.json`);
    await writeFile(file, JSON.stringify(config(buildId, server)));
    const result = await mmif(stack, 'build', '--config', file);
    assert.equal(result.code, 2, result.stderr + result.stdout);
    const line = result.stderr.split('\n').find((l) => l.includes('pre-flight failed'));
    assert.equal(
      line,
      `mmif: pre-flight failed: model endpoint ${server.baseUrl} (model tiny-vlm): HTTP 500: image input is not supported - hint: if this is unexpected, you may need to provide the mmproj — a one-line request with an image was refused: does the model accept image input? (images are sent by: instruction, constraints, answer, rejected, judge)`,
    );
    await assert.rejects(stack.client.workflow.getHandle(buildId).describe(), 'no build was started');
  });
});

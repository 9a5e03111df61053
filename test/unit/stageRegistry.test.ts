/**
 * The stage registry (pipeline/stages/registry.ts) is the one definition of each pipeline step. What
 * cannot import it — workflow code, which keeps the step names and order (domain/stages.ts) and each
 * step's task queue and Batch API use (config/endpointRouting.ts) — must agree with it, and the step
 * table in docs/architecture.md is written from it. Each failure names what to change. And what a
 * definition says is what its step does: every step, run by runStage against the simulator, calls
 * only the model roles its definition names.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor } from '../../activities/runtime.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { MODEL_ROLES, parseBuildConfig } from '../../config/buildConfig.js';
import { BATCHABLE_STAGES, stageTaskQueues } from '../../config/endpointRouting.js';
import { ALL_STAGE_NAMES, stagesFor } from '../../domain/stages.js';
import type { SourceSample } from '../../domain/sample.js';
import type { StageContext } from '../../pipeline/context.js';
import { runStage } from '../../pipeline/runStage.js';
import type { StageState } from '../../pipeline/stageState.js';
import { stageDefinitions, type BuildMode } from '../../pipeline/stages/registry.js';
import { CURRENT_REQUEST_LAYOUT } from '../../prompts/chat.js';
import { startSimulator } from '../../simulator/server.js';
import { getCreatedJson } from '../../storage/objectStore.js';

const MODES: readonly BuildMode[] = ['single', 'multiturn'];

test('each mode runs its registered steps in the order domain/stages.ts gives workflow code, each after the steps it builds on', () => {
  for (const mode of MODES) {
    const steps = stageDefinitions(mode);
    assert.deepEqual(
      steps.map((s) => s.name),
      [...stagesFor(mode)],
    );
    steps.forEach((step, i) => {
      const earlier = steps.slice(0, i).map((s) => s.name);
      for (const dep of step.buildsOn) assert.ok(earlier.includes(dep), `${mode}: '${step.name}' builds on '${dep}', which does not run before it`);
    });
  }
  const registered = new Set(MODES.flatMap((mode) => stageDefinitions(mode).map((s) => s.name)));
  assert.deepEqual([...ALL_STAGE_NAMES].sort(), [...registered].sort(), 'every stage name has a definition');
});

test("a step's activities run on its first model role's task queue, and the Batch API sends the first calls of the steps that define one", () => {
  const models = Object.fromEntries([['default', { model: 'm' }], ...MODEL_ROLES.map((role) => [role, { model: 'm', taskQueue: `queue-${role}` }])]);
  for (const mode of MODES) {
    const config = parseBuildConfig({ buildId: 'b', output: '/tmp/out', sources: [{ type: 'cc3m', uri: '/data' }], maxSamples: 1, mode, models });
    const queues: Partial<Record<string, string>> = stageTaskQueues(config);
    for (const step of stageDefinitions(mode)) {
      assert.equal(queues[step.name], step.modelRoles[0] && `queue-${step.modelRoles[0]}`, `${mode}: config/endpointRouting.ts stageTaskQueues, step '${step.name}'`);
    }
  }
  const batchable = stageDefinitions('single').filter((s) => s.firstRequest);
  assert.deepEqual(
    [...BATCHABLE_STAGES],
    batchable.map((s) => s.name),
    'config/endpointRouting.ts BATCHABLE_STAGES',
  );
  for (const step of batchable) assert.equal(step.name, step.modelRoles[0] as string, `${step.name}: a batched step's first call is its own role's`);
});

/** The step table of docs/architecture.md, as the registry gives it: one row per definition. */
function stepTable(): string {
  const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '-');
  const definitions = [...new Set(MODES.flatMap((mode) => stageDefinitions(mode)))];
  const rows = definitions.map((s) => {
    const modes = MODES.filter((mode) => stageDefinitions(mode).includes(s)).join(', ');
    return `| \`${s.name}\` | ${modes} | ${s.summary} | ${code(s.buildsOn)} | ${code(s.modelRoles)} | ${code(s.prompts)} | ${s.firstRequest ? 'yes' : '-'} |`;
  });
  return ['| step | modes | result | builds on | model roles | prompts | Batch API |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

test('docs/architecture.md shows the step table the registry gives', async () => {
  const doc = await readFile(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  const table = stepTable();
  assert.ok(doc.includes(table), `docs/architecture.md's step table differs from the registry; it should read:\n${table}`);
});

/** The first `n` samples of the bundled CC3M images, as planning reads them. */
async function firstSamples(ctx: StageContext, n: number): Promise<SourceSample[]> {
  for await (const segment of ctx.sources[0]!.segments()) return Array.from({ length: Math.min(n, segment.records.length) }, (_, i) => segment.sample(i));
  return [];
}

for (const mode of MODES) {
  test(`a ${mode} build's steps, run by runStage against the simulator, call only the model roles their definitions name`, async () => {
    const output = await mkdtemp(path.join(tmpdir(), 'mmif-registry-'));
    const sim = await startSimulator({ seed: 3 });
    try {
      const config = parseBuildConfig({
        buildId: `registry-${mode}`,
        output,
        mode,
        sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
        maxSamples: 3,
        models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
      });
      const ctx = contextFor(config, CURRENT_REQUEST_LAYOUT);
      const samples = await firstSamples(ctx, 3);
      assert.equal(samples.length, 3);
      for (const step of stageDefinitions(mode)) {
        const called = new Set<string>();
        const outcome = await runStage(ctx, step.name, samples);
        assert.equal(outcome.ok + outcome.rejected + outcome.blocked, samples.length, `${step.name}: every sample accounted for`);
        for (const sample of samples) {
          const state = await getCreatedJson<StageState>(ctx.store, ctx.layout.stageState(sample.sampleId, step.name));
          for (const call of state?.calls ?? []) {
            called.add(call.stage);
            assert.ok(step.modelRoles.includes(call.stage), `${mode} step '${step.name}' called model role '${call.stage}', which its definition does not name`);
          }
        }
        if (step.modelRoles[0] && outcome.blocked < samples.length)
          assert.ok(called.has(step.modelRoles[0]), `${mode} step '${step.name}' never called its own model role '${step.modelRoles[0]}'`);
      }
      const last = stageDefinitions(mode).at(-1)!;
      const finished = await Promise.all(samples.map((s) => getCreatedJson<StageState>(ctx.store, ctx.layout.stageState(s.sampleId, last.name))));
      assert.ok(
        finished.some((s) => s?.status === 'ok'),
        `some sample got through every step: ${JSON.stringify(finished.map((s) => s?.status ?? 'blocked'))}`,
      );
    } finally {
      await sim.close();
      await rm(output, { recursive: true, force: true });
    }
  });
}

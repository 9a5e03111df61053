/**
 * What a stage's descriptor says is what its code does: every stage, run by runStage against the
 * simulator, calls only the model roles its descriptor (config/stages.ts) names, and its own role (and,
 * for a sample it rejects, the first role of a stage whose first call is sent beside it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor } from '../../activities/runtime.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { BUILD_MODES, parseBuildConfig } from '../../config/buildConfig.js';
import type { SourceSample } from '../../domain/sample.js';
import type { StageContext } from '../../pipeline/run/context.js';
import { runStage } from '../../pipeline/run/runStage.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { stageDefinitions } from '../../pipeline/stages/registry.js';
import { startSimulator } from '../../simulator/server.js';
import { getCreatedJson } from '../../storage/objectStore.js';
import { stagesSentBeside } from '../../pipeline/run/sentAhead.js';

/** The first `n` samples of the bundled CC3M images, as planning reads them. */
async function firstSamples(ctx: StageContext, n: number): Promise<SourceSample[]> {
  for await (const segment of ctx.sources[0]!.segments()) return Array.from({ length: Math.min(n, segment.records.length) }, (_, i) => segment.sample(i));
  return [];
}

for (const mode of BUILD_MODES) {
  test(`a ${mode} build's stages, run by runStage against the simulator, call only the model roles their descriptors name`, async () => {
    const output = await mkdtemp(path.join(tmpdir(), 'mmif-registry-'));
    const sim = await startSimulator({ seed: 3 });
    try {
      const config = parseBuildConfig({
        buildId: `registry-${mode}`,
        output,
        mode,
        sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
        maxSamples: 10,
        models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
      });
      const ctx = contextFor(config);
      // Every bundled image: with 3, a multiturn chat's seeded draws left none through every stage.
      const samples = await firstSamples(ctx, 10);
      assert.equal(samples.length, 10);
      for (const stage of stageDefinitions(mode)) {
        const called = new Set<string>();
        // A sample this stage rejects records the first calls of the stages sent beside it (sentAhead.ts): their own roles.
        const beside = stagesSentBeside(config, stage.name).flatMap((d) => d.modelRoles.slice(0, 1));
        const allowed: readonly string[] = [...stage.modelRoles, ...beside];
        const outcome = await runStage(ctx, stage.name, samples);
        assert.equal(outcome.ok + outcome.rejected + outcome.blocked, samples.length, `${stage.name}: every sample accounted for`);
        for (const sample of samples) {
          const state = await getCreatedJson<StageState>(ctx.store, ctx.layout.stageState(sample.sampleId, stage.name));
          for (const call of state?.calls ?? []) {
            called.add(call.stage);
            assert.ok(
              allowed.includes(call.stage),
              `${mode} stage '${stage.name}' called model role '${call.stage}', which neither its descriptor nor a stage sent beside it names`,
            );
          }
        }
        if (stage.modelRoles[0] && outcome.blocked < samples.length)
          assert.ok(called.has(stage.modelRoles[0]), `${mode} stage '${stage.name}' never called its own model role '${stage.modelRoles[0]}'`);
      }
      const last = stageDefinitions(mode).at(-1)!;
      const finished = await Promise.all(samples.map((s) => getCreatedJson<StageState>(ctx.store, ctx.layout.stageState(s.sampleId, last.name))));
      assert.ok(
        finished.some((s) => s?.status === 'ok'),
        `some sample got through every stage: ${JSON.stringify(finished.map((s) => (s?.status === 'rejected' ? s.reason : (s?.status ?? 'blocked'))))}`,
      );
    } finally {
      await sim.close();
      await rm(output, { recursive: true, force: true });
    }
  });
}

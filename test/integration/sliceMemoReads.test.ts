/**
 * One execution of a slice reads each of its samples' stage states and its staged image from the
 * store at most once (pipeline/run/sliceMemo.ts, ADR 0080): the stages after the first take what
 * the execution read or wrote. A new execution reads the store again, and what it finds there is
 * what the first one wrote.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { contextFor } from '../../activities/runtime.js';
import { SAMPLES_DIR } from '../../cli/quickstartConfig.js';
import { parseBuildConfig } from '../../config/buildConfig.js';
import { stagesFor } from '../../config/stages.js';
import type { SourceSample } from '../../domain/sample.js';
import { runSliceStages, runStage } from '../../pipeline/run/runStage.js';
import type { StageState } from '../../pipeline/run/stageState.js';
import { startSimulator } from '../../simulator/server.js';
import { LocalStore } from '../../storage/localStore.js';
import { ReadCounts } from '../harness/readCounts.js';
import { getCreatedJson } from '../../storage/objectStore.js';

test('a slice execution reads each stage state and staged image of its samples at most once; the next execution reads the store again', async () => {
  const output = await mkdtemp(path.join(tmpdir(), 'mmif-slice-memo-'));
  const sim = await startSimulator({ seed: 3 });
  try {
    const config = parseBuildConfig({
      buildId: 'slice-memo',
      output,
      sources: [{ type: 'cc3m', uri: SAMPLES_DIR, layout: 'files' }],
      maxSamples: 10,
      models: { default: { model: 'mmif-sim-vlm', baseUrl: sim.url } },
    });
    const store = new ReadCounts(output);
    const ctx = { ...contextFor(config), store };
    const samples: SourceSample[] = [];
    for await (const segment of ctx.sources[0]!.segments()) samples.push(...segment.records.map((_, i) => segment.sample(i)));
    const [image, ...later] = stagesFor(config.mode);
    const isState = (key: string) => key.includes('/_work/samples/');
    const isImage = (key: string) => key.includes('/_work/images/');

    // The image stage in an execution of its own: the others then read the staged image once per sample.
    await runStage(ctx, image!, samples);
    store.reads.clear();
    const outcome = await runSliceStages(ctx, later, samples);
    const sent = Object.values(outcome.stages).reduce((sum, s) => sum + s!.ok, 0);
    assert.ok(sent > samples.length, `samples got through the later stages: ${JSON.stringify(outcome.stages)}`);
    const states = store.most(isState);
    assert.equal(states.most, 1, 'each stage state read at most once');
    const images = store.most(isImage);
    assert.equal(images.most, 1, 'each staged image read at most once');
    const staged = new Set<string>();
    for (const sample of samples) {
      const state = await getCreatedJson<StageState<'image'>>(ctx.store, ctx.layout.stageState(sample.sampleId, 'image'));
      if (state?.status === 'ok') staged.add(state.result.sha256);
    }
    assert.equal(images.keys, staged.size, 'every image staged was read (once)');

    // A new execution of the same slice reads again what it needs from the store, and finds every stage done.
    store.reads.clear();
    const again = await runSliceStages(ctx, later, samples);
    assert.equal(
      Object.values(again.stages).reduce((sum, s) => sum + s!.requests, 0),
      0,
      'nothing sent again',
    );
    const reread = store.most(isState);
    assert.ok(reread.keys >= samples.length && reread.most === 1, `the states read from the store again, once each: ${JSON.stringify(reread)}`);
    assert.deepEqual(
      Object.values(again.stages).map((s) => s!.ok),
      Object.values(outcome.stages).map((s) => s!.ok),
      'the same outcomes, from the stored states',
    );

    // All stages in one execution from scratch: the image it stored is never read back.
    const fresh = new ReadCounts(path.join(output, 'fresh'));
    await runSliceStages({ ...contextFor({ ...config, output: path.join(output, 'fresh') }), store: fresh }, stagesFor(config.mode), samples);
    assert.equal(fresh.most(isImage).keys, 0, 'the image stored by this execution is not read back');
    assert.equal(fresh.most(isState).most, 1);
  } finally {
    await sim.close();
    await rm(output, { recursive: true, force: true });
  }
});

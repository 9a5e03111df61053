/**
 * An evaluation (`mmif eval`) as a workflow, like a build: plan the items (the held-out split's
 * samples, or chats), evaluate them in slices with bounded parallelism, write the reports. Every
 * item's result is stored once done and every model call goes through the builds' cache and limiter,
 * so a killed worker costs a retried slice that skips finished items and pays for no call twice, and
 * a re-run with the same evalId (workflow id `eval-<evalId>`) continues instead of starting over.
 * Slices run on the evaluated model's `taskQueue` when it has one, as a build's stages do.
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from '../activities/index.js';
import { mapLimit } from '../domain/mapLimit.js';
import type { EvalSummary } from '../output/reports/evalOutputs.js';
import { pipelineActivityOptions } from './activityOptions.js';
import { evalConfigInput } from './configInput.js';

export interface EvalProgress {
  phase: 'planning' | 'evaluating' | 'reporting' | 'done';
  items: number;
  slices: { planned: number; done: number };
}

export const evalProgressQuery = defineQuery<EvalProgress>('evalProgress');

/** Slices of one eval at most (~6 history events each): far below Temporal's 51,200-event limit. */
const MAX_SLICES = 1000;

export async function evaluateModel(input: unknown): Promise<EvalSummary> {
  const config = await evalConfigInput(input);
  const progress: EvalProgress = { phase: 'planning', items: 0, slices: { planned: 0, done: 0 } };
  setHandler(evalProgressQuery, () => progress);
  const options = pipelineActivityOptions(config.retry);
  const acts = proxyActivities<typeof activities>(options);
  const sliceActs = config.model.taskQueue ? proxyActivities<typeof activities>({ ...options, taskQueue: config.model.taskQueue }) : acts;

  const { items } = await acts.planEvaluation(config);
  // At most MAX_SLICES activities: the workflow never continues as new, so its history stays bounded.
  const size = Math.max(config.sliceSize, Math.ceil(items / MAX_SLICES));
  const slices: Array<[number, number]> = [];
  for (let from = 0; from < items; from += size) slices.push([from, Math.min(from + size, items)]);
  Object.assign(progress, { phase: 'evaluating', items, slices: { planned: slices.length, done: 0 } });
  await mapLimit(slices, config.maxParallelSlices, async ([from, to]) => {
    await sliceActs.runEvalSlice({ config, from, to });
    progress.slices.done += 1;
  });
  progress.phase = 'reporting';
  const summary = await acts.finalizeEvaluation(config);
  progress.phase = 'done';
  return summary;
}

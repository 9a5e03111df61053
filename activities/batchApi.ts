/**
 * Activities of the Batch API path. A submission (then each resubmission) sends the first call of a stage for every sample of a
 * shard that still needs it, the workflow waits on durable timers while polling, and collecting
 * files each reply under the cache key the stage will look up. Batch ids and reply targets live in
 * the object store, never in workflow history.
 */
import { endpointFor } from '../config/endpointRouting.js';
import { mapLimit } from '../domain/mapLimit.js';
import { batchCallError, batchCustomId, collectBatch, pollBatch, submitBatches, type BatchRequest, type SubmissionLog } from '../llm/batch.js';
import { abortSignal, throwIfAborted } from '../llm/abortScope.js';
import type { CallRecord } from '../llm/callRecord.js';
import type { ReplyTarget } from '../llm/modelRequest.js';
import type { BatchableStage } from '../config/endpointRouting.js';
import { firstRequest } from '../pipeline/run/batchRequests.js';
import { getJson, putJson } from '../storage/objectStore.js';
import { resolveEndpoint } from '../llm/endpoint.js';
import type { StageContext } from '../pipeline/run/context.js';
import type { ShardTask } from './buildRef.js';
import { contextForBuild } from './runtime.js';
import { loadShardPlan } from './shardPlan.js';
import { withHeartbeat } from './heartbeat.js';
import { setTimeout as sleep } from 'node:timers/promises';

interface BatchRoundTask extends ShardTask {
  stage: BatchableStage;
  /**
   * The resubmission: 0 for the first submission; resubmissions of failed or expired lines count up.
   * Named `round` because workflow histories carry it and stored keys (layout.batchRound) use it.
   */
  round: number;
  /** Resubmit only these samples (the previous submission's failures); all pending samples when absent. */
  only?: string[];
}

interface StoredRound {
  batchIds: string[];
  /** custom_id -> where its reply goes (and which sample it is for). */
  targets: Record<string, ReplyTarget & { sampleId: string }>;
}

/**
 * Submits a round. Each file's batch is recorded (layout.batchSubmissions) before the next file is
 * uploaded, so a retry after a timeout, a crash or a lost worker submits only the files not yet
 * submitted: nothing is paid twice, large rounds included.
 */
export async function submitStageBatch(task: BatchRoundTask): Promise<{ batchIds: string[]; requests: number }> {
  return withHeartbeat(async () => {
    const ctx = await contextForBuild(task.build);
    const key = ctx.layout.batchRound(task.shard, task.stage, task.round);
    const submitted = await getJson<StoredRound>(ctx.store, key);
    if (submitted) return { batchIds: submitted.batchIds, requests: Object.keys(submitted.targets).length };

    const samples = (await loadShardPlan(task)).filter((s) => !task.only || task.only.includes(s.sampleId));
    const prepared = await mapLimit(samples, 8, async (sample) => {
      throwIfAborted();
      const first = await firstRequest(ctx, task.stage, sample);
      if (!first) return undefined;
      const request = await ctx.models.prepare(first.request, first.json);
      if (await ctx.models.isCached(request.cacheKey)) return undefined;
      return { sample, request };
    });
    const requests: BatchRequest[] = [];
    const targets: StoredRound['targets'] = {};
    for (const p of prepared) {
      if (!p) continue;
      const customId = batchCustomId({ sampleId: p.sample.sampleId, stage: task.stage, kind: p.request.kind, resubmission: task.round });
      requests.push({ custom_id: customId, body: p.request.body });
      targets[customId] = { stage: p.request.stage, cacheKey: p.request.cacheKey, model: p.request.model, estimate: p.request.estimate, sampleId: p.sample.sampleId };
    }
    const logKey = ctx.layout.batchSubmissions(task.shard, task.stage, task.round);
    const log = (await getJson<SubmissionLog>(ctx.store, logKey)) ?? { batches: [] };
    if (requests.length === 0 && log.batches.length === 0) return { batchIds: [], requests: 0 };
    // A spent budget submits no batch (its replies are counted when collected).
    if (requests.length > 0) await ctx.models.admitBatch();
    const client = ctx.models.client(endpointFor(ctx.config, task.stage));
    let all = log;
    await submitBatches(client, requests, {
      metadata: { build: task.build.buildId, shard: String(task.shard), stage: task.stage, round: String(task.round) },
      log,
      record: async (grown) => {
        await putJson(ctx.store, logKey, grown);
        all = grown;
      },
      beforeFile: throwIfAborted,
    }).catch(failFast(ctx, task.stage));
    const batchIds = all.batches.map((b) => b.batchId);
    await putJson(ctx.store, key, { batchIds, targets } satisfies StoredRound);
    return { batchIds, requests: requests.length };
  });
}

interface BatchWait {
  build: ShardTask['build'];
  stage: BatchableStage;
  batchId: string;
  /** The first wait; later polls back off by half again, up to `maxPollMs`. */
  firstPollMs: number;
  maxPollMs: number;
}

/**
 * Waits inside one heartbeating activity until the batch is done, so the history holds one activity
 * whatever the wait (polling from the workflow cost a timer and an activity per poll); a lost worker is
 * noticed by the heartbeat timeout and the retry simply polls again (polling pays nothing).
 */
export async function awaitStageBatch(task: BatchWait): Promise<{ status: string }> {
  return withHeartbeat(async () => {
    const ctx = await contextForBuild(task.build);
    const client = ctx.models.client(endpointFor(ctx.config, task.stage));
    let wait = task.firstPollMs;
    for (;;) {
      await sleep(wait, undefined, { signal: abortSignal() });
      const progress = await pollBatch(client, task.batchId).catch(failFast(ctx, task.stage));
      if (progress.done) return { status: progress.status };
      wait = Math.min(wait * 1.5, task.maxPollMs);
    }
  });
}

/** Files every reply of a finished round in the cache; returns the samples to resubmit. */
export async function collectStageBatch(task: BatchRoundTask): Promise<{ stored: number; retry: string[] }> {
  // Stores one reply at a time: a large round takes longer than the heartbeat timeout.
  return withHeartbeat(async () => {
    const ctx = await contextForBuild(task.build);
    const round = await getJson<StoredRound>(ctx.store, ctx.layout.batchRound(task.shard, task.stage, task.round));
    if (!round) throw new Error(`no batch round ${task.round} of ${task.stage} for shard ${task.shard}`);
    const client = ctx.models.client(endpointFor(ctx.config, task.stage));
    const calls: CallRecord[] = [];
    const answered = new Set<string>();
    for (const batchId of round.batchIds) {
      for (const [customId, outcome] of await collectBatch(client, batchId).catch(failFast(ctx, task.stage))) {
        throwIfAborted();
        const target = round.targets[customId];
        if (!target || outcome.status !== 'ok') continue;
        calls.push(await ctx.models.storeReply(target, outcome.reply));
        answered.add(customId);
      }
    }
    // Batch replies are paid here, not by the stage that later reads them from the cache.
    await putJson(ctx.store, ctx.layout.batchCalls(task.shard, task.stage, task.round), calls);
    const retry = Object.entries(round.targets)
      .filter(([customId]) => !answered.has(customId))
      .map(([, target]) => target.sampleId);
    return { stored: calls.length, retry };
  });
}

/**
 * A failed Batch API call as one line naming the role, the call, the endpoint, model and attempts
 * (batchCallError): a refused key or spent quota is as permanent as on the synchronous path, an
 * EndpointError, which Temporal does not retry (activityOptions.ts); a 5xx or no connection is
 * retried by Temporal, and the last attempt's line is the shard's cause.
 */
function failFast(ctx: StageContext, stage: BatchableStage): (err: unknown) => never {
  const endpoint = endpointFor(ctx.config, stage);
  return (err) => {
    throw batchCallError(err, { role: stage, endpoint: resolveEndpoint(endpoint), apiKeyEnv: endpoint.apiKeyEnv, timeoutMs: ctx.config.llm.timeoutMs });
  };
}

/**
 * Runs one stage, or several in order, over a slice of samples. Idempotent: a sample whose state for this stage exists is
 * skipped, so a retried activity resumes where the last attempt stopped and pays for nothing twice.
 * A sample rejected by an earlier stage is not processed further. A rejection caused by a model call
 * (modelCall in its details) is not final: the next run of the stage tries the sample again, so a
 * shard failed by its error budget recovers once the endpoint is fixed.
 */
import { mapLimit } from '../../domain/mapLimit.js';
import { abortSignal, throwIfAborted } from '../../llm/abortScope.js';
import type { LanePool, LaneOrder } from './lanePool.js';
import { SampleRejection } from '../../domain/rejection.js';
import { withTallies } from '../../llm/tallyScope.js';
import { noTallies, type Tallies } from '../../domain/tallies.js';
import type { SourceSample } from '../../domain/sample.js';
import type { CallRecord } from '../../llm/callRecord.js';
import { createJson, getCreatedJson } from '../../storage/objectStore.js';
import { ConsecutiveFaults } from './errorBudget.js';
import { SliceMemo } from './sliceMemo.js';
import { leftToLaterStage, sendAhead, stagesSentBeside } from './sentAhead.js';
import type { StageContext } from './context.js';
import type { StageName } from '../../config/stages.js';
import type { PriorResults } from '../stages/stageDefinition.js';
import { stageDefinition } from '../stages/registry.js';
import type { StageState } from './stageState.js';
import { reasonCode } from '../../config/rejectionReasons.js';
import { recordSample } from '../../telemetry/metrics.js';
import { inSpan } from '../../telemetry/tracing.js';

/** A one-stage slice's tallies are its own (runStage); a slice through several counts them once (SliceStagesOutcome). */
export interface SliceOutcome extends Partial<Tallies> {
  ok: number;
  rejected: number;
  /** Rejected by an earlier stage: nothing to do here. */
  blocked: number;
  /** Model requests this execution of the slice sent (cache hits not counted). */
  requests: number;
}

export async function runStage(
  ctx: StageContext,
  stage: StageName,
  samples: readonly SourceSample[],
  /** Counted into: the tallies of an earlier execution of the slice (activities/index.ts) stay in them. */
  tallies: Tallies = noTallies(),
): Promise<SliceOutcome> {
  const outcome = await runSliceStages(ctx, [stage], samples, tallies);
  return { ...outcome.stages[stage]!, failedAttempts: outcome.failedAttempts, replicas: outcome.replicas };
}

/** A slice run through several stages: each stage's counts, and the tallies of the whole slice (not split by stage). */
export interface SliceStagesOutcome extends Tallies {
  stages: Partial<Record<StageName, SliceOutcome>>;
}

/** The worker's lanes a slice's samples take (pipeline/run/lanePool.ts), and the slice's place in their line. */
export interface SliceLanes {
  pool: LanePool;
  /** The slice's place; each sample's is this followed by its index in the slice. */
  order: LaneOrder;
}

/**
 * Runs a slice's samples through `stages` in order, each sample on its own: with latency following
 * reply length (an answer takes several times a judge), sample A goes on to `answer` while sample B
 * is still in `constraints`, and no stage waits for the slice's slowest sample. With `lanes`, every
 * sample waits for one of the worker's lanes, shared with the other slices and shards of the build,
 * and holds it through its stages: a lane its sample freed takes the next waiting sample of any
 * slice, so nothing idles in this slice's tail. Without, at most llm.concurrency samples of the slice
 * are in flight (the stage-by-stage activities). The error budget stays per stage: maxConsecutive
 * model-call rejections in a row in one stage fail the slice (naming that stage), and no further
 * sample or stage is started. `progress` is called as each sample gets through a stage (or is
 * blocked in it).
 */
export async function runSliceStages(
  ctx: StageContext,
  stages: readonly StageName[],
  samples: readonly SourceSample[],
  /** Counted into, as in runStage. */
  tallies: Tallies = noTallies(),
  progress: (outcome: SliceStagesOutcome) => void = () => {},
  lanes?: SliceLanes,
): Promise<SliceStagesOutcome> {
  const outcome: SliceStagesOutcome = { stages: {}, ...tallies };
  // This execution's reads and writes of its samples' states and images, each sample's kept until it leaves.
  const memo = new SliceMemo();
  const running = stages.map((stage) => {
    const counts: SliceOutcome = { ok: 0, rejected: 0, blocked: 0, requests: 0 };
    outcome.stages[stage] = counts;
    // The slice's executions of a stage note the requests they send in one log (ModelCaller.forSlice).
    const models = ctx.models.forSlice(`${stage} ${samples[0]?.sampleId}..${samples.at(-1)?.sampleId}`);
    const { buildsOn } = stageDefinition(ctx.config.mode, stage);
    return { stage, buildsOn, counts, inARow: new ConsecutiveFaults(ctx.config.llm.errorBudget, `stage ${stage}`), ctx: { ...ctx, models, memo } };
  });
  const failing = () => running.some((s) => s.inARow.exceeded);
  const throughStages = async (sample: SourceSample) => {
    try {
      await throughEachStage(sample);
    } finally {
      memo.forget(sample.sampleId);
    }
  };
  const throughEachStage = async (sample: SourceSample) => {
    // The stages that rejected or blocked this sample: a stage building on one of them is blocked.
    const stopped = new Set<StageName>();
    for (const one of running) {
      // An endpoint refusing everything: the slice fails, and the rest are not sent to it.
      if (failing()) return;
      throwIfAborted(); // a cancelled activity starts no further sample

      const { status, fresh, sent } = one.buildsOn.some((s) => stopped.has(s))
        ? { status: 'blocked' as const, sent: 0 }
        : await inSpan(
            `stage ${one.stage}`,
            () => ({ 'mmif.build': ctx.config.buildId, 'mmif.stage': one.stage, 'mmif.source': sample.source }),
            () => runOne(one.ctx, one.stage, sample),
            (ran) => ({ 'mmif.outcome': ran.status, 'mmif.requests': ran.sent }),
          );
      one.counts[status] += 1;
      one.counts.requests! += sent;
      if (status !== 'ok') stopped.add(one.stage);
      if (fresh) {
        one.inARow.record(fresh.status === 'rejected' ? fresh.details?.modelCall : undefined);
        recordSample(ctx.config.buildId, sample.source, one.stage, fresh.status, fresh.status === 'rejected' ? reasonCode(fresh.reason) : undefined);
      }
      progress(outcome);
    }
  };
  await withTallies(tallies, async () => {
    if (lanes) await throughLanes(lanes, samples, throughStages);
    else await mapLimit(samples, ctx.config.llm.concurrency, throughStages);
  });
  return outcome;
}

/**
 * Every sample of the slice waits in the worker's line at once (the pool, not the slice, bounds what
 * is in flight) and holds its lane through `run`. The first failure (a spent error budget, a store
 * outage, a cancelled activity) takes the slice's waiting samples out of line at once: the slice
 * fails with that failure once its samples holding lanes end, and no lane is kept for it meanwhile.
 */
export async function throughLanes(lanes: SliceLanes, samples: readonly SourceSample[], run: (sample: SourceSample) => Promise<void>): Promise<void> {
  const failed = new AbortController();
  const activity = abortSignal();
  const leave = activity ? AbortSignal.any([activity, failed.signal]) : failed.signal;
  await mapLimit(samples, samples.length, async (sample, index) => {
    const release = await lanes.pool.acquire([...lanes.order, index], leave);
    try {
      await run(sample);
    } catch (err) {
      failed.abort(err);
      throw err;
    } finally {
      release();
    }
  });
}

/** Whether a sample still needs this stage: no final state for it yet. */
export async function stageDone(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<boolean> {
  return isFinal(await storedState(ctx, sample, stage));
}

/** The sample's state for `stage`: read from the store once per slice execution (sliceMemo.ts). */
function storedState(ctx: StageContext, sample: SourceSample, stage: StageName): Promise<StageState | undefined> {
  const read = () => getCreatedJson<StageState>(ctx.store, ctx.layout.stageState(sample.sampleId, stage));
  return ctx.memo ? ctx.memo.state(sample.sampleId, stage, read) : read();
}

function isFinal(state: StageState | undefined): boolean {
  return state !== undefined && !(state.status === 'rejected' && state.details?.modelCall);
}

type Status = 'ok' | 'rejected' | 'blocked';

/** The sample's outcome, the state this call wrote (none when the stage was done or blocked) and the requests it sent. */
async function runOne(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<{ status: Status; fresh?: StageState; sent: number }> {
  const existing = await storedState(ctx, sample, stage);
  if (existing && isFinal(existing)) return { status: existing.status, sent: 0 };

  const prior = await loadPrior(ctx, stage, sample);
  if (!prior) return { status: 'blocked', sent: 0 };
  // A model-call rejection tried again: a rerun of its own (the unusable replies it stored are asked
  // again, see ModelCaller.forExecution), keeping the calls it paid for in the sample's accounts.
  const rerun = existing ? (existing.rerun ?? 0) + 1 : 0;
  const calls: CallRecord[] = [...(existing?.calls ?? [])];
  // Scoped to this execution, so calls a killed earlier execution paid for are still counted.
  const scoped: StageContext = { ...ctx, models: ctx.models.forExecution(`${sample.sampleId}/${stage}`, rerun) };
  const reran = rerun > 0 ? { rerun } : {};
  const run = async (): Promise<StageState> => {
    try {
      return { status: 'ok', stage, result: await stageDefinition(ctx.config.mode, stage).run(scoped, sample, prior, calls), calls, ...reran };
    } catch (err) {
      if (!(err instanceof SampleRejection)) throw err;
      return { status: 'rejected', stage, reason: err.reason, calls, ...(err.details ? { details: err.details } : {}), ...reran };
    }
  };
  // Later stages' first calls that need nothing this stage makes go out beside it (sentAhead.ts).
  // A rerun (a model-call rejection made again) sends nothing ahead: its first run sent those calls and
  // recorded them in its state; sent again, their cached replies would be counted as paid a second time.
  const [ran, ahead] = await Promise.allSettled([run(), existing ? Promise.resolve([]) : sendAhead(ctx, stage, sample, prior)]);
  if (ran.status === 'rejected') throw ran.reason;
  if (ahead.status === 'rejected') throw ahead.reason;
  const state = ran.value;
  // Sent for a stage this sample now never runs: recorded here, where its cost is counted. A sample
  // that passes leaves the replies to the later stage, which counts them as paid itself (recovered),
  // and keeps the losses found in sending them (leftToLaterStage); a rerun that passes gives back so
  // what its first run recorded.
  if (state.status === 'rejected') calls.push(...ahead.value);
  else if (existing) {
    const besideRoles = new Set<string | undefined>(stagesSentBeside(ctx.config, stage).map((d) => d.modelRoles[0]));
    state.calls = calls.filter((c) => !(besideRoles.has(c.stage) && leftToLaterStage(c)));
  } else calls.push(...ahead.value.filter((c) => !leftToLaterStage(c)));
  await createJson(ctx.store, ctx.layout.stageState(sample.sampleId, stage), state);
  ctx.memo?.wrote(sample.sampleId, stage, state);
  // The calls of earlier executions came first in `calls`: only the rest were sent now.
  const sent = calls.slice(existing?.calls.length ?? 0).filter((c) => !c.cached).length;
  return { status: state.status, fresh: state, sent };
}

/** The results of the stages this one builds on, or undefined when one of them rejected the sample. */
export async function loadPrior(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<PriorResults | undefined> {
  const prior: PriorResults = {};
  for (const dep of stageDefinition(ctx.config.mode, stage).buildsOn) {
    const state = await storedState(ctx, sample, dep);
    if (!state) throw new Error(`sample ${sample.sampleId}: stage '${stage}' ran before stage '${dep}'`);
    if (state.status === 'rejected') return undefined;
    (prior as Record<string, unknown>)[dep] = state.result;
  }
  return prior;
}

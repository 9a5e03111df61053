/**
 * Runs one stage over a slice of samples. Idempotent: a sample whose state for this stage exists is
 * skipped, so a retried activity resumes where the last attempt stopped and pays for nothing twice.
 * A sample rejected by an earlier stage is not processed further.
 */
import { mapLimit } from '../domain/mapLimit.js';
import { SampleRejection } from '../domain/rejection.js';
import type { SourceSample } from '../domain/sample.js';
import type { CallRecord } from '../llm/modelCaller.js';
import { getJson, putJson } from '../storage/objectStore.js';
import { runAnswerStage, runRejectedStage, type Task } from './answerStages.js';
import { runConstraintStage } from './constraintStage.js';
import type { StageContext } from './context.js';
import { runImageStage } from './imageStage.js';
import { runInstructionStage } from './instructionStage.js';
import { loadSampleImage } from './sampleImage.js';
import type { StageName, StageResults, StageState } from './stageState.js';

const PRIOR_STAGES: Record<StageName, StageName[]> = {
  image: [],
  instruction: ['image'],
  constraints: ['image', 'instruction'],
  answer: ['image', 'instruction', 'constraints'],
  rejected: ['image', 'instruction', 'constraints', 'answer'],
};

export interface SliceOutcome {
  ok: number;
  rejected: number;
  /** Rejected by an earlier stage: nothing to do here. */
  blocked: number;
}

export async function runStage(
  ctx: StageContext,
  stage: StageName,
  samples: readonly SourceSample[],
  onSampleDone: () => void = () => {},
): Promise<SliceOutcome> {
  const outcome: SliceOutcome = { ok: 0, rejected: 0, blocked: 0 };
  await mapLimit(samples, ctx.config.llm.concurrency, async (sample) => {
    const status = await runOne(ctx, stage, sample);
    outcome[status] += 1;
    onSampleDone();
  });
  return outcome;
}

/** Whether a sample still needs this stage: no state for it yet. */
export async function stageDone(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<boolean> {
  return ctx.store.exists(ctx.layout.stageState(sample.sampleId, stage));
}

async function runOne(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<keyof SliceOutcome> {
  const key = ctx.layout.stageState(sample.sampleId, stage);
  const existing = await getJson<StageState>(ctx.store, key);
  if (existing) return existing.status;

  const prior = await loadPrior(ctx, stage, sample);
  if (!prior) return 'blocked';
  const calls: CallRecord[] = [];
  let state: StageState;
  try {
    state = { status: 'ok', stage, result: await execute(ctx, stage, sample, prior, calls), calls };
  } catch (err) {
    if (!(err instanceof SampleRejection)) throw err;
    state = { status: 'rejected', stage, reason: err.reason, calls, ...(err.details ? { details: err.details } : {}) };
  }
  await putJson(ctx.store, key, state);
  return state.status;
}

/** The results of the stages this one builds on, or undefined when one of them rejected the sample. */
export async function loadPrior(ctx: StageContext, stage: StageName, sample: SourceSample): Promise<Partial<StageResults> | undefined> {
  const prior: Partial<StageResults> = {};
  for (const dep of PRIOR_STAGES[stage]) {
    const state = await getJson<StageState>(ctx.store, ctx.layout.stageState(sample.sampleId, dep));
    if (!state) throw new Error(`sample ${sample.sampleId}: stage '${stage}' ran before stage '${dep}'`);
    if (state.status === 'rejected') return undefined;
    (prior as Record<string, unknown>)[dep] = state.result;
  }
  return prior;
}

async function execute(
  ctx: StageContext,
  stage: StageName,
  sample: SourceSample,
  prior: Partial<StageResults>,
  calls: CallRecord[],
): Promise<StageResults[StageName]> {
  if (stage === 'image') return runImageStage(ctx, sample);
  const image = await loadSampleImage(ctx, prior.image!);
  switch (stage) {
    case 'instruction':
      return runInstructionStage(ctx, sample, image, calls);
    case 'constraints':
      return runConstraintStage(ctx, sample, prior.instruction!.instruction, image, calls);
    case 'answer':
      return runAnswerStage(ctx, taskOf(sample, prior), prior.constraints!.constraints, image, calls);
    case 'rejected':
      return runRejectedStage(ctx, sample, taskOf(sample, prior), prior.constraints!.constraints, prior.answer!.verdicts, image, calls);
  }
}

export function taskOf(sample: SourceSample, prior: Partial<StageResults>): Task {
  return { instruction: prior.instruction!.instruction, reference: sample.originalAnswer };
}

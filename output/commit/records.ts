/**
 * Turns a sample's stage states into output records: one MM-IFInstruct record (SFT), one MM-IFDPO
 * pair, or a rejection saying which stage refused the sample and why, with what it passed before
 * (its staged image, instruction, constraints). Pure: no I/O.
 */
import type { ModelRole } from '../../config/modelsConfig.js';
import type { TrainingPromptTemplate } from '../../config/generationConfig.js';
import { imagePathInDataset, stagedImagePathInDataset } from '../../storage/buildLayout.js';
import { STAGE_NAMES, type StageName } from '../../config/stages.js';
import type { Verdict } from '../../domain/verdict.js';
import type { ImageResult, StageResults } from '../../pipeline/run/stageState.js';
import type { RejectionDetails } from '../../domain/rejection.js';
import type { SourceSample } from '../../domain/sample.js';
import type { VerifierCall } from '../../domain/constraints/compatibility.js';
import { templateForSample, trainingPromptText } from '../../prompts/trainingPrompt.js';
import { writtenFunctionName } from '../../verification/functions.js';
import {
  IMAGE_TOKEN,
  type AssembledSample,
  type DpoRecord,
  type InstructRecord,
  type RejectRecord,
  type RejectedContext,
  type SampleStates,
  type SourcedRecord,
} from '../contracts/records.js';

/** A sample's source fields as every record writes them (all but the record's own id). */
export function sourceFields(sample: SourceSample, image: Pick<ImageResult, 'sha256' | 'origin'>): Omit<SourcedRecord, 'id'> {
  return {
    source: sample.source,
    source_id: sample.sourceId,
    license: sample.licenseNote,
    image_path: imagePathInDataset(image.sha256),
    image_sha256: image.sha256,
    image_origin: image.origin,
  };
}

/** The single-turn stages whose rejection leaves the sample no record; a rejection in `rejected` costs only the DPO pair. */
const SAMPLE_STAGES = STAGE_NAMES.filter((s) => s !== 'rejected');

/** How the training prompt of every record of a build is written (from its config). */
export interface TrainingPromptSettings {
  template: TrainingPromptTemplate;
  seed: number;
}

/** Rejection details as written: snake_case like every other record field. */
export function writtenDetails(details: RejectionDetails | undefined): Partial<RejectRecord> {
  if (!details) return {};
  const written: Partial<RejectRecord> = {};
  if (details.verdicts) written.verdicts = details.verdicts;
  if (details.firstVerdicts) written.first_verdicts = details.firstVerdicts;
  if (details.strategy !== undefined) written.strategy = details.strategy;
  if (details.ruleRejections) written.pair_rule_rejections = details.ruleRejections;
  if (details.atStake) written.at_stake = details.atStake;
  if (details.modelCall) written.model_call = details.modelCall;
  return written;
}

/** What a sample passed of the stages every mode runs first (image, instruction, constraints), as its rejection writes it. */
export function passedStages(states: SampleStates): RejectedContext {
  const passed: RejectedContext = {};
  const { image, instruction, constraints } = states;
  if (image?.status === 'ok') passed.staged_image_path = stagedImagePathInDataset(image.result.sha256);
  if (instruction?.status === 'ok') passed.instruction = instruction.result.instruction;
  if (constraints?.status === 'ok') passed.constraints = constraints.result.constraints.map(({ type, value, method }) => ({ type, value, method }));
  return passed;
}

/** The rejection of a sample (or of its pair) as every build mode writes it, with what it passed; `details` already written. */
export function rejectRecord(
  sample: SourceSample,
  passed: RejectedContext,
  kind: RejectRecord['kind'],
  stage: StageName,
  reason: string,
  details: Partial<RejectRecord> = {},
): RejectRecord {
  return { id: sample.sampleId, source: sample.source, source_id: sample.sourceId, kind, stage, reason, ...details, ...passed };
}

export function assembleSample(sample: SourceSample, states: SampleStates, training: TrainingPromptSettings): AssembledSample {
  const calls = STAGE_NAMES.flatMap((s) => states[s]?.calls ?? []);
  const passed = passedStages(states);
  const refuse = (kind: RejectRecord['kind'], stage: StageName, reason: string, details?: Partial<RejectRecord>) => rejectRecord(sample, passed, kind, stage, reason, details);
  const results: Partial<StageResults> = {};
  for (const stage of SAMPLE_STAGES) {
    const state = states[stage];
    if (!state) return { passed, calls, reject: refuse('sample', stage, `incomplete: stage '${stage}' never ran`) };
    if (state.status === 'rejected') return { passed, calls, reject: refuse('sample', stage, state.reason, writtenDetails(state.details)) };
    (results as Record<string, unknown>)[stage] = state.result;
  }
  const { image, instruction, constraints, answer } = results as Omit<StageResults, 'rejected'>;
  const modelOf = (role: ModelRole) => calls.find((c) => c.stage === role)?.model ?? '';
  const template = templateForSample(training.template, training.seed, sample.sampleId);
  const instruct: InstructRecord = {
    id: sample.sampleId,
    ...sourceFields(sample, image),
    instruction: instruction.instruction,
    instruction_origin: instruction.origin,
    original_instruction: sample.originalInstruction ?? null,
    original_answer: sample.originalAnswer ?? null,
    constraints: constraints.constraints.map((c) => ({ ...c, verifiers: writtenCalls(c.verifiers) })),
    prompt: trainingPromptText(template, instruction.instruction, constraints.constraints),
    prompt_template: template,
    generation_prompt: answer.prompt,
    answer: answer.answer,
    verdicts: answer.verdicts.map(writtenVerdict),
    pass_rate: answer.passRate,
    answer_attempts: answer.attempts,
    ...(answer.reasoning !== undefined ? { answer_reasoning: answer.reasoning } : {}),
    models: {
      instruction: modelOf('instruction'),
      constraints: modelOf('constraints'),
      compatibility: modelOf('compatibility'),
      verifier: modelOf('verifier'),
      answer: modelOf('answer') || answer.model,
      judge: modelOf('judge'),
    },
    simulated: calls.some((c) => c.simulated),
    image_richness: sample.richness ?? null,
    vision_dependent: answer.visionDependence?.dependent ?? null,
  };
  const placeholder = imageTokenIn({ prompt: instruct.prompt, answer: instruct.answer });
  if (placeholder) return { passed, calls, reject: refuse('sample', 'answer', placeholder) };
  const rejected = states.rejected;
  if (!rejected) return { passed, calls, instruct, reject: refuse('pair', 'rejected', "incomplete: stage 'rejected' never ran") };
  if (rejected.status === 'rejected') return { passed, calls, instruct, reject: refuse('pair', 'rejected', rejected.reason, writtenDetails(rejected.details)) };
  const rejectedPlaceholder = imageTokenIn({ 'rejected answer': rejected.result.answer });
  if (rejectedPlaceholder) return { passed, calls, instruct, reject: refuse('pair', 'rejected', rejectedPlaceholder) };
  const { answer: _answer, models: _models, answer_attempts: _attempts, answer_reasoning: _reasoning, ...shared } = instruct;
  const dpo: DpoRecord = {
    ...shared,
    id: `${sample.sampleId}-dpo`,
    sample_id: sample.sampleId,
    chosen: answer.answer,
    rejected: rejected.result.answer,
    rejected_prompt: rejected.result.prompt,
    dropped_constraints: rejected.result.dropped.map(({ type, value }) => ({ type, value })),
    strategy: rejected.result.strategy,
    rejected_verdicts: rejected.result.verdicts.map(writtenVerdict),
    chosen_model: instruct.models.answer,
    rejected_model: modelOf('rejected') || rejected.result.model,
    pair_validation: rejected.result.validation,
    rejected_attempts: rejected.result.attempts,
    pair_rule_rejections: rejected.result.ruleRejections,
    ...(answer.reasoning !== undefined ? { chosen_reasoning: answer.reasoning, rejected_reasoning: rejected.result.reasoning ?? null } : {}),
  };
  return { passed, calls, instruct, dpo };
}

function imageTokenIn(texts: Record<string, string>): string | undefined {
  const field = Object.keys(texts).find((name) => texts[name]!.includes(IMAGE_TOKEN));
  return field && `image-token-in-text: the ${field} contains the literal ${IMAGE_TOKEN}, which trainers read as an image slot`;
}

/** Calls as the MM-IFEval scorer names them (`..._metioned_...`), whatever alias chose them. */
export function writtenCalls(calls: readonly VerifierCall[]): VerifierCall[] {
  return calls.map((call) => ({ ...call, func: writtenFunctionName(call.func) }));
}

export function writtenVerdict(v: Verdict): Verdict {
  return v.calls ? { ...v, calls: writtenCalls(v.calls) } : v;
}

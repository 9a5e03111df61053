/**
 * Turns a sample's stage states into output records: one MM-IFInstruct record (SFT), one MM-IFDPO
 * pair, or a rejection saying which stage refused the sample and why. Pure: no I/O.
 */
import type { RichnessScore } from '../../domain/richness.js';
import type { ModelRole, TrainingPromptTemplate } from '../../config/buildConfig.js';
import type { CallRecord } from '../../llm/modelCaller.js';
import { imagePathInDataset } from '../../storage/buildLayout.js';
import type { StageName } from '../../domain/stages.js';
import type { PlannedConstraint, StageResults, StageState, Verdict } from '../../pipeline/stageState.js';
import type { Constraint } from '../../domain/constraints/selection.js';
import type { ModelCallFault, RejectionDetails } from '../../domain/rejection.js';
import type { SourceSample } from '../../domain/sample.js';
import type { VerifierCall } from '../../domain/constraints/compatibility.js';
import { templateForSample, trainingPromptText, type WrittenTemplate } from '../../prompts/trainingPrompt.js';
import { writtenFunctionName } from '../../verification/functions.js';

/** The fields every written record starts with: which record of which source, and its image. */
export interface SourcedRecord {
  id: string;
  source: string;
  source_id: string;
  license: string;
  image_path: string;
  image_sha256: string;
}

/** A sample's source fields as every record writes them (all but the record's own id). */
export function sourceFields(sample: SourceSample, imageSha256: string): Omit<SourcedRecord, 'id'> {
  return {
    source: sample.source,
    source_id: sample.sourceId,
    license: sample.licenseNote,
    image_path: imagePathInDataset(imageSha256),
    image_sha256: imageSha256,
  };
}

export interface InstructRecord extends SourcedRecord {
  instruction: string;
  instruction_origin: string;
  /** The dataset's own question and answer, when it had them (kept for grounding and audit). */
  original_instruction: string | null;
  original_answer: string | null;
  /** With how each is verified (method, verifier calls) and who chose the calls. */
  constraints: PlannedConstraint[];
  /** The user turn of training: the instruction and constraints in the `prompt_template` form. */
  prompt: string;
  prompt_template: WrittenTemplate;
  /** The prompt the answer was generated from (the numbered reference form). */
  generation_prompt: string;
  answer: string;
  /** The answering model's reasoning, apart from the answer: with training.keepReasoning only (null: it gave none). */
  answer_reasoning?: string | null;
  /** One per constraint, for the accepted answer. */
  verdicts: Verdict[];
  pass_rate: number;
  /** Answers generated until one passed the post-filter. */
  answer_attempts: number;
  models: Record<'instruction' | 'constraints' | 'compatibility' | 'verifier' | 'answer' | 'judge', string>;
  simulated: boolean;
  /** The image's richness score, when planning selected it by richness (sources[].richness); else null. */
  image_richness: RichnessScore | null;
  /**
   * With `quality.visionDependence`: false when the sample was answered as well without its image
   * (pipeline/visionDependence.ts); null when the build did not check.
   */
  vision_dependent: boolean | null;
}

export interface DpoRecord extends Omit<InstructRecord, 'answer' | 'models' | 'answer_attempts' | 'answer_reasoning'> {
  sample_id: string;
  chosen: string;
  rejected: string;
  /** The generation prompt of the rejected answer: the same task without `dropped_constraints`. */
  rejected_prompt: string;
  dropped_constraints: Constraint[];
  /** How the rejected answer was made: drop33, drop66, drop100 or no_image. */
  strategy: string;
  /**
   * Verdicts on the constraints at stake and on every rule-checked constraint. Under the strict
   * rule, one at stake failed and none is passed where the chosen answer failed.
   */
  rejected_verdicts: Verdict[];
  chosen_model: string;
  rejected_model: string;
  /** `dpo.validate` the pair was kept under: strict (pairRules.ts) or paper (unvalidated). */
  pair_validation: string;
  /** Rejected answers generated, including the kept one. */
  rejected_attempts: number;
  /** Earlier rejected answers refused, by pair rule. */
  pair_rule_rejections: Record<string, number>;
  /** The models' reasoning for the two answers: with training.keepReasoning only (null: none given). */
  chosen_reasoning?: string | null;
  rejected_reasoning?: string | null;
}

export interface RejectRecord {
  id: string;
  source: string;
  source_id: string;
  /** 'sample': no record at all; 'pair': the SFT record exists but no DPO pair. */
  kind: 'sample' | 'pair';
  stage: StageName;
  reason: string;
  verdicts?: Verdict[];
  /** A regenerated answer's first attempt's verdicts. */
  first_verdicts?: Verdict[];
  /** The DPO strategy of a discarded pair. */
  strategy?: string;
  /** A discarded pair's rejected answers refused, by pair rule (the DPO records' name). */
  pair_rule_rejections?: Record<string, number>;
  /** Indices of a discarded pair's constraints at stake. */
  at_stake?: number[];
  /** The failed model call behind the rejection: endpoint, model, status, masked excerpt. */
  model_call?: ModelCallFault;
}

export type SampleStates = Partial<{ [S in StageName]: StageState<S> }>;

export interface AssembledSample {
  instruct?: InstructRecord;
  dpo?: DpoRecord;
  reject?: RejectRecord;
  calls: CallRecord[];
}

const PIPELINE: StageName[] = ['image', 'instruction', 'constraints', 'answer', 'rejected'];

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

/** The rejection of a sample (or of its pair) as every build mode writes it; `details` already written. */
export function rejectRecord(sample: SourceSample, kind: RejectRecord['kind'], stage: StageName, reason: string, details: Partial<RejectRecord> = {}): RejectRecord {
  return { id: sample.sampleId, source: sample.source, source_id: sample.sourceId, kind, stage, reason, ...details };
}

export function assembleSample(sample: SourceSample, states: SampleStates, training: TrainingPromptSettings): AssembledSample {
  const calls = PIPELINE.flatMap((s) => states[s]?.calls ?? []);
  const results: Partial<StageResults> = {};
  for (const stage of PIPELINE.slice(0, 4)) {
    const state = states[stage];
    if (!state) return { calls, reject: rejectRecord(sample, 'sample', stage, `incomplete: stage '${stage}' never ran`) };
    if (state.status === 'rejected') return { calls, reject: rejectRecord(sample, 'sample', stage, state.reason, writtenDetails(state.details)) };
    (results as Record<string, unknown>)[stage] = state.result;
  }
  const { image, instruction, constraints, answer } = results as Omit<StageResults, 'rejected'>;
  const modelOf = (stage: ModelRole) => calls.find((c) => c.stage === stage)?.model ?? '';
  const template = templateForSample(training.template, training.seed, sample.sampleId);
  const instruct: InstructRecord = {
    id: sample.sampleId,
    ...sourceFields(sample, image.sha256),
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
  if (placeholder) return { calls, reject: rejectRecord(sample, 'sample', 'answer', placeholder) };
  const rejected = states.rejected;
  if (!rejected) return { calls, instruct, reject: rejectRecord(sample, 'pair', 'rejected', "incomplete: stage 'rejected' never ran") };
  if (rejected.status === 'rejected') return { calls, instruct, reject: rejectRecord(sample, 'pair', 'rejected', rejected.reason, writtenDetails(rejected.details)) };
  const rejectedPlaceholder = imageTokenIn({ 'rejected answer': rejected.result.answer });
  if (rejectedPlaceholder) return { calls, instruct, reject: rejectRecord(sample, 'pair', 'rejected', rejectedPlaceholder) };
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
  return { calls, instruct, dpo };
}

/**
 * Trainers read `<image>` in any turn as an image slot (LLaMA-Factory requires as many as the row has
 * images), so a text that contains it literally cannot be written as a training row.
 */
export const IMAGE_TOKEN = '<image>';

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

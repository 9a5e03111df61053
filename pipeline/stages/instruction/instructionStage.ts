/**
 * Stage 2: the instruction. Images without a question get candidates generated (Fig. 14, with
 * task-pool examples and any screen text as grounding) and one is picked, seeded; images that
 * come with a dataset question get it refined into an open task that can carry constraints.
 */
import { endpointFor } from '../../../config/endpointRouting.js';
import { TASK_POOL } from '../../../domain/taskPool.js';
import { pickOne, sampleK } from '../../../domain/random.js';
import { SampleRejection } from '../../../domain/rejection.js';
import type { SourceSample } from '../../../domain/sample.js';
import type { CallRecord } from '../../../llm/callRecord.js';
import { instructionReplySchema, renderInstructionPrompt } from '../../../prompts/instructionPrompt.js';
import { refineReplySchema, renderRefinePrompt } from '../../../prompts/refinePrompt.js';
import { sampleRng, type StageContext } from '../../run/context.js';
import type { InstructionResult } from '../../run/stageState.js';
import type { SampleImage } from '../../run/sampleImage.js';
import type { StageRequest } from '../../run/stageRequest.js';

export async function runInstructionStage(ctx: StageContext, sample: SourceSample, image: SampleImage, calls: CallRecord[]): Promise<InstructionResult> {
  return sample.originalInstruction ? refine(ctx, sample, image, calls) : generate(ctx, sample, image, calls);
}

function examplesFor(ctx: StageContext, sample: SourceSample): string[] {
  return sampleK(sampleRng(ctx, sample.sampleId, 'task-examples'), TASK_POOL, ctx.config.instruction.examples).map((t) => t.instruction);
}

/** The stage's model call, as the stage (or the Batch API, ahead of it) sends it. */
export function instructionRequest(ctx: StageContext, sample: SourceSample, image: SampleImage): StageRequest {
  const endpoint = endpointFor(ctx.config, 'instruction');
  if (sample.originalInstruction) {
    const prompt = renderRefinePrompt(sample.originalInstruction, { answer: sample.originalAnswer, grounding: sample.grounding });
    return { request: { stage: 'instruction', endpoint, prompt, image }, json: { name: 'refined_instruction', schema: refineReplySchema } };
  }
  const prompt = renderInstructionPrompt(examplesFor(ctx, sample), sample.grounding);
  return { request: { stage: 'instruction', endpoint, prompt, image }, json: { name: 'instructions', schema: instructionReplySchema } };
}

async function generate(ctx: StageContext, sample: SourceSample, image: SampleImage, calls: CallRecord[]): Promise<InstructionResult> {
  const { request } = instructionRequest(ctx, sample, image);
  const reply = await ctx.models.json(request, 'instructions', instructionReplySchema, calls);
  const examples = examplesFor(ctx, sample);
  const candidates = reply.instructions.map((s) => s.trim()).filter((s) => s.length > 0);
  if (candidates.length === 0) throw new SampleRejection('instruction: the model returned no usable instruction');
  const instruction = pickOne(sampleRng(ctx, sample.sampleId, 'instruction-pick'), candidates);
  return { instruction, origin: 'generated', candidates, examples };
}

async function refine(ctx: StageContext, sample: SourceSample, image: SampleImage, calls: CallRecord[]): Promise<InstructionResult> {
  const { request } = instructionRequest(ctx, sample, image);
  const reply = await ctx.models.json(request, 'refined_instruction', refineReplySchema, calls);
  const instruction = reply.instruction.trim();
  if (!instruction) throw new SampleRejection('instruction: the model returned an empty refinement');
  return { instruction, origin: 'refined', candidates: [instruction], examples: [] };
}

/** Stage 2: generate candidate instructions for the image (Fig. 14) and pick one, seeded. */
import { endpointFor } from '../config/buildConfig.js';
import { TASK_POOL } from '../domain/taskPool.js';
import { pickOne, sampleK } from '../domain/random.js';
import { SampleRejection } from '../domain/rejection.js';
import type { SourceSample } from '../domain/sample.js';
import type { CallRecord } from '../llm/modelCaller.js';
import { instructionReplySchema, renderInstructionPrompt } from '../prompts/instructionPrompt.js';
import { sampleRng, type StageContext } from './context.js';
import type { InstructionResult } from './stageState.js';
import type { SampleImage } from './sampleImage.js';

export async function runInstructionStage(
  ctx: StageContext,
  sample: SourceSample,
  image: SampleImage,
  calls: CallRecord[],
): Promise<InstructionResult> {
  const examples = sampleK(sampleRng(ctx, sample.sampleId, 'task-examples'), TASK_POOL, ctx.config.instruction.examples).map(
    (t) => t.instruction,
  );
  const reply = await ctx.models.json(
    { stage: 'instruction', endpoint: endpointFor(ctx.config, 'instruction'), prompt: renderInstructionPrompt(examples), image },
    'instructions',
    instructionReplySchema,
    calls,
  );
  const candidates = reply.instructions.map((s) => s.trim()).filter((s) => s.length > 0);
  if (candidates.length === 0) throw new SampleRejection('instruction: the model returned no usable instruction');
  const instruction = pickOne(sampleRng(ctx, sample.sampleId, 'instruction-pick'), candidates);
  return { instruction, origin: 'generated', candidates, examples };
}

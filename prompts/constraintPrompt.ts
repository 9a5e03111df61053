/** Constraint integration (paper Fig. 15): the model adds constraints of offered types to the instruction. */
import { z } from 'zod';
import type { ConstraintType } from '../domain/constraints/catalogue.js';
import type { RenderedPrompt, RequestLayout } from './chat.js';

export const CONSTRAINT_PROMPT_VERSION = 'fig15-v2';

/** The reply of layouts 1 and 2: each constraint's `type` any string. */
const freeTypeReplySchema = z.object({
  constraints: z.array(z.object({ type: z.string(), value: z.string() })),
});
export type ConstraintReply = z.infer<typeof freeTypeReplySchema>;

/**
 * The reply schema of a request offering `offeredKeys`, for a stage that keeps a sample with at
 * least `min` constraints. From request layout 3 the JSON schema sent says what the stage accepts:
 * each constraint's `type` an `enum` of the offered types, a non-empty `value`, at least `min` of
 * them. A server that enforces the schema can then only produce such a list, where a weak model
 * left to free strings names no offered type, or none at all (`{"constraints": []}`). llama.cpp
 * turns the schema into a grammar, `enum`, `minItems` and `minLength` included
 * (github.com/ggml-org/llama.cpp grammars/README.md, "JSON Schemas → GBNF"); vLLM's guided decoding
 * (docs.vllm.ai, features/structured_outputs) and SGLang's structured outputs
 * (docs.sglang.ai, advanced_features/structured_outputs) take the same JSON schema; OpenAI's strict
 * structured outputs support `enum` and `minItems`
 * (platform.openai.com/docs/guides/structured-outputs#supported-schemas).
 * The reply is still parsed as before (zod puts `.meta()` into the JSON schema only): from a server
 * that does not enforce schemas, an unoffered type, an empty value or a short list is dropped or
 * refused by the stage as before (domain/constraints/selection.ts), not the reply as unusable.
 * Types repeated in the list cannot be ruled out by a grammar (no `uniqueItems`) and are dropped there.
 */
export function constraintReplySchema(layout: RequestLayout, offeredKeys: readonly string[], min: number): z.ZodType<ConstraintReply> {
  if (layout < 3) return freeTypeReplySchema;
  const constraint = z.object({ type: z.string().meta({ enum: [...offeredKeys] }), value: z.string().meta({ minLength: 1 }) });
  return z.object({ constraints: z.array(constraint).meta({ minItems: min }) });
}

const OUTPUT_FORMAT = '{"constraints": [{"type": "<constraint type key>", "value": "<the constraint, written as an instruction>"}, ...]}';

/** One line per offered type; the simulator and humans both read this format. */
export function constraintTypeLine(c: ConstraintType): string {
  return `- ${c.key} (${c.subclass}): ${c.description} ${c.guidance} Example: "${c.examples[0]}"`;
}

export function renderConstraintPrompt(instruction: string, offered: readonly ConstraintType[]): RenderedPrompt {
  const text = `You are an expert in add appropriate constraints to the instruction for images.

## Task
Given the original instruction, your task is to expand the instruction by adding constraints to it.

You can select **as many as possible** appropriate types of constraints from the given **Constraints List** below and modify them. However, ensure that the constraints you generate meet the following requirements:

1. Maintain the thematic consistency of the original instruction.
2. Be relevant and appropriate for the original instruction and be concise.
3. Do not conflict with the original instruction or with each other.

For example, if the original instruction is a simple query like "What color is the truck?" you should avoid adding constraints such as "Your response must be in three paragraphs," as such a requirement is unnecessary for a short and simple question. Moreover, if the original instruction is a question like "What is the object in the image?", you should avoid adding constraints such as "Respond in the second-person to directly address the reader," as it conflicts with the original instruction.

## Original Instruction
${instruction}

## Constraints List
Your added constraints can be from the following types:

${offered.map(constraintTypeLine).join('\n')}

## Output Format
Your output should follow the format below, using each type at most once:
${OUTPUT_FORMAT}`;
  return { version: CONSTRAINT_PROMPT_VERSION, messages: [{ role: 'user', text, withImage: true }] };
}

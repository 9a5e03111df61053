/** Constraint integration (paper Fig. 15): the model adds constraints of offered types to the instruction. */
import { z } from 'zod';
import type { ConstraintType } from '../domain/constraints/catalogue.js';
import { rendered, type RenderedPrompt } from './chat.js';

/** The constraints a model added, as parsed from its reply. */
export interface ConstraintReply {
  constraints: Array<{ type: string; value: string }>;
}

/**
 * The reply schema of a request offering `offeredKeys`, for a stage that keeps a sample with
 * `min` to `max` constraints (the paper's 3-12). The JSON schema sent says what the stage
 * accepts: each constraint's `type` an `enum` of the offered types, a non-empty `value`
 * (`minLength` 1), `min` to `max` of them (`minItems`, `maxItems`). A server that enforces the schema can then only produce such a
 * list, where a weak model left to free strings names no offered type, or none at all
 * (`{"constraints": []}`). What each server does with these three keywords (docs/endpoints.md,
 * *What a schema-enforcing server holds the constraint reply to*):
 * - llama.cpp's server turns `response_format.json_schema.schema` into a grammar
 *   (ggml-org/llama.cpp tools/server/server-common.cpp, oaicompat_chat_params_parse) that enforces
 *   all three (common/json-schema.cpp reads `enum`, `minItems`, `minLength`;
 *   common/json-schema-to-grammar.cpp builds the repetition and alternatives), and refuses an empty
 *   `enum` ("enum must be a non-empty array"): with nothing offered no `enum` is sent. `uniqueItems`
 *   is among its unsupported keywords (grammars/README.md), so a list may repeat a type.
 *   Ollama hands the same schema to llama.cpp (ollama/ollama openai/openai.go `format`,
 *   llm/llama_server.go `json_schema`).
 * - vLLM's structured outputs: xgrammar (mlc-ai/xgrammar cpp/json_schema_converter.cc reads all
 *   four; vllm-project/vllm vllm/v1/structured_output/backend_xgrammar.py refuses only
 *   `uniqueItems`, `contains`, `multipleOf`, some formats and object-size keywords) and guidance
 *   (microsoft/llguidance parser/src/json/README.md lists all four as supported).
 * - SGLang: xgrammar, outlines or llguidance; sgl-project/sglang
 *   python/sglang/srt/constrained/json_schema_validation.py lists the keywords xgrammar and outlines
 *   would drop, none of these four.
 * - OpenAI: the dialect sends no `strict` (llm/dialect.ts), which defaults to false: the schema
 *   guides the model and is not enforced, and only strict mode limits the keywords (openai-node
 *   src/resources/shared.ts ResponseFormatJSONSchema.strict). Strict mode supports `enum`,
 *   `minItems` and `maxItems` but not `minLength` (platform.openai.com/docs/guides/structured-outputs#supported-schemas;
 *   refused as "not permitted": jina-ai/node-DeepResearch#79).
 *   An endpoint that refuses the schema with a 400 naming `response_format` gets json_object next (llm/dialect.ts adapt).
 * The reply is parsed as free strings (zod puts `.meta()` into the JSON schema only): from a server
 * that does not enforce schemas, an unoffered type, an empty value, a repeated type or a short list
 * is dropped or refused by the stage (domain/constraints/selection.ts), not the reply as unusable.
 */
export function constraintReplySchema(offeredKeys: readonly string[], count: { min: number; max: number }): z.ZodType<ConstraintReply> {
  const type = offeredKeys.length > 0 ? z.string().meta({ enum: [...offeredKeys] }) : z.string();
  const constraint = z.object({ type, value: z.string().meta({ minLength: 1 }) });
  return z.object({ constraints: z.array(constraint).meta({ minItems: count.min, maxItems: count.max }) });
}

/** What fills Fig. 15's {output format}. */
export const OUTPUT_FORMAT = '{"constraints": [{"type": "<constraint type key>", "value": "<the constraint, written as an instruction>"}, ...]}';

/** Labels the example of an offered type's line (the simulator splits the line at it). */
export const CONSTRAINT_LINE_LABELS = { example: 'Example:' } as const;

/** One line per offered type; the simulator and humans both read this format. */
export function constraintTypeLine(c: ConstraintType): string {
  return `- ${c.key} (${c.subclass}): ${c.description} ${c.guidance} ${CONSTRAINT_LINE_LABELS.example} "${c.examples[0]}"`;
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
  return rendered('constraints', [{ role: 'user', text, withImage: true }]);
}

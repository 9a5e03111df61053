/**
 * A thinking model's reasoning, taken apart from its answer before anything parses, verifies or
 * records the answer. Servers return it in a field of its own, inline between <think> and </think>,
 * or inline with only the closing tag (each form and its sources at separateReasoning). OpenAI's
 * reasoning models return none of it: their thinking is only counted, in
 * usage.completion_tokens_details.reasoning_tokens (usage.ts).
 */

interface Separated {
  answer: string;
  /** The thinking, when the reply carried any (joined when it came in several places). */
  reasoning?: string;
}

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * `content` without its thinking, and the thinking from there and from the message's own fields:
 * - a field of its own: `reasoning_content` (vLLM with --reasoning-parser,
 *   https://docs.vllm.ai/en/latest/features/reasoning_outputs.html; llama.cpp's server with
 *   --reasoning-format deepseek, ggml-org/llama.cpp tools/server/README.md; DeepSeek's API,
 *   https://api-docs.deepseek.com/guides/reasoning_model) or `reasoning` (OpenRouter,
 *   https://openrouter.ai/docs/use-cases/reasoning-tokens; vLLM's newer name for the field);
 * - inline between <think> and </think> when no reasoning parser runs (vLLM without one, llama.cpp
 *   with --reasoning-format none); a reply cut by the token limit ends inside an unterminated <think>;
 * - inline with only the closing </think>, when the chat template opens the <think> in the prompt
 *   (Qwen3's template with enable_thinking; deepseek-ai/DeepSeek-R1 README, usage recommendations).
 */
export function separateReasoning(content: string, message: { reasoning_content?: unknown; reasoning?: unknown } = {}): Separated {
  const thoughts: string[] = [];
  for (const field of [message.reasoning_content, message.reasoning]) {
    if (typeof field === 'string' && field.trim()) thoughts.push(field.trim());
  }
  let answer = content;
  const firstClose = answer.indexOf(CLOSE);
  const firstOpen = answer.indexOf(OPEN);
  // Opened by the template: everything up to the first </think> is thinking.
  if (firstClose >= 0 && (firstOpen < 0 || firstOpen > firstClose)) {
    thoughts.push(answer.slice(0, firstClose).trim());
    answer = answer.slice(firstClose + CLOSE.length);
  }
  for (let open = answer.indexOf(OPEN); open >= 0; open = answer.indexOf(OPEN)) {
    const close = answer.indexOf(CLOSE, open + OPEN.length);
    // Unterminated: cut by the token limit while thinking, the rest is thinking.
    const end = close < 0 ? answer.length : close;
    thoughts.push(answer.slice(open + OPEN.length, end).trim());
    answer = answer.slice(0, open) + answer.slice(close < 0 ? answer.length : close + CLOSE.length);
  }
  const reasoning = thoughts.filter(Boolean).join('\n\n');
  // What surrounded the thinking (the blank line after </think>) is not part of the answer.
  if (answer !== content) answer = answer.trim();
  return { answer, ...(reasoning ? { reasoning } : {}) };
}

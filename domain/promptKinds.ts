/**
 * Every prompt the engine sends, by kind, with its version: the one place a prompt's version is
 * written. A kind names what a request asks for; it is also the reply schema name of the JSON kinds
 * and the `x-mmif-request-kind` header every request carries (llm/sendCompletion.ts), which is how
 * the simulator tells requests apart. A version is part of every reply's cache key: bump it when a
 * prompt's wording changes (the config fingerprint hashes the rendered text as well,
 * prompts/promptFingerprint.ts, so a forgotten bump still refuses a resume).
 */
export const PROMPT_VERSIONS = {
  instructions: 'fig14-v1',
  refined_instruction: 'refine-v1',
  chat_questions: 'chat-questions-v1',
  constraints: 'fig15-v2',
  compatibility: 'compat-v1',
  verifier_selection: 'fig20-v1',
  answer: 'answer-v1',
  direct_judge: 'fig22-v1',
  /** v2: one reply format (a single "Summary: True/False" line) where v1 asked for a bare word and a Summary line. */
  compare_judge: 'fig21-v2',
  chat_answer: 'multiturn-chat-v1',
  image_tags: 'ram-tags-v1',
} as const;

export type PromptKind = keyof typeof PROMPT_VERSIONS;

export const PROMPT_KINDS = Object.keys(PROMPT_VERSIONS) as PromptKind[];

/** The header naming a request's prompt kind: not part of the body, so never of a reply's cache key. */
export const REQUEST_KIND_HEADER = 'x-mmif-request-kind';

export const isPromptKind = (value: string | null | undefined): value is PromptKind => value != null && Object.hasOwn(PROMPT_VERSIONS, value);

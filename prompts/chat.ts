/** The message shapes prompts produce: OpenAI chat messages whose image is referenced, not embedded. */
import { PROMPT_VERSIONS, type PromptKind } from '../domain/promptKinds.js';
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  text: string;
  /** True on the message that carries the sample's image (sent as an image_url part before the text). */
  withImage?: boolean;
  /**
   * Text that frames the request (a dataset's reference answer, a multi-turn chat's standing rule),
   * sent as its own part between the image and `text`: every stage of a sample then opens with the
   * same image, and a provider's prefix cache serves it (docs/cost.md, *Prompt caching*).
   */
  preface?: string;
}

/** `first` (the image's message) with `frame` as its preface, then `rest`. */
export function framed(frame: string, first: PromptMessage, rest: readonly PromptMessage[] = []): PromptMessage[] {
  return [{ ...first, preface: frame }, ...rest];
}

/**
 * A rendered prompt. `version` names the template revision: it is part of every cache key, so a
 * wording change re-runs the stage instead of reusing answers to the old wording.
 */
export interface RenderedPrompt {
  /** What the request asks for (domain/promptKinds.ts): sent as its `x-mmif-request-kind` header. */
  kind: PromptKind;
  /** The prompt's version (a variant may add a suffix): part of the reply's cache key. */
  version: string;
  messages: PromptMessage[];
}

/** A prompt of `kind` at its version (with a variant's `suffix`). */
export function rendered(kind: PromptKind, messages: PromptMessage[], suffix = ''): RenderedPrompt {
  return { kind, version: PROMPT_VERSIONS[kind] + suffix, messages };
}

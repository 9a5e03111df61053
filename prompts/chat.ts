/** The message shapes prompts produce: OpenAI chat messages whose image is referenced, not embedded. */
import { PROMPT_VERSIONS, type PromptKind } from '../domain/promptKinds.js';
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  text: string;
  /** True on the message that carries the sample's image (sent as an image_url part before the text). */
  withImage?: boolean;
  /**
   * Text sent as its own part between the image and `text` (request layout 2): what layout 1 sent as
   * a system message before the image, so that the image still opens the request.
   */
  preface?: string;
}

/**
 * How a build lays out its requests, fixed when the build is planned (stored with its config,
 * pipeline/planning/planBuild.ts): a layout changes the requests, hence their model-cache keys, so a build
 * planned under an older layout keeps it and pays for nothing again on resume.
 * - 1: the text that frames an answer (a dataset's reference answer, a multi-turn chat's standing
 *   rule) is a system message before the image;
 * - 2: that text is a part of the image's message, after the image (`PromptMessage.preface`), so
 *   every stage of a sample opens with the same image and a provider's prefix cache serves it
 *   (docs/cost.md, *Prompt caching*). Every prompt's text is the same in both; only its place moves.
 * - 3: as 2, and the constraint stage's reply schema names the offered constraint types as an `enum`
 *   (prompts/constraintPrompt.ts), so a server enforcing the schema produces only offered types.
 */
export type RequestLayout = 1 | 2 | 3;

/** The layout of builds planned now. */
export const CURRENT_REQUEST_LAYOUT: RequestLayout = 3;

/** The framing text of a prompt as layout `layout` places it: a leading system message, or the image message's preface. */
export function framed(layout: RequestLayout, frame: string, first: PromptMessage, rest: readonly PromptMessage[] = []): PromptMessage[] {
  return layout === 1 ? [{ role: 'system', text: frame }, first, ...rest] : [{ ...first, preface: frame }, ...rest];
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

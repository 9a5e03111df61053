/** The message shapes prompts produce: OpenAI chat messages whose image is referenced, not embedded. */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant';
  text: string;
  /** True on the message that carries the sample's image (sent as an image_url part before the text). */
  withImage?: boolean;
}

/**
 * A rendered prompt. `version` names the template revision: it is part of every cache key, so a
 * wording change re-runs the stage instead of reusing answers to the old wording.
 */
export interface RenderedPrompt {
  version: string;
  messages: PromptMessage[];
}
